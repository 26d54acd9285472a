/**
 * The narrow Deno permission flags for a session: the outer guard under the
 * tools' own boundary.
 *
 * @module
 */

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
 * Under these flags the search workers cannot load their modules, so grep
 * and glob go on on the calling thread (correct, slower); a host that also
 * grants read of this package and its npm dependencies gets the workers back.
 * Deno then refuses, as `runtime_permission_denied`, any access the flags do
 * not cover, even one the tools' own boundary would allow.
 *
 * @example
 * ```ts
 * import { denoPermissionFlags } from "@openwork/tools/deno";
 * const flags = denoPermissionFlags({ workingDirectory: "/srv/repo" });
 * // ["--allow-read=/srv/repo", "--allow-write=/srv/repo", "--allow-run=bash"]
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
  return [
    `--allow-read=${readable.join(",")}`,
    `--allow-write=${writable.join(",")}`,
    `--allow-run=${options.shell ?? "bash"}`,
  ];
}
