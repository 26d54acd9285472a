/**
 * Where a search index's cache file lives: the default directory for a
 * session's environment, and the file's name for a working directory. Pure
 * functions of their arguments, so that a runtime adapter can grant the
 * place before a session starts (`backends/deno/flags.ts`); the checks that
 * make the place private are the index's (`index/cache_directory.ts`).
 *
 * @module
 */
import { createHash } from "node:crypto";

/** The folder below the user's cache directory. */
const CACHE_FOLDER = "openwork-tools/search-index";

/**
 * The default cache directory for a session's environment, or `null` when
 * it names no absolute cache or home directory.
 *
 * @example
 * ```ts
 * import { defaultCacheDirectory } from "./cache_location.ts";
 *
 * console.log(defaultCacheDirectory({ HOME: "/home/ann" }));
 * // "/home/ann/.cache/openwork-tools/search-index"
 * console.log(defaultCacheDirectory({ HOME: "/home/ann", XDG_CACHE_HOME: "/var/cache/ann" }));
 * // "/var/cache/ann/openwork-tools/search-index"
 * ```
 */
export function defaultCacheDirectory(
  environment: Readonly<Record<string, string>>,
): string | null {
  const cache = environment.XDG_CACHE_HOME;
  if (cache?.startsWith("/")) return `${trimSlash(cache)}/${CACHE_FOLDER}`;
  const home = environment.HOME;
  if (home?.startsWith("/")) return `${trimSlash(home)}/.cache/${CACHE_FOLDER}`;
  return null;
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.replace(/\/+$/, "") || "/" : path;
}

/**
 * The name of the cache file of the working directory whose real path is
 * `root`.
 *
 * @example
 * ```ts
 * import { cacheFileName } from "./cache_location.ts";
 *
 * console.log(cacheFileName("/srv/repo")); // "index-" and 32 hex digits, then ".bin"
 * ```
 */
export function cacheFileName(root: string): string {
  return `index-${createHash("sha256").update(root).digest("hex").slice(0, 32)}.bin`;
}
