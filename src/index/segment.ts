/**
 * Stand-in: a simple segment of trigram posting lists.
 *
 * @module
 */
import type { IndexQuery } from "./query.ts";

/** Most files in a segment. */
export const MAX_SEGMENT_FILES = 65535;

/** An immutable index of a batch of files. */
export interface Segment {
  /** Files in it. */
  readonly files: number;
  /** Sorted distinct gram keys. */
  readonly keys: Uint32Array;
  /** Posting offsets per key. */
  readonly offsets: Uint32Array;
  /** Local ids. */
  readonly postings: Uint16Array;
}

const fold = (b: number) => (b >= 65 && b <= 90 ? b + 32 : b);

/** Builds segments. */
export class SegmentBuilder {
  #files: Set<number>[] = [];
  /** Adds a file. */
  add(bytes: Uint8Array): number {
    const grams = new Set<number>();
    for (let i = 2; i < bytes.length; i++) {
      grams.add((fold(bytes[i - 2]) << 16) | (fold(bytes[i - 1]) << 8) | fold(bytes[i]));
    }
    this.#files.push(grams);
    return this.#files.length - 1;
  }
  /** The segment. */
  finish(): Segment {
    const lists = new Map<number, number[]>();
    this.#files.forEach((grams, id) => {
      for (const g of grams) {
        let list = lists.get(g);
        if (list === undefined) lists.set(g, list = []);
        list.push(id);
      }
    });
    const keys = Uint32Array.from([...lists.keys()].sort((a, b) => a - b));
    const offsets = new Uint32Array(keys.length + 1);
    const postings: number[] = [];
    keys.forEach((k, i) => {
      postings.push(...lists.get(k)!);
      offsets[i + 1] = postings.length;
    });
    const files = this.#files.length;
    this.#files = [];
    return { files, keys, offsets, postings: Uint16Array.from(postings) };
  }
}

/** Resident bytes. */
export function segmentMemory(s: Segment): number {
  return s.keys.byteLength + s.offsets.byteLength + s.postings.byteLength;
}

function lookup(s: Segment, key: number): Uint16Array {
  let lo = 0, hi = s.keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (s.keys[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  if (lo < s.keys.length && s.keys[lo] === key) {
    return s.postings.subarray(s.offsets[lo], s.offsets[lo + 1]);
  }
  return new Uint16Array(0);
}

function evaluate(s: Segment, q: IndexQuery): Set<number> | null {
  if (q.op === "all") return null;
  if (q.op === "literal") {
    let out: Set<number> | null = null;
    for (let i = 2; i < q.bytes.length; i++) {
      const key = (fold(q.bytes[i - 2]) << 16) | (fold(q.bytes[i - 1]) << 8) | fold(q.bytes[i]);
      const list = new Set(lookup(s, key));
      out = out === null
        ? list
        : new Set([...(out as Set<number>)].filter((x: number) => list.has(x)));
    }
    return out;
  }
  const parts = q.parts.map((p) => evaluate(s, p));
  if (q.op === "and") {
    let out: Set<number> | null = null;
    for (const p of parts) {
      if (p !== null) {
        out = out === null ? p : new Set([...(out as Set<number>)].filter((x: number) => p.has(x)));
      }
    }
    return out;
  }
  if (parts.some((p) => p === null)) return null;
  const out = new Set<number>();
  for (const p of parts) for (const x of p!) out.add(x);
  return out;
}

/** Candidates. */
export function segmentCandidates(s: Segment, q: IndexQuery): Uint16Array | null {
  const set = evaluate(s, q);
  return set === null ? null : Uint16Array.from([...set].sort((a, b) => a - b));
}
