/**
 * What the search index needs under Deno's narrow permission flags
 * (`denoPermissionFlags`), and where its watcher puts its fences there.
 *
 * - **Fences.** The watcher writes cookie files in a directory of its own,
 *   outside the working directory. The OS temporary directory is found
 *   through `TMPDIR`, `TMP` and `TEMP`, which the flags do not let the
 *   session read; so the flags grant instead one directory named for the
 *   working directory, {@link indexFenceHome}, which both the host (writing
 *   the flags) and the session (running under them) compute alike, and each
 *   watcher makes its own fence directory inside it.
 * - **Workers.** The index builds and scans in the search workers, and the
 *   watcher adds its watches on a thread of its own; Deno reads a worker's
 *   module only with read access to it, so the flags grant read of this
 *   package's own sources ({@link packageSources}).
 *
 * @module
 */
import "./permission_query.ts"; // registers Deno's answer to permissionState
import { createHash } from "node:crypto";
import { lstat, mkdir, mkdtemp, rm } from "node:fs/promises";
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { temporaryFenceDirectory } from "../watch.ts";
import { type PermissionQuery, permissionState } from "../../runtime/checks.ts";

/**
 * Where the fence directories of a session's search index go when the OS
 * temporary directory cannot be used: a directory of `/tmp` named for the
 * working directory (its real path), shared by every session on that tree.
 * It needs no environment variable, so the host and the session, under the
 * flags, compute the same path.
 *
 * @example
 * ```ts
 * import { indexFenceHome } from "./index_permissions.ts";
 *
 * console.log(indexFenceHome("/srv/repo")); // "/tmp/openwork-index-" and 16 hex digits
 * ```
 */
export function indexFenceHome(workingDirectory: string): string {
  const digest = createHash("sha256").update(workingDirectory).digest("hex").slice(0, 16);
  return `${FENCE_PARENT}/openwork-index-${digest}`;
}

/** The directory {@link indexFenceHome} names its directories in. */
const FENCE_PARENT = "/tmp";

/**
 * The paths the search index needs beyond the working directory, for the
 * permission flags: read and write of the fence home (of its real path too,
 * where `/tmp` is a link), and read of this package's sources when they are
 * files. `workingDirectory` is taken to its real path where the host may.
 *
 * @example
 * ```ts
 * import { indexPermissionPaths } from "./index_permissions.ts";
 *
 * const { read, write } = indexPermissionPaths("/srv/repo");
 * console.log(write.every((path) => read.includes(path))); // true
 * ```
 */
export function indexPermissionPaths(
  workingDirectory: string,
): { readonly read: string[]; readonly write: string[] } {
  const home = indexFenceHome(realOrResolved(workingDirectory));
  const write = [home];
  // The watcher works on the fence directory's real path.
  const real = join(realOrResolved(FENCE_PARENT), home.slice(FENCE_PARENT.length + 1));
  if (real !== home) write.push(real);
  const sources = packageSources();
  return { read: sources === null ? [...write] : [...write, sources], write };
}

/**
 * The folder of this package's sources (`src/`), or `null` when they are
 * not files (a package loaded over the network, whose workers' modules are
 * fetched, not read).
 */
export function packageSources(): string | null {
  const folder = new URL("../../", import.meta.url);
  return folder.protocol === "file:" ? fileURLToPath(folder).replace(/\/$/, "") : null;
}

/**
 * A path's real path, or its absolute form where it cannot be resolved here
 * (or Deno does not grant reading it: asking would prompt on a terminal).
 */
function realOrResolved(path: string): string {
  const state = permissionState({ name: "read", path: resolve(path) });
  if (state !== null && state !== "granted") return resolve(path);
  try {
    return realpathSync(resolve(path));
  } catch {
    return resolve(path);
  }
}

/**
 * Makes the fence directory of a watcher over `root` (a real path): in the
 * OS temporary directory when the runtime grants what finding and using it
 * takes, without a prompt; else in {@link indexFenceHome}, when the runtime
 * grants it (the flags of `denoPermissionFlags` do). The home, shared by
 * every session on the tree, must be a directory (not a link) of the same
 * owner as the fence directory made in it, writable by no one else.
 *
 * @throws {Error} when neither is granted, or the home is not such a directory.
 */
export async function makeFenceDirectory(root: string): Promise<string> {
  if (temporaryDirectoryGranted()) return temporaryFenceDirectory();
  const home = indexFenceHome(root);
  if (!granted({ name: "read", path: home }) || !granted({ name: "write", path: home })) {
    throw new Error(
      "no fence directory for the watcher: the runtime grants neither env access to TMPDIR, " +
        `TMP and TEMP with read and write of the temporary directory, nor read and write of ${home} ` +
        "(denoPermissionFlags grants it); grant one, or pass searchIndex.fenceDirectory, a " +
        "directory outside the working directory that the runtime may read and write",
    );
  }
  try {
    await mkdir(home, { mode: 0o700 });
  } catch (error) {
    if ((error as { code?: unknown }).code !== "EEXIST") throw error;
  }
  const before = await lstat(home);
  if (!before.isDirectory()) throw notPrivate(home, "it is not a directory");
  const fences = await mkdtemp(join(home, "fences-"));
  try {
    const [after, made] = await Promise.all([lstat(home), lstat(fences)]);
    if (!after.isDirectory() || after.ino !== before.ino || after.dev !== before.dev) {
      throw notPrivate(home, "it was replaced");
    }
    if (after.uid !== made.uid) throw notPrivate(home, `it belongs to user ${after.uid}`);
    if ((after.mode & 0o022) !== 0) throw notPrivate(home, "others may write in it");
    return fences;
  } catch (error) {
    await rm(fences, { recursive: true, force: true }).catch(() => {});
    throw error;
  }
}

function notPrivate(home: string, why: string): Error {
  return new Error(
    `the fence home ${home} cannot be used: ${why}; remove it, or pass ` +
      "searchIndex.fenceDirectory, a directory outside the working directory",
  );
}

/** Whether the runtime grants a permission now, without asking. */
function granted(query: PermissionQuery): boolean {
  return permissionState(query) === "granted";
}

/**
 * Whether the OS temporary directory can be found (`node:os` reads
 * `TMPDIR`, then `TMP`, then `TEMP`) and a directory made, resolved and
 * watched in it, all without a prompt.
 */
function temporaryDirectoryGranted(): boolean {
  for (const variable of ["TMPDIR", "TMP", "TEMP"]) {
    if (!granted({ name: "env", variable })) return false;
  }
  const directory = tmpdir();
  return granted({ name: "read", path: directory }) && granted({ name: "write", path: directory });
}
