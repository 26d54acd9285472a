/**
 * The Node backend of {@link AsyncFileSystem}: the shared real backend over
 * `node:fs`, reaching its descriptors through `/proc/self/fd` where there is one.
 *
 * @module
 */
import { readdir } from "node:fs/promises";
import type { AsyncFileSystem, DirEntry } from "../filesystem.ts";
import { kindOf, realFileSystem } from "../real_filesystem.ts";
import { workerSearches } from "../workers/searches.ts";
import { moduleBeside } from "../../runtime/checks.ts";
import { hostGitExcludes } from "../host_text.ts";
import { PROC_SELF_FD } from "../descriptors.ts";

const ROUTES = [PROC_SELF_FD];

/**
 * Makes the Node file-system backend.
 *
 * @example
 * ```ts
 * import { createNodeFileSystem } from "@openwork/tools/node";
 * const filesystem = createNodeFileSystem();
 * ```
 */
export function createNodeFileSystem(): AsyncFileSystem {
  const real = realFileSystem({
    routes: ROUTES,
    list: async (path) =>
      (await readdir(path, { withFileTypes: true })).map((e): DirEntry => ({
        name: e.name,
        kind: kindOf(e),
      })),
  });
  const filesystem = { ...real, readGitExcludes: hostGitExcludes };
  const worker = moduleBeside(import.meta.url, "search_worker");
  return Object.assign(filesystem, workerSearches(filesystem, worker, ROUTES));
}
