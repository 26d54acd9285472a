/**
 * The Node backend of {@link AsyncFileSystem}: the shared real backend over
 * `node:fs`, reaching its descriptors through `/proc/self/fd` where there is
 * one (or a link to it, for a runtime that refuses that path, as Deno does
 * under narrow flags).
 *
 * @module
 */
import { readdir } from "node:fs/promises";
import type { AsyncFileSystem, DirEntry } from "../filesystem.ts";
import { descriptorRoutes, kindOf, realFileSystem } from "../real_filesystem.ts";
import type { DiskFileSystemOptions } from "../real_filesystem.ts";
import { workerSearches } from "../workers/searches.ts";
import { moduleBeside } from "../../runtime/checks.ts";
import { hostGitExcludes } from "../host_text.ts";

/**
 * Makes the Node file-system backend.
 *
 * @example
 * ```ts
 * import { createNodeFileSystem } from "@openwork/tools/node";
 * const filesystem = createNodeFileSystem();
 * ```
 */
export function createNodeFileSystem(options: DiskFileSystemOptions = {}): AsyncFileSystem {
  const routes = descriptorRoutes(options);
  const real = realFileSystem({
    routes,
    list: async (path) =>
      (await readdir(path, { withFileTypes: true })).map((e): DirEntry => ({
        name: e.name,
        kind: kindOf(e),
      })),
  });
  const filesystem = { ...real, readGitExcludes: hostGitExcludes };
  const worker = moduleBeside(import.meta.url, "search_worker");
  return Object.assign(filesystem, workerSearches(filesystem, worker, routes));
}
