/**
 * Immutable content-index segments: for a batch of files, which files hold
 * each gram of bytes. A gram is three consecutive bytes with ASCII `A`–`Z`
 * folded to `a`–`z`, packed seven bits a byte into one of {@link GRAM_KEYS}
 * keys (exact for ASCII; a collision only adds candidates, it never loses
 * one). A file is a candidate for a literal when it holds every gram of the
 * literal.
 *
 * A segment is plain data (typed arrays and a count), so it crosses from a
 * worker thread with its buffers transferred.
 *
 * @module
 */
import type { IndexQuery } from "./query.ts";

/** Most files in one segment: local ids are 16-bit. */
export const MAX_SEGMENT_FILES = 65535;

/** Bits of a gram key. */
const KEY_BITS = 21; // three 7-bit parts

/** Number of distinct gram keys. */
export const GRAM_KEYS: number = 1 << KEY_BITS;

/** The posting lists of one batch of files. */
export interface Segment {
  /** Number of files; local ids are 0..files-1 in the order they were added. */
  readonly files: number;
  /** Sorted distinct gram keys present in the segment. */
  readonly keys: Uint32Array;
  /** `keys.length + 1` entries: the postings of `keys[i]` are `offsets[i]`..`offsets[i+1]`. */
  readonly offsets: Uint32Array;
  /** Local ids, ascending within each key. */
  readonly postings: Uint16Array;
}

/**
 * Each byte's part of a gram key: ASCII letters folded to lower case, then
 * the low seven bits (a byte of 0x80 and above shares its part with an ASCII
 * byte: the collision only adds candidates).
 */
const FOLD7 = new Uint8Array(256);
for (let byte = 0; byte < 256; byte++) {
  FOLD7[byte] = (byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte) & 0x7f;
}

/** Keeps the last three bytes' parts of a rolling key. */
const KEY_MASK = GRAM_KEYS - 1;

const EMPTY_IDS = new Uint16Array(0);

/** Initial room for (file, key) pairs in a builder: 4 MiB. */
const INITIAL_PAIRS = 1 << 20;
/** Most room for pairs a builder keeps between segments: 64 MiB. */
const RETAINED_PAIRS = 1 << 24;
/** Below this many pairs, a segment's keys are listed from its pairs. */
const SMALL_SEGMENT_PAIRS = 1 << 17;

/**
 * Builds segments one file at a time. Its tables (12 MiB, plus 4 bytes per
 * distinct (file, gram) pair of the segment being built, see
 * {@link SegmentBuilder.pairs}) are allocated once and reused from segment to
 * segment, so a worker keeps one.
 *
 * @example
 * ```ts
 * import { SegmentBuilder, segmentCandidates } from "./segment.ts";
 * const builder = new SegmentBuilder();
 * builder.add(new TextEncoder().encode("hello world\n"));
 * builder.add(new TextEncoder().encode("goodbye\n"));
 * const segment = builder.finish();
 * const literal = new TextEncoder().encode("World");
 * console.log(segmentCandidates(segment, { op: "literal", bytes: literal })); // Uint16Array [0]
 * ```
 */
export class SegmentBuilder {
  /** Per key: local id + 1 of the last file that held it (dedupes within a file). */
  #seen = new Uint16Array(GRAM_KEYS);
  /** Per key: files of the current segment that hold it. */
  #counts = new Uint32Array(GRAM_KEYS);
  /** The distinct keys of every file added, file after file. */
  #pairs = new Uint32Array(INITIAL_PAIRS);
  #pairCount = 0;
  /** Where each file's keys start in `#pairs` (one more entry than files). */
  #starts: number[] = [0];

  /** Files added since the last {@link SegmentBuilder.finish}. */
  get files(): number {
    return this.#starts.length - 1;
  }

  /**
   * Distinct (file, key) pairs added since the last finish: the postings the
   * segment will hold (2 bytes each) and the builder's transient table (4
   * bytes each), a measure for when to finish a segment.
   */
  get pairs(): number {
    return this.#pairCount;
  }

  /**
   * Indexes one file's bytes as the next local id and returns that id;
   * throws a `RangeError` past {@link MAX_SEGMENT_FILES} files.
   */
  add(bytes: Uint8Array): number {
    const id = this.#starts.length - 1;
    if (id >= MAX_SEGMENT_FILES) {
      throw new RangeError(`a segment holds at most ${MAX_SEGMENT_FILES} files`);
    }
    const stamp = id + 1;
    const seen = this.#seen;
    const counts = this.#counts;
    const fold = FOLD7;
    const length = bytes.length;
    // A file adds at most one pair per gram and per key: make room once.
    let count = this.#pairCount;
    const most = Math.min(length - 2, GRAM_KEYS);
    if (most > 0 && count + most > this.#pairs.length) this.#grow(count + most);
    const pairs = this.#pairs;
    if (length >= 3) {
      let key = (fold[bytes[0]] << 7) | fold[bytes[1]];
      for (let i = 2; i < length; i++) {
        key = ((key << 7) | fold[bytes[i]]) & KEY_MASK;
        if (seen[key] !== stamp) {
          seen[key] = stamp;
          counts[key]++;
          pairs[count++] = key;
        }
      }
    }
    this.#pairCount = count;
    this.#starts.push(count);
    return id;
  }

  #grow(needed: number): void {
    let size = this.#pairs.length * 2;
    while (size < needed) size *= 2;
    const pairs = new Uint32Array(size);
    pairs.set(this.#pairs.subarray(0, this.#pairCount));
    this.#pairs = pairs;
  }

  /** The segment of the files added since the last finish; the builder is then empty. */
  finish(): Segment {
    const counts = this.#counts;
    const seen = this.#seen;
    const pairs = this.#pairs;
    const pairCount = this.#pairCount;
    const files = this.files;
    // The distinct keys, ascending. A small segment (a changed file, say)
    // lists them from its pairs instead of scanning every key.
    let keys: Uint32Array;
    if (pairCount < SMALL_SEGMENT_PAIRS) {
      const listed: number[] = [];
      for (let i = 0; i < pairCount; i++) {
        const key = pairs[i];
        if (seen[key] === 0) continue;
        seen[key] = 0;
        listed.push(key);
      }
      keys = Uint32Array.from(listed).sort();
    } else {
      let distinct = 0;
      for (let key = 0; key < GRAM_KEYS; key++) if (counts[key] !== 0) distinct++;
      keys = new Uint32Array(distinct);
      for (let key = 0, index = 0; key < GRAM_KEYS; key++) {
        if (counts[key] !== 0) keys[index++] = key;
      }
      seen.fill(0);
    }
    // `counts` becomes each key's next write position in `postings`.
    const offsets = new Uint32Array(keys.length + 1);
    let total = 0;
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index];
      offsets[index] = total;
      total += counts[key];
      counts[key] = offsets[index];
    }
    offsets[keys.length] = total;
    const postings = new Uint16Array(total);
    const starts = this.#starts;
    for (let id = 0; id < files; id++) {
      for (let i = starts[id], end = starts[id + 1]; i < end; i++) {
        postings[counts[pairs[i]]++] = id;
      }
    }
    for (let index = 0; index < keys.length; index++) counts[keys[index]] = 0;
    this.#pairCount = 0;
    this.#starts = [0];
    // One very large segment must not leave its transient table behind.
    if (pairs.length > RETAINED_PAIRS) this.#pairs = new Uint32Array(INITIAL_PAIRS);
    return { files, keys, offsets, postings };
  }
}

/** Resident bytes of a segment's tables. */
export function segmentMemory(segment: Segment): number {
  return segment.keys.byteLength + segment.offsets.byteLength + segment.postings.byteLength + 64;
}

/**
 * Ascending local ids of the files that may satisfy `query`; `null` when the
 * query does not narrow (every file is a candidate).
 *
 * @example
 * ```ts
 * import { SegmentBuilder, segmentCandidates } from "./segment.ts";
 * const builder = new SegmentBuilder();
 * builder.add(new TextEncoder().encode("spin_lock_irqsave(&lock, flags);\n"));
 * const segment = builder.finish();
 * console.log(segmentCandidates(segment, { op: "all" })); // null
 * ```
 */
export function segmentCandidates(segment: Segment, query: IndexQuery): Uint16Array | null {
  switch (query.op) {
    case "all":
      return null;
    case "literal":
      return literalCandidates(segment, query.bytes);
    case "and": {
      const lists: Uint16Array[] = [];
      for (const part of query.parts) {
        const ids = segmentCandidates(segment, part);
        if (ids === null) continue;
        if (ids.length === 0) return EMPTY_IDS;
        lists.push(ids);
      }
      return lists.length === 0 ? null : intersectAll(lists);
    }
    case "or": {
      let union: Uint16Array = EMPTY_IDS;
      for (const part of query.parts) {
        const ids = segmentCandidates(segment, part);
        if (ids === null) return null;
        union = unite(union, ids);
      }
      return union;
    }
  }
}

function literalCandidates(segment: Segment, bytes: Uint8Array): Uint16Array | null {
  if (bytes.length < 3) return null;
  const keys = new Set<number>();
  let key = (FOLD7[bytes[0]] << 7) | FOLD7[bytes[1]];
  for (let i = 2; i < bytes.length; i++) {
    key = ((key << 7) | FOLD7[bytes[i]]) & KEY_MASK;
    keys.add(key);
  }
  const lists: Uint16Array[] = [];
  for (const key of keys) {
    const at = findKey(segment.keys, key);
    if (at < 0) return EMPTY_IDS;
    lists.push(segment.postings.subarray(segment.offsets[at], segment.offsets[at + 1]));
  }
  return intersectAll(lists);
}

function findKey(keys: Uint32Array, key: number): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (keys[mid] < key) low = mid + 1;
    else high = mid;
  }
  return low < keys.length && keys[low] === key ? low : -1;
}

/** The ids in every list, shortest list first so the work stays small. */
function intersectAll(lists: Uint16Array[]): Uint16Array {
  lists.sort((a, b) => a.length - b.length);
  if (lists.length === 1) return lists[0].slice();
  let result = lists[0];
  for (let i = 1; i < lists.length && result.length > 0; i++) result = intersect(result, lists[i]);
  return result;
}

function intersect(small: Uint16Array, large: Uint16Array): Uint16Array {
  const out = new Uint16Array(small.length);
  let n = 0;
  let j = 0;
  for (let i = 0; i < small.length; i++) {
    const id = small[i];
    // Galloping would help only for very uneven lists; a merge walk is enough here.
    while (j < large.length && large[j] < id) j++;
    if (j === large.length) break;
    if (large[j] === id) out[n++] = id;
  }
  return out.subarray(0, n);
}

function unite(a: Uint16Array, b: Uint16Array): Uint16Array {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out = new Uint16Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    const x = a[i];
    const y = b[j];
    if (x < y) out[n++] = a[i++];
    else if (y < x) out[n++] = b[j++];
    else {
      out[n++] = x;
      i++;
      j++;
    }
  }
  while (i < a.length) out[n++] = a[i++];
  while (j < b.length) out[n++] = b[j++];
  return out.subarray(0, n);
}
