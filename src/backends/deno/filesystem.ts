/**
 * The Deno backend of {@link AsyncFileSystem}: the shared real backend over
 * Deno's `node:fs` (real descriptors), listing directories with Deno's own
 * API. A refusal by Deno's permission flags becomes `runtime_permission_denied`.
 * Where the flags refuse `/proc/self/fd`, the backend names its descriptors
 * through a link to it (`../descriptor_link.ts`), made through bash where
 * the flags refuse `Deno.symlink` (it needs unscoped read and write).
 *
 * @module
 */
import "./permission_query.ts"; // registers Deno's answer to permissionState
import type { AsyncFileSystem, DirEntry } from "../filesystem.ts";
import { checkDiskOptions, realFileSystem, routeKeeper } from "../real_filesystem.ts";
import type { DiskFileSystemOptions } from "../real_filesystem.ts";
import { workerSearches } from "../workers/searches.ts";
import { listDirectorySync } from "./list_sync.ts";
import { hostGitExcludes } from "../host_text.ts";
import { kindOf } from "./entry_kind.ts";
import { permissionState } from "../../runtime/checks.ts";
import { HELPER_PATH, helperBash } from "../helper_bash.ts";

/**
 * Makes the Deno file-system backend.
 *
 * @example
 * ```ts
 * import { createDenoFileSystem } from "@openwork/tools/deno";
 * const filesystem = createDenoFileSystem();
 * ```
 */
export function createDenoFileSystem(options: DiskFileSystemOptions = {}): AsyncFileSystem {
  checkDiskOptions("createDenoFileSystem", options);
  const routes = routeKeeper(options, { makeLink, grants });
  const real = realFileSystem({
    routes,
    async list(path) {
      const entries: DirEntry[] = [];
      for await (const entry of Deno.readDir(path)) {
        entries.push({ name: entry.name, kind: kindOf(entry) });
      }
      return entries;
    },
  });
  const filesystem = { ...real, readGitExcludes: hostGitExcludes };
  // grep's and glob's tree searches run in the same worker threads as under Node (Deno runs
  // node:worker_threads), with Deno's own directory listing.
  const worker = options.searchWorker === undefined
    ? new URL("./search_worker.ts", import.meta.url)
    : options.searchWorker;
  return Object.assign(
    filesystem,
    workerSearches(filesystem, worker, () => routes.route(), listDirectorySync),
  );
}

/**
 * Whether Deno's flags already grant `access` to `path` (asked without a
 * prompt: a question on a terminal would hold the session up).
 */
function grants(access: "read" | "write", path: string): boolean {
  return permissionState({ name: access, path }) === "granted";
}

/**
 * Makes a symbolic link: with Deno's own call where the flags allow it, else
 * with `ln` run by bash (the one on the system's directories, see
 * `helperBash`: the flags grant running it), in an environment of its own
 * (reading this process's needs `--allow-env`).
 */
async function makeLink(target: string, path: string): Promise<void> {
  try {
    await Deno.symlink(target, path);
    return;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotCapable)) throw error;
  }
  const { code, stderr } = await new Deno.Command(helperBash(), {
    // -T: a directory at `path` is refused, not entered.
    args: ["-c", 'exec ln -s -T -- "$1" "$2"', "bash", target, path],
    env: { PATH: HELPER_PATH, LC_ALL: "C" },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code === 0) return;
  const message = new TextDecoder().decode(stderr).trim();
  if (message.includes("File exists")) {
    throw Object.assign(new Error(message), { code: "EEXIST" });
  }
  throw new Error(`ln exited with ${code}: ${message}`);
}
