/**
 * The Deno backend's synchronous metadata lookup for the search index's
 * stamps in its workers: `Deno.lstatSync`. Deno's `node:fs` builds a `Stats`
 * over the same call, and stamping the Linux tree with it takes about twice
 * as long (measured: 806 ms against 386 ms for its 78,579 files).
 *
 * @module
 */
import type { StampStat } from "../workers/unit.ts";

/** The metadata of `real`, not following a final link; `null` when it cannot be looked up. */
export function stampStatSync(real: string): StampStat | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(real);
  } catch {
    return null;
  }
  if (info.mtime === null || info.ctime === null) return null;
  return {
    kind: info.isFile ? "file" : info.isDirectory ? "directory" : "other",
    dev: info.dev,
    ino: info.ino ?? NaN,
    size: info.size,
    mtimeMs: info.mtime.getTime(),
    ctimeMs: info.ctime.getTime(),
  };
}
