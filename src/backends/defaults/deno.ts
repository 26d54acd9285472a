/**
 * The default backends of the sources as Deno runs them and of the JSR
 * package: Deno's under Deno, Node's elsewhere. `deno.json` maps
 * `#default-backends` here; the npm package's manifest maps it to
 * `defaults/node.ts`, so the npm build compiles the same sources and never
 * references Deno.
 *
 * @module
 */
import "../deno/permission_query.ts"; // registers Deno's answer to permissionState
import type { AsyncFileSystem } from "../filesystem.ts";
import type { WatchTree } from "../watch.ts";
import { watchTreeNode } from "../node/watch.ts";
import { watchTreeDeno } from "../deno/watch.ts";
import type { ProcessBackend } from "../process.ts";
import { createDenoFileSystem } from "../deno/filesystem.ts";
import { createDenoProcessBackend } from "../deno/process.ts";
import { createNodeFileSystem } from "../node/filesystem.ts";
import { createNodeProcessBackend } from "../node/process.ts";
import { isDeno } from "../../runtime/checks.ts";

/** The default file-system backend of this runtime. */
export function defaultFileSystem(): AsyncFileSystem {
  return isDeno ? createDenoFileSystem() : createNodeFileSystem();
}

/** The default process backend of this runtime. */
export function defaultProcessBackend(): ProcessBackend {
  return isDeno ? createDenoProcessBackend() : createNodeProcessBackend();
}

/**
 * The default tree watcher of the search index, which the session hands it:
 * Deno's under Deno (whatever the file-system backend), else node:fs's.
 */
export const defaultWatchTree: WatchTree = (root, handlers, options) =>
  isDeno ? watchTreeDeno(root, handlers, options) : watchTreeNode(root, handlers, options);
