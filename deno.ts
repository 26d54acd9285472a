/**
 * The Deno backends (a session's defaults under Deno), and the permission
 * flags a Deno host runs a session with: every flag the tools need, the
 * file backend's link to `/proc/self/fd` included, and nothing else.
 *
 * @example
 * ```ts
 * import { denoPermissionFlags } from "@openwork/tools/deno";
 *
 * const flags = denoPermissionFlags({ workingDirectory: "/path/to/repo" });
 * // ["--allow-read=/path/to/repo,/tmp/openwork-tools-fd-1000,/tmp/openwork-index-…,<package>/src,
 * //    /usr/bin/bash,/usr/bin/bwrap",
 * //  "--allow-write=/path/to/repo,/tmp/openwork-tools-fd-1000,/tmp/openwork-index-…",
 * //  "--allow-run=/usr/bin/bash,/usr/bin/bwrap", "--allow-sys=uid", "--no-prompt"]
 * ```
 *
 * @module
 */
export { createDenoFileSystem } from "./src/backends/deno/filesystem.ts";
export type { DiskFileSystemOptions } from "./src/backends/real_filesystem.ts";
export { createDenoProcessBackend } from "./src/backends/deno/process.ts";
export { denoPermissionFlags } from "./src/backends/deno/flags.ts";
export type { DenoFlagOptions } from "./src/backends/deno/flags.ts";
