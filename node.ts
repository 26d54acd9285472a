/**
 * The Node backends, for a host that picks them itself: a session's
 * defaults under Node, and usable under Deno too (`node:` built-ins).
 *
 * @example
 * ```ts
 * import { createSession } from "@openwork/tools";
 * import { createNodeFileSystem, createNodeProcessBackend } from "@openwork/tools/node";
 *
 * const session = await createSession({
 *   workingDirectory: "/path/to/repo",
 *   filesystem: createNodeFileSystem(),
 *   processes: createNodeProcessBackend({ graceMs: 500 }),
 * });
 * ```
 *
 * @module
 */
export { createNodeFileSystem } from "./src/backends/node/filesystem.ts";
export type { DiskFileSystemOptions } from "./src/backends/real_filesystem.ts";
export { createNodeProcessBackend } from "./src/backends/node/process.ts";
