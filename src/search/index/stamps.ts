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
  put(stamps, index, source, readAt - RACY_MS, 1000);
}

/**
 * Writes the `index`-th stamp of `stamps` from `source`, its times in units
 * of `unit` milliseconds (rounded down); unknown when either time is not
 * before `settled`.
 */
function put(
  stamps: Float64Array,
  index: number,
  source: StampSource,
  settled: number,
  unit: number,
): void {
  const at = index * STAMP_FIELDS;
  if (!(source.ctimeMs < settled) || !(source.mtimeMs < settled)) {
    stamps.fill(NaN, at, at + STAMP_FIELDS);
    return;
  }
  stamps[at] = source.dev;
  stamps[at + 1] = source.ino;
  stamps[at + 2] = source.size;
  stamps[at + 3] = unit === 1 ? source.mtimeMs : Math.floor(source.mtimeMs / unit);
  stamps[at + 4] = unit === 1 ? source.ctimeMs : Math.floor(source.ctimeMs / unit);
}

/**
 * How close to its listing (or read) an object's change makes its fine
 * stamp racy, in milliseconds, where the file system keeps times finer than
 * a second (well above the coarsest such: exFAT's 10 ms, the kernel's clock
 * tick).
 */
export const FINE_RACY_MS = 100;

/**
 * Writes the fine stamp of a directory listed (or an ignore file read) at
 * `readAt`, as the `index`-th stamp of `stamps`, to be compared only with
 * another taken by the same process (see {@link sameStamp}): its times are
 * kept as given, to the millisecond or finer. A directory's times move
 * whenever an entry is made, removed or renamed in it, a file's on every
 * write, to the file system's clock; a change after the listing can leave
 * them as they were only if it came within the file system's timestamp
 * granularity of the change before it.
 * So the stamp is racy (unknown) when either time is within
 * {@link FINE_RACY_MS} of the listing, or within {@link RACY_MS} where both
 * are whole seconds (a file system that may keep no finer: FAT, ext3,
 * HFS+; a finer one gives a whole second one time in a thousand). A fresh
 * clone of a tree is listed with most directories' stamps known.
 *
 * @example
 * ```ts
 * import { sameStamp, STAMP_FIELDS, writeFineStamp } from "./stamps.ts";
 *
 * const stamps = new Float64Array(2 * STAMP_FIELDS);
 * const fine = { dev: 2049, ino: 7, size: 4096, mtimeMs: 1_000.25, ctimeMs: 1_000.25 };
 * writeFineStamp(stamps, 0, fine, 1_500);
 * writeFineStamp(stamps, 1, fine, 1_600);
 * console.log(sameStamp(stamps, 0, stamps, 1)); // true: half a second after its change
 * const coarse = { ...fine, mtimeMs: 1_000, ctimeMs: 1_000 };
 * writeFineStamp(stamps, 1, coarse, 1_500);
 * console.log(sameStamp(stamps, 0, stamps, 1)); // false: whole seconds, within 5 s
 * ```
 */
export function writeFineStamp(
  stamps: Float64Array,
  index: number,
  source: StampSource,
  readAt: number,
): void {
  const coarse = source.mtimeMs % 1000 === 0 && source.ctimeMs % 1000 === 0;
  put(stamps, index, source, readAt - (coarse ? RACY_MS : FINE_RACY_MS), 1);
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
