/**
 * The Deno backends (a session's defaults under Deno), and the narrow
 * permission flags a Deno host can run a session with.
 *
 * @example
 * ```ts
 * import { denoPermissionFlags } from "@openwork/tools/deno";
 *
 * const flags = denoPermissionFlags({ workingDirectory: "/path/to/repo" });
 * // ["--allow-read=/path/to/repo,/tmp/openwork-index-…,<package>/src",
 * //  "--allow-write=/path/to/repo,/tmp/openwork-index-…", "--allow-run=bash"]
 * ```
 *
 * @module
 */
export { createDenoFileSystem } from "./src/backends/deno/filesystem.ts";
export type { DiskFileSystemOptions } from "./src/backends/real_filesystem.ts";
export { createDenoProcessBackend } from "./src/backends/deno/process.ts";
export { denoPermissionFlags } from "./src/backends/deno/flags.ts";
export type { DenoFlagOptions } from "./src/backends/deno/flags.ts";
