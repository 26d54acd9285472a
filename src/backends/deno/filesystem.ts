/**
 * The Deno backend of {@link AsyncFileSystem}, on Deno's own file APIs. A
 * refusal by Deno's permission flags becomes `runtime_permission_denied`.
 *
 * @module
 */
import type { AsyncFileSystem, DirEntry, FileInfo } from "../filesystem.ts";
import { permissionBits, realFileSystem } from "../real_filesystem.ts";
import type { FilePrimitives } from "../real_filesystem.ts";
import { workerSearches } from "../workers/searches.ts";
import { hostGitExcludes } from "../host_text.ts";
import { kindOf } from "./entry_kind.ts";

function infoOf(info: Deno.FileInfo): FileInfo {
  return { kind: kindOf(info), size: info.size, mode: permissionBits(info.mode) };
}

const DENO_FILES: FilePrimitives = {
  realPath: (path) => Deno.realPath(path),
  lstat: async (path) => infoOf(await Deno.lstat(path)),
  stat: async (path) => infoOf(await Deno.stat(path)),
  async readDir(path) {
    const entries: DirEntry[] = [];
    for await (const entry of Deno.readDir(path)) {
      entries.push({ name: entry.name, kind: kindOf(entry) });
    }
    return entries;
  },
  async openRead(path) {
    const file = await Deno.open(path, { read: true });
    return {
      read: async (into) => (await file.read(into)) ?? 0,
      stat: async () => infoOf(await file.stat()),
      close: () => file.close(),
    };
  },
  writeNew: (path, data, mode) => Deno.writeFile(path, data, { createNew: true, mode }),
  chmod: (path, mode) => Deno.chmod(path, mode),
  rename: (from, to) => Deno.rename(from, to),
  mkdir: (path) => Deno.mkdir(path),
  remove: (path) => Deno.remove(path),
};

/**
 * Makes the Deno file-system backend.
 *
 * @example
 * ```ts
 * import { createDenoFileSystem } from "@openwork/tools/deno";
 * const filesystem = createDenoFileSystem();
 * ```
 */
export function createDenoFileSystem(): AsyncFileSystem {
  const filesystem = { ...realFileSystem(DENO_FILES), readGitExcludes: hostGitExcludes };
  // grep's and glob's tree searches run in the same worker threads as under Node (Deno runs
  // node:worker_threads), with Deno's own directory listing.
  return Object.assign(
    filesystem,
    workerSearches(filesystem, new URL("./search_worker.ts", import.meta.url)),
  );
}
