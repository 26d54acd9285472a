/**
 * The default backends of the npm package: Node's (the package's manifest
 * maps `#default-backends` here; see `defaults/deno.ts`).
 *
 * @module
 */
import type { AsyncFileSystem } from "../filesystem.ts";
import type { WatchTree } from "../watch.ts";
import { watchTreeNode } from "../node/watch.ts";
import type { ProcessBackend } from "../process.ts";
import { createNodeFileSystem } from "../node/filesystem.ts";
import { createNodeProcessBackend } from "../node/process.ts";

/** The default file-system backend: Node's. */
export function defaultFileSystem(): AsyncFileSystem {
  return createNodeFileSystem();
}

/** The default process backend: Node's. */
export function defaultProcessBackend(): ProcessBackend {
  return createNodeProcessBackend();
}

/** The default tree watcher of the search index, which the session hands it: node:fs's. */
export const defaultWatchTree: WatchTree = watchTreeNode;
