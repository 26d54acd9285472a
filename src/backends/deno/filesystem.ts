/**
 * The Deno backend of {@link AsyncFileSystem}: the shared real backend over
 * Deno's `node:fs` (real descriptors), listing directories with Deno's own
 * API. A refusal by Deno's permission flags becomes `runtime_permission_denied`.
 *
 * @module
 */
import type { AsyncFileSystem, DirEntry } from "../filesystem.ts";
import { checkDiskOptions, descriptorRoutes, realFileSystem } from "../real_filesystem.ts";
import type { DiskFileSystemOptions } from "../real_filesystem.ts";
import { workerSearches } from "../workers/searches.ts";
import { hostGitExcludes } from "../host_text.ts";
import { kindOf } from "./entry_kind.ts";

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
  const routes = descriptorRoutes(options);
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
  return Object.assign(filesystem, workerSearches(filesystem, worker, routes));
}
