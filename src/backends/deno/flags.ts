/**
 * The narrow Deno permission flags for a session: the outer guard under the
 * tools' own boundary.
 *
 * @module
 */
import { indexPermissionPaths } from "./index_permissions.ts";

/** What {@link denoPermissionFlags} needs to know. */
export interface DenoFlagOptions {
  /** The working directory: readable and writable. */
  readonly workingDirectory: string;
  /** The user skill root, readable only, or `null`. */
  readonly skillRoot?: string | null;
  /** The shell `bash` runs (default `bash`). */
  readonly shell?: string;
  /**
   * A symbolic link to `/proc/self/fd` that the host made for the file
   * backend (`createDenoFileSystem({ descriptorLink })`). Deno refuses
   * `/proc/self/fd` paths without `--allow-all`; read and write of the link
   * let the backend name its own open descriptors through it, which is what
   * makes its file operations race-free. Paths through it reach only
   * objects the backend has already opened and verified.
   */
  readonly descriptorLink?: string;
}

/**
 * The flags a host passes to `deno run` so that the tools work and nothing
 * else is granted: read of the roots, write of the working directory, run of
 * the shell, and read and write of the descriptor link if there is one.
 * For the search workers and the search index, read of this package's own
 * sources (the workers' modules) and read and write of the index's fence
 * home, a directory of `/tmp` named for the working directory (give its real
 * path). Deno then refuses, as `runtime_permission_denied`, any access the
 * flags do not cover, even one the tools' own boundary would allow.
 *
 * @example
 * ```ts
 * import { denoPermissionFlags } from "@openwork/tools/deno";
 * const flags = denoPermissionFlags({ workingDirectory: "/srv/repo" });
 * // ["--allow-read=/srv/repo,/tmp/openwork-index-…,<package>/src",
 * //  "--allow-write=/srv/repo,/tmp/openwork-index-…", "--allow-run=bash"]
 * ```
 */
export function denoPermissionFlags(options: DenoFlagOptions): string[] {
  const readable = [options.workingDirectory];
  if (options.skillRoot) readable.push(options.skillRoot);
  const writable = [options.workingDirectory];
  if (options.descriptorLink) {
    readable.push(options.descriptorLink);
    writable.push(options.descriptorLink);
  }
  // The search index: its fence home, and its workers' modules (see `index_permissions.ts`).
  const index = indexPermissionPaths(options.workingDirectory);
  readable.push(...index.read);
  writable.push(...index.write);
  return [
    `--allow-read=${readable.join(",")}`,
    `--allow-write=${writable.join(",")}`,
    `--allow-run=${options.shell ?? "bash"}`,
  ];
}
