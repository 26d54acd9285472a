/**
 * File stamps: what the search index records of each file it indexes, so
 * that when its watcher may have missed changes it can tell, without
 * reading a file again, whether the file is the one it read.
 *
 * A stamp is the file's device, inode, size, modification and change times
 * (what git's index trusts), taken from the descriptor the content was read
 * through. The change time moves on every write and cannot be set back, so
 * a file written since has another stamp, unless the write came within the
 * file system's timestamp granularity of the read: a stamp whose change time
 * is that close to the moment of the read is *racy* and recorded as unknown,
 * and a file with an unknown stamp is always read again.
 *
 * The times are kept in whole seconds: Deno's `node:fs` gives them so, Node's
 * to the microsecond, and a stamp must be the same in both (a cache written
 * by one runtime is read by the other). Seconds lose nothing: a stamp is
 * known only when the change time is more than {@link RACY_MS} before the
 * read, so a later write moves the change time by whole seconds.
 *
 * @module
 */

/** Numbers per stamp, in a `Float64Array` of stamps. */
export const STAMP_FIELDS = 5;

/**
 * How close to its read a file's change time makes its stamp racy, in
 * milliseconds: well above the coarsest timestamps in use (FAT's 2 s) and
 * a clock that lags the runtime's.
 */
export const RACY_MS = 5_000;

/** The part of a file's metadata a stamp is made of (as `fs.fstatSync` gives it). */
export interface StampSource {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

/**
 * Writes the stamp of a file read at `readAt` (milliseconds since the epoch,
 * taken after the read) as the `index`-th stamp of `stamps`: unknown (NaN)
 * when it is racy.
 *
 * @example
 * ```ts
 * import { sameStamp, STAMP_FIELDS, writeStamp } from "./stamps.ts";
 *
 * const stamps = new Float64Array(2 * STAMP_FIELDS);
 * const old = { dev: 2049, ino: 7, size: 3, mtimeMs: 1_000, ctimeMs: 1_000 };
 * writeStamp(stamps, 0, old, 60_000);
 * writeStamp(stamps, 1, old, 60_000);
 * console.log(sameStamp(stamps, 0, stamps, 1)); // true
 * writeStamp(stamps, 1, old, 2_000); // read just after its last change: racy
 * console.log(sameStamp(stamps, 0, stamps, 1)); // false
 * ```
 */
export function writeStamp(
  stamps: Float64Array,
  index: number,
  source: StampSource,
  readAt: number,
): void {
  const at = index * STAMP_FIELDS;
  if (!(source.ctimeMs < readAt - RACY_MS) || !(source.mtimeMs < readAt - RACY_MS)) {
    stamps.fill(NaN, at, at + STAMP_FIELDS);
    return;
  }
  stamps[at] = source.dev;
  stamps[at + 1] = source.ino;
  stamps[at + 2] = source.size;
  stamps[at + 3] = Math.floor(source.mtimeMs / 1000);
  stamps[at + 4] = Math.floor(source.ctimeMs / 1000);
}

/** Whether two stamps are known and the same (an unknown stamp equals none). */
export function sameStamp(
  a: Float64Array,
  aIndex: number,
  b: Float64Array,
  bIndex: number,
): boolean {
  const i = aIndex * STAMP_FIELDS;
  const j = bIndex * STAMP_FIELDS;
  for (let k = 0; k < STAMP_FIELDS; k++) {
    // NaN is never equal: an unknown stamp matches nothing.
    if (!(a[i + k] === b[j + k])) return false;
  }
  return true;
}
