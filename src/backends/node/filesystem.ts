/**
 * The Node backend of {@link AsyncFileSystem}: the shared real backend over
 * `node:fs`, reaching its descriptors through `/proc/self/fd` where there is
 * one (or a link to it, for a runtime that refuses that path, as Deno does
 * under narrow flags: the link is made with `node:fs`, which Deno allows
 * only under unscoped read and write flags).
 *
 * @module
 */
import { existsSync } from "node:fs";
import { readdir, symlink } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { AsyncFileSystem, DirEntry } from "../filesystem.ts";
import { checkDiskOptions, kindOf, realFileSystem, routeKeeper } from "../real_filesystem.ts";
import type { DiskFileSystemOptions } from "../real_filesystem.ts";
import { workerSearches } from "../workers/searches.ts";
import { listDirectorySync } from "./list_sync.ts";
import { isDeno, moduleBeside } from "../../runtime/checks.ts";
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
  checkDiskOptions("createNodeFileSystem", options);
  const routes = routeKeeper(options, { makeLink: symlink });
  const real = realFileSystem({
    routes,
    list: async (path) =>
      (await readdir(path, { withFileTypes: true })).map((e): DirEntry => ({
        name: e.name,
        kind: kindOf(e),
      })),
  });
  const filesystem = { ...real, readGitExcludes: hostGitExcludes };
  const worker = options.searchWorker === undefined ? ownWorker() : options.searchWorker;
  return Object.assign(
    filesystem,
    workerSearches(filesystem, worker, () => routes.route(), listDirectorySync),
  );
}

/**
 * The search worker beside this module, or `null` where Node has no file
 * there: a host that bundled the package into one file has only the bundle.
 * (Deno loads modules whatever its read permissions, which may forbid
 * looking; a missing worker then fails to start and the search stays here.)
 */
function ownWorker(): URL | null {
  const worker = moduleBeside(import.meta.url, "search_worker");
  if (isDeno || worker.protocol !== "file:") return worker;
  return existsSync(fileURLToPath(worker)) ? worker : null;
}
