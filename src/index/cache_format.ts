/**
 * The search index's cache file: its entries, the stamps of its files and
 * its segments, written so that a new process can take them up without
 * reading the tree's content again.
 *
 * The layout is a magic, a format version ({@link CACHE_FORMAT_VERSION}), a
 * JSON header of counts and the root it was made for, then the tables as
 * raw little-endian typed arrays, each at an offset that is a multiple of 8
 * (so loading makes views on the bytes read, not copies), and last a
 * SHA-256 of everything before it. A file that is not exactly this (cut
 * short, a byte changed, another version, another root, tables that do not
 * fit together) is refused as a whole; what it says of the tree is proved
 * again by the index before it answers from it (see `search_index.ts`).
 *
 * @module
 */
import { createHash } from "node:crypto";
import { walkOrder } from "../search/walk.ts";
import { GRAM_KEYS, MAX_SEGMENT_FILES } from "../search/index/segment.ts";
import type { Segment } from "../search/index/segment.ts";
import { STAMP_FIELDS } from "../search/index/stamps.ts";
import { IN_NO_SEGMENT, NOT_INDEXED } from "./entries.ts";
import type { PackedPaths } from "../search/index/packed_paths.ts";

/** The version of the layout; a cache of any other version is refused (and the index built). */
export const CACHE_FORMAT_VERSION = 1;

/** The first bytes of a cache file. */
const MAGIC = new TextEncoder().encode("owt-idx\n");
/** Bytes of the checksum at the end. */
const CHECKSUM_BYTES = 32;
/** Bytes hashed between two turns given to the event loop. */
const HASH_SLICE = 16 * 1024 * 1024;
/** Most bytes of a header: far more than any real one. */
const MAX_HEADER = 1024 * 1024;

/** A segment of a cached index, and the file number of each of its local ids (-1: dead). */
export interface CachedSegment {
  /** The posting lists. */
  readonly segment: Segment;
  /** Per local id, the number of its file (its rank among the files, in walk order), or -1. */
  readonly ids: Int32Array;
}

/** What a cache file holds: an index of the tree at `root`, as it was when written. */
export interface CachedIndex {
  /** The real path of the working directory it indexes. */
  readonly root: string;
  /**
   * Every entry but the working directory, in walk order, packed: a load
   * makes no string of a path until it looks at it, and keeps none.
   */
  readonly entries: PackedPaths;
  /** Per entry, 1 for a file, 0 for a directory; files are numbered in this order. */
  readonly kinds: Uint8Array;
  /** Per file, its segment, {@link IN_NO_SEGMENT} or {@link NOT_INDEXED}. */
  readonly fileSegments: Int32Array;
  /** Per file in a segment, its local id there (0 otherwise). */
  readonly fileLocals: Int32Array;
  /** Per file in a segment, the bytes indexed (0 otherwise). */
  readonly fileBytes: Int32Array;
  /** Per file, its stamp as its content was read (`STAMP_FIELDS` numbers, NaN: unknown). */
  readonly stamps: Float64Array;
  /** The segments. */
  readonly segments: readonly CachedSegment[];
}

interface Header {
  readonly root: string;
  readonly stampFields: number;
  readonly entries: number;
  readonly files: number;
  readonly names: number;
  /** Per segment: files, keys, postings. */
  readonly segments: readonly (readonly [number, number, number])[];
}

function padding(length: number): number {
  return (8 - (length % 8)) % 8;
}

function bytesOf(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/** Lets the event loop run between slices of long work. */
function turn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** SHA-256 of `chunks`, a slice at a time, the event loop running between slices. */
async function checksum(chunks: readonly Uint8Array[]): Promise<Uint8Array> {
  const hash = createHash("sha256");
  let since = 0;
  for (const chunk of chunks) {
    for (let at = 0; at < chunk.length; at += HASH_SLICE) {
      const piece = chunk.subarray(at, at + HASH_SLICE);
      hash.update(piece);
      since += piece.length;
      if (since >= HASH_SLICE) {
        since = 0;
        await turn();
      }
    }
  }
  return new Uint8Array(hash.digest());
}

/**
 * The bytes of a cache file for `index`, as chunks to write one after the
 * other (the segments' tables are not copied: they must not change until
 * written). The checksum is computed a slice at a time, so a large index
 * does not hold up the event loop.
 *
 * @example
 * ```ts
 * import { decodeCache, encodeCache } from "./cache_format.ts";
 * import { packPaths, unpackPaths } from "../search/index/packed_paths.ts";
 *
 * const chunks = await encodeCache({
 *   root: "/srv/repo",
 *   entries: packPaths(["a.txt"]),
 *   kinds: Uint8Array.of(1),
 *   fileSegments: Int32Array.of(-2),
 *   fileLocals: new Int32Array(1),
 *   fileBytes: new Int32Array(1),
 *   stamps: new Float64Array(5).fill(NaN),
 *   segments: [],
 * });
 * const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
 * chunks.reduce((at, chunk) => (bytes.set(chunk, at), at + chunk.length), 0);
 * const loaded = await decodeCache(bytes, "/srv/repo");
 * console.log(typeof loaded === "string" ? loaded : unpackPaths(loaded.entries)); // ["a.txt"]
 * ```
 */
export async function encodeCache(index: CachedIndex): Promise<Uint8Array[]> {
  const names = joinedNames(index.entries);
  const header: Header = {
    root: index.root,
    stampFields: STAMP_FIELDS,
    entries: index.entries.ends.length,
    files: index.fileSegments.length,
    names: names.length,
    segments: index.segments.map(({ segment }) => [
      segment.files,
      segment.keys.length,
      segment.postings.length,
    ]),
  };
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const lead = new Uint8Array(MAGIC.length + 8);
  lead.set(MAGIC);
  const view = new DataView(lead.buffer);
  view.setUint32(MAGIC.length, CACHE_FORMAT_VERSION, true);
  view.setUint32(MAGIC.length + 4, headerBytes.length, true);
  const chunks: Uint8Array[] = [];
  let length = 0;
  const push = (chunk: Uint8Array) => {
    chunks.push(chunk);
    length += chunk.length;
    const pad = padding(length);
    if (pad > 0) {
      chunks.push(new Uint8Array(pad));
      length += pad;
    }
  };
  chunks.push(lead);
  length = lead.length;
  push(headerBytes);
  push(names);
  push(index.kinds);
  push(bytesOf(index.fileSegments));
  push(bytesOf(index.fileLocals));
  push(bytesOf(index.fileBytes));
  push(bytesOf(index.stamps));
  for (const { segment, ids } of index.segments) {
    push(bytesOf(segment.keys));
    push(bytesOf(segment.offsets));
    push(bytesOf(segment.postings));
    push(bytesOf(ids));
  }
  chunks.push(await checksum(chunks));
  return chunks;
}

/** The bytes of the paths of `entries`, a NUL between two (the file's table of names). */
function joinedNames(entries: PackedPaths): Uint8Array {
  const { bytes, ends } = entries;
  const names = new Uint8Array(bytes.length + Math.max(0, ends.length - 1));
  let from = 0;
  for (let i = 0; i < ends.length; i++) {
    names.set(bytes.subarray(from, ends[i]), from + i);
    from = ends[i];
  }
  return names;
}

/** The paths of a file's table of names (a NUL between two), packed, or `null` when not `count`. */
function splitNames(names: Uint8Array, count: number): PackedPaths | null {
  if (count === 0) return names.length === 0 ? { bytes: names, ends: new Uint32Array(0) } : null;
  const ends = new Uint32Array(count);
  const bytes = new Uint8Array(names.length - (count - 1));
  let paths = 0;
  let to = 0;
  let from = 0;
  for (let at = 0; at <= names.length; at++) {
    if (at < names.length && names[at] !== 0) continue;
    if (paths === count) return null;
    bytes.set(names.subarray(from, at), to);
    to += at - from;
    ends[paths++] = to;
    from = at + 1;
  }
  return paths === count ? { bytes, ends } : null;
}

/** Whether a value is a whole number from 0 up to `most`. */
function count(value: unknown, most = Number.MAX_SAFE_INTEGER): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= most;
}

function parseHeader(text: string): Header | null {
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof header !== "object" || header === null) return null;
  const { root, stampFields, entries, files, names, segments } = header as Record<string, unknown>;
  if (typeof root !== "string" || stampFields !== STAMP_FIELDS) return null;
  if (!count(entries) || !count(files) || !count(names) || !Array.isArray(segments)) return null;
  for (const segment of segments) {
    if (!Array.isArray(segment) || segment.length !== 3) return null;
    if (!count(segment[0], MAX_SEGMENT_FILES) || !count(segment[1]) || !count(segment[2])) {
      return null;
    }
  }
  return header as Header;
}

/** An empty name, `.` or `..` anywhere in a display path, or a NUL. */
const NOT_PLAIN = /(?:^|\/)\.{0,2}(?:\/|$)|\0/;

/** Whether a display path is made of plain names (no empty name, `.` or `..`). */
function plainDisplay(display: string): boolean {
  return !NOT_PLAIN.test(display);
}

/** Bytes of a cache file before its header: the magic, the version and the header's length. */
const LEAD = MAGIC.length + 8;

/** The header of a cache file whose first bytes are `lead`, or why there is none. */
function leadProblem(lead: Uint8Array): string | null {
  if (lead.length < LEAD) return "the cache file is cut short";
  if (!MAGIC.every((byte, i) => lead[i] === byte)) return "the cache file is not an index cache";
  const version = new DataView(lead.buffer, lead.byteOffset, lead.byteLength)
    .getUint32(MAGIC.length, true);
  if (version !== CACHE_FORMAT_VERSION) {
    return `the cache file is of format version ${version}, not ${CACHE_FORMAT_VERSION}`;
  }
  return null;
}

/** The length of the header a lead gives. */
function headerLengthOf(lead: Uint8Array): number {
  return new DataView(lead.buffer, lead.byteOffset, lead.byteLength)
    .getUint32(MAGIC.length + 4, true);
}

/** Bytes of the tables of a header's entries and files (each padded), before its segments. */
function entryTablesLength(header: Header): number {
  const padded = (length: number) => length + padding(length);
  return padded(header.names) + padded(header.entries) + 3 * padded(4 * header.files) +
    8 * STAMP_FIELDS * header.files;
}

/**
 * How a cache file is best read (see `readCacheFile`'s `next`): its lead,
 * its header, the tables of its entries and files, then the rest (the
 * segments and the checksum), each in a buffer of its own. The segments are
 * views on the bytes read, kept as long as the index keeps them; read apart,
 * the entries' tables (the paths and stamps of every file) are dropped once
 * the index has taken them up, instead of being held with the segments. A
 * file that is not well formed is read to its end in one piece after what
 * was found wrong, and refused by {@link decodeCache}.
 */
export function nextCachePiece(pieces: readonly Uint8Array[], size: number): number {
  let at = 0;
  for (const piece of pieces) at += piece.length;
  const rest = size - at;
  if (pieces.length === 0) return Math.min(LEAD, rest);
  if (pieces.length === 1) {
    if (leadProblem(pieces[0]) !== null) return rest;
    const length = headerLengthOf(pieces[0]);
    return length > MAX_HEADER ? rest : Math.min(length + padding(LEAD + length), rest);
  }
  if (pieces.length === 2) {
    const header = headerOf(pieces[1].subarray(0, headerLengthOf(pieces[0])));
    return header === null ? rest : Math.min(entryTablesLength(header), rest);
  }
  return rest;
}

/** The header in its bytes, or `null` when they are not one. */
function headerOf(bytes: Uint8Array): Header | null {
  try {
    return parseHeader(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return null;
  }
}

/**
 * The index a cache file holds, or why it is refused: not this format or
 * version, cut short or longer, a checksum that does not match, made for
 * another root than `root`, or tables that do not fit together (entries out
 * of walk order or below no directory, a path that is not plain names,
 * segments that are not well formed, files and segments that do not name
 * each other). The file is given whole, or in the pieces it was read in
 * (one after the other; see {@link nextCachePiece}); a table that is not
 * within one piece is refused. The tables are views on the pieces, which
 * must not change.
 *
 * The checksum proves the file is whole, not who wrote it: content of a
 * file whose stamp is unchanged is trusted, so the directory the cache
 * lives in must be private (see `cache_directory.ts`).
 */
export async function decodeCache(
  file: Uint8Array | readonly Uint8Array[],
  root: string,
): Promise<CachedIndex | string> {
  const pieces = (file instanceof Uint8Array ? [file] : file)
    .map((piece) => piece.byteOffset % 8 === 0 ? piece : piece.slice());
  let length = 0;
  for (const piece of pieces) length += piece.length;
  if (length < LEAD + CHECKSUM_BYTES) return "the cache file is cut short";
  const last = pieces.at(-1)!;
  if (last.length < CHECKSUM_BYTES) return "the cache file is cut short";
  const lead = pieces[0].length >= LEAD ? pieces[0] : null;
  if (lead === null) return "the cache file is cut short";
  const problem = leadProblem(lead);
  if (problem !== null) return problem;
  const body = [...pieces.slice(0, -1), last.subarray(0, last.length - CHECKSUM_BYTES)];
  // Hashed a slice at a time, in place: Web Crypto's digest would copy the whole file first (a
  // second copy of hundreds of MB at once), and take longer. Nothing is returned before the sum
  // is known to match.
  const decoded = decodeBody(body, length - CHECKSUM_BYTES, root);
  const sum = await checksum(body);
  const stored = last.subarray(last.length - CHECKSUM_BYTES);
  if (!sum.every((byte, i) => stored[i] === byte)) {
    return "the cache file's checksum does not match its content";
  }
  return decoded;
}

/** The index of a cache file's pieces but the checksum (`length` bytes), or why they are refused. */
function decodeBody(
  body: readonly Uint8Array[],
  length: number,
  root: string,
): CachedIndex | string {
  // Where each piece begins in the file.
  const starts: number[] = [];
  let start = 0;
  for (const piece of body) {
    starts.push(start);
    start += piece.length;
  }
  /** The piece that holds `[at, at + bytes)` whole, and where in it that begins, or `null`. */
  const within = (at: number, bytes: number): [Uint8Array, number] | null => {
    for (let p = 0; p < body.length; p++) {
      const from = at - starts[p];
      if (from >= 0 && from + bytes <= body[p].length) return [body[p], from];
    }
    return null;
  };
  const headerLength = headerLengthOf(body[0]);
  const headerPlace = headerLength > MAX_HEADER ? null : within(LEAD, headerLength);
  if (headerPlace === null) return "the cache file's header is cut short";
  let text: string;
  try {
    const [piece, from] = headerPlace;
    text = new TextDecoder("utf-8", { fatal: true }).decode(
      piece.subarray(from, from + headerLength),
    );
  } catch {
    return "the cache file's header is not text";
  }
  const header = parseHeader(text);
  if (header === null) return "the cache file's header is not well formed";
  if (header.root !== root) return `the cache file is of another tree (${header.root})`;
  let at = LEAD + headerLength;
  at += padding(at);
  let short = false;
  const take = <T>(
    elements: number,
    size: number,
    make: (buffer: ArrayBufferLike, offset: number) => T,
  ): T | null => {
    const bytes = elements * size;
    const place = short || at + bytes > length ? null : within(at, bytes);
    if (place === null) {
      short = true;
      return null;
    }
    const [piece, from] = place;
    let made: T;
    try {
      made = make(piece.buffer, piece.byteOffset + from);
    } catch {
      // A table out of line with its elements' size: pieces that are not the file's own.
      short = true;
      return null;
    }
    at += bytes;
    at += padding(at);
    return made;
  };
  const uint8 = (count: number) => take(count, 1, (b, o) => new Uint8Array(b, o, count));
  const int32 = (count: number) => take(count, 4, (b, o) => new Int32Array(b, o, count));
  const names = uint8(header.names);
  const kinds = uint8(header.entries);
  const fileSegments = int32(header.files);
  const fileLocals = int32(header.files);
  const fileBytes = int32(header.files);
  const stampCount = header.files * STAMP_FIELDS;
  const stamps = take(stampCount, 8, (b, o) => new Float64Array(b, o, stampCount));
  const segments: CachedSegment[] = [];
  for (const [files, keyCount, postingCount] of header.segments) {
    const keys = take(keyCount, 4, (b, o) => new Uint32Array(b, o, keyCount));
    const offsets = take(keyCount + 1, 4, (b, o) => new Uint32Array(b, o, keyCount + 1));
    const postings = take(postingCount, 2, (b, o) => new Uint16Array(b, o, postingCount));
    const ids = int32(files);
    if (keys === null || offsets === null || postings === null || ids === null) break;
    segments.push({ segment: { files, keys, offsets, postings }, ids });
  }
  if (
    short || at !== length || names === null || kinds === null || fileSegments === null ||
    fileLocals === null || fileBytes === null || stamps === null
  ) return "the cache file's tables do not fill it exactly";
  const entries = splitNames(names, header.entries);
  if (entries === null) return "the cache file's paths are not as many as its entries";
  const problem = entriesProblem(entries, kinds, header.files) ??
    segmentsProblem(segments, fileSegments, fileLocals, fileBytes);
  if (problem !== null) return `the cache file's ${problem}`;
  return { root, entries, kinds, fileSegments, fileLocals, fileBytes, stamps, segments };
}

/** What is wrong with a cache's entries, or `null`. */
function entriesProblem(
  entries: PackedPaths,
  kinds: Uint8Array,
  fileCount: number,
): string | null {
  // Each path is made a string as it is looked at, and dropped after the next: a load keeps none.
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const directories = new Set<string>(["."]);
  let files = 0;
  let previous = "";
  let from = 0;
  for (let i = 0; i < entries.ends.length; i++) {
    let display: string;
    try {
      display = decoder.decode(entries.bytes.subarray(from, entries.ends[i]));
    } catch {
      return "paths are not text";
    }
    from = entries.ends[i];
    if (!plainDisplay(display)) return `path ${JSON.stringify(display)} is not plain names`;
    if (i > 0) {
      const order = walkOrder(previous, display);
      // Names that are not UTF-8 are shown with U+FFFD in their place: two such may show alike.
      if (order === 0) return `two entries are shown as ${JSON.stringify(display)}`;
      if (order > 0) return "entries are not in walk order";
    }
    previous = display;
    const slash = display.lastIndexOf("/");
    if (!directories.has(slash === -1 ? "." : display.slice(0, slash))) {
      return `entry ${JSON.stringify(display)} is below no directory of the index`;
    }
    if (kinds[i] === 1) files++;
    else if (kinds[i] === 0) directories.add(display);
    else return "entry kinds are not well formed";
  }
  return files === fileCount ? null : "files are not as many as its file entries";
}

/** What is wrong with a cache's segments and the files' places in them, or `null`. */
function segmentsProblem(
  segments: readonly CachedSegment[],
  fileSegments: Int32Array,
  fileLocals: Int32Array,
  fileBytes: Int32Array,
): string | null {
  const files = fileSegments.length;
  for (let s = 0; s < segments.length; s++) {
    const { segment, ids } = segments[s];
    const { keys, offsets, postings } = segment;
    if (offsets[0] !== 0 || offsets[keys.length] !== postings.length) {
      return "segment offsets are not well formed";
    }
    for (let k = 0; k < keys.length; k++) {
      if (keys[k] >= GRAM_KEYS || (k > 0 && keys[k] <= keys[k - 1])) {
        return "segment keys are not well formed";
      }
      if (offsets[k + 1] < offsets[k]) return "segment offsets are not well formed";
    }
    for (let local = 0; local < ids.length; local++) {
      const id = ids[local];
      if (id === -1) continue;
      if (id < 0 || id >= files || fileSegments[id] !== s || fileLocals[id] !== local) {
        return "segments and files do not name each other";
      }
    }
  }
  for (let id = 0; id < files; id++) {
    const s = fileSegments[id];
    if (s >= 0) {
      const slot = segments[s];
      if (slot === undefined || slot.ids[fileLocals[id]] !== id) {
        return "segments and files do not name each other";
      }
      if (fileBytes[id] < 0) return "file sizes are not well formed";
    } else if (s !== IN_NO_SEGMENT && s !== NOT_INDEXED) return "file places are not well formed";
  }
  return null;
}
