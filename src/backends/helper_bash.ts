/**
 * The bash the local backends run their own scripts with (ending a
 * process group, reading the process table, making the file backend's
 * link), where a session has not given its own: looked up on a `PATH` of
 * the system's directories alone, never the session's, so that nothing a
 * repository puts on the session's `PATH` runs as one of them.
 *
 * @module
 */
import { trustedProgram } from "../runtime/platform.ts";

/** The `PATH` the local backends' own scripts run with, and their bash is found on. */
export const HELPER_PATH = "/usr/local/bin:/usr/bin:/bin";

let found: string | null = null;

/**
 * The bash on {@link HELPER_PATH}, by the path it may be started by (its
 * real path, or the path Deno granted running it by: see `trustedProgram`),
 * looked up once per process; `bash` where the runtime lets no directory
 * of it be read (the runtime then looks it up on that `PATH`, which the
 * scripts are given).
 */
export function helperBash(): string {
  found ??= trustedProgram({ PATH: HELPER_PATH }, "bash", []) ?? "bash";
  return found;
}
