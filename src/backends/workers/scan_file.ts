/**
 * One file scanned synchronously, as the search workers scan it (and the
 * calling thread, for the first stretch of a tree search while the workers
 * start): read in chunks into one reused buffer, opened inside its verified
 * directory.
 *
 * @module
 */
import { closeSync, fstatSync, readSync } from "node:fs";
import { Buffer } from "node:buffer";
import { compileMatcher } from "../../search/matcher.ts";
import type { LineMatcher } from "../../search/matcher.ts";
import {
  BINARY_SNIFF_BYTES,
  looksBinary,
  NO_MATCH,
  ONE_MATCH,
  scanBytes,
  ScanStopped,
  SKIPPED,
} from "../../search/scan.ts";
import type { ScanRequest, ScanResult } from "../../search/scan.ts";
import { SimdSearch } from "../../search/simd.ts";
import { holdsLiteral, NATIVE_BUFFER_SEARCH } from "../../search/bytes.ts";
import type { ByteLiteral } from "../../search/bytes.ts";
import { LeftToWorkers, READ_FLAGS } from "./unit.ts";
import type { VerifiedDirectories } from "./unit.ts";

/**
 * Files are read in chunks of this size into one small buffer. Kept below
 * glibc's mmap threshold (128 KiB), the buffer sits on the heap, and reading
 * the Linux tree into it costs the kernel about half of what reading into a
 * 1 MiB buffer does (measured: 0.45–0.75 s against 0.9–1.4 s of system time).
 */
export const CHUNK: number = 64 * 1024;
/**
 * The most bytes of a file that a thread serving its host (the calling
 * thread, with `leaveLarge`) matches against the pattern: under a costly
 * pattern (`\w{1,1000}\d` over one long line) matching takes about 4 ms a
 * KiB, and a line cannot be matched in parts.
 */
const SMALL_HERE = 8 * 1024;
/**
 * Byte search in place with WebAssembly SIMD, where the runtime's own byte
 * search is not native (Deno's `node:buffer`). Node's `Buffer.indexOf` for
 * a literal's rarest byte is glibc's memchr, which the module does not
 * beat (profiled in these workers on the Linux tree: about 40 ms against
 * 60 ms of both workers' time; end to end the two are within noise).
 */
const simd = NATIVE_BUFFER_SEARCH ? null : SimdSearch.create();
/** The chunk buffer: in the SIMD module's memory when there is one, so nothing is copied. */
export const head: Uint8Array = simd?.buffer.subarray(0, CHUNK) ?? Buffer.alloc(CHUNK);
/** A whole file that a scan needs in one piece; grown as needed, reused. */
let whole = new Uint8Array(0);
let compiled: { request: ScanRequest; key: string; matcher: LineMatcher } | null = null;

/** The matcher of a request: compiled once per pattern, and looked up once per request object. */
export function matcherFor(request: ScanRequest): LineMatcher {
  if (compiled?.request === request) return compiled.matcher;
  const key = `${request.caseInsensitive ? "i" : "s"}:${request.pattern}`;
  const matcher = compiled?.key === key ? compiled.matcher : compileMatcher(request.pattern, {
    caseInsensitive: request.caseInsensitive,
    checked: true,
  });
  compiled = { request, key, matcher };
  return matcher;
}

const { unreadable: UNREADABLE, binary: BINARY, too_large: TOO_LARGE } = SKIPPED;

/** Whether the first `length` bytes of `head` hold `literal`. */
function headHolds(length: number, literal: ByteLiteral): boolean {
  if (simd !== null && simd.setLiteral(literal)) return simd.findLiteral(0, length) !== -1;
  return holdsLiteral(head.subarray(0, length), literal);
}

/** Whether the first `length` bytes of `head` are a binary file's (a NUL in its first 8 KiB). */
export function headIsBinary(length: number): boolean {
  if (simd !== null) return simd.findByte(0, Math.min(length, BINARY_SNIFF_BYTES), 0) !== -1;
  return looksBinary(head.subarray(0, length));
}

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/**
 * The lines among the first `length` bytes of the SIMD module's buffer
 * (where `head` lies) that match, counted as `countLines` of `scan.ts`
 * counts them (at most one in files_with_matches mode), with the SIMD search
 * in place: only the lines that hold the literal are looked at, and nothing
 * else is decoded. For a runtime whose byte search is not native; the
 * buffer holds the literal (at `first`). With `stopped`, throws
 * {@link ScanStopped} before a line is matched once the search stopped.
 */
function countInHead(
  length: number,
  first: number,
  matcher: LineMatcher,
  mode: ScanRequest["mode"],
  stopped?: () => boolean,
): number {
  const bytes = simd!.buffer;
  let matches = 0;
  for (let at = first; at !== -1;) {
    let end = simd!.findByte(at, length, NEWLINE);
    if (end === -1) end = length;
    if (!matcher.exact) {
      if (stopped?.()) throw new ScanStopped();
      // Where the line holding `at` starts, as a search back from `at` itself for a line break.
      let start = bytes[at] === NEWLINE ? at + 1 : at;
      while (start > 0 && start <= at && bytes[start - 1] !== NEWLINE) start--;
      if (!matcher.matchesLine(decoder.decode(bytes.subarray(start, end)))) {
        at = end === length ? -1 : simd!.findLiteral(end + 1, length);
        continue;
      }
    }
    matches++;
    if (mode === "files_with_matches") break;
    at = end === length ? -1 : simd!.findLiteral(end + 1, length);
  }
  return matches;
}

/** What {@link countStreamed} answers for a line longer than the SIMD module's buffer. */
const LINE_TOO_LONG = -1;

/**
 * The matching lines of a larger file (not content mode), as
 * {@link countInHead} counts them, the file read on after its first chunk
 * (in `head`) into the SIMD module's buffer: each read's whole lines are
 * counted where they lie, and its last, unfinished line is moved to the
 * buffer's start for the next read to finish. No copy of the file is made
 * and nothing but the lines that hold the literal is decoded, where the
 * whole file's scan (`scan.ts`) takes it as a string first. The literal holds
 * no line break, so each of its places lies within one line.
 * {@link LINE_TOO_LONG} when a line does not fit in the buffer (the caller
 * scans the whole file instead); {@link PAST_CAP} when the file grew past
 * `maxBytes`. Throws {@link ScanStopped} when `stopped` says so between reads,
 * or before a line is matched (a costly pattern over a buffer of lines
 * holding the literal takes long).
 */
function countStreamed(
  fd: number,
  literal: ByteLiteral,
  matcher: LineMatcher,
  request: ScanRequest,
  stopped: () => boolean,
): number {
  const bytes = simd!.buffer;
  const room = bytes.length;
  simd!.setLiteral(literal);
  let length = CHUNK;
  let total = CHUNK;
  let matches = 0;
  while (true) {
    const read = readSync(fd, bytes, length, room - length, null);
    total += read;
    if (total > request.maxBytes) return PAST_CAP;
    length += read;
    // The whole lines held, or every byte once the file has ended.
    let cut = length;
    if (read > 0) {
      while (cut > 0 && bytes[cut - 1] !== NEWLINE) cut--;
      if (cut === 0) {
        // One unfinished line so far: read on, unless it fills the buffer.
        if (length === room) return LINE_TOO_LONG;
        continue;
      }
    }
    const first = simd!.findLiteral(0, cut);
    if (first !== -1) {
      matches += countInHead(cut, first, matcher, request.mode, stopped);
      if (matches > 0 && request.mode === "files_with_matches") return matches;
    }
    if (read === 0) return matches;
    if (stopped()) throw new ScanStopped();
    bytes.copyWithin(0, cut, length);
    length -= cut;
  }
}

/**
 * Whether the rest of a file, read chunk by chunk after the full first chunk
 * in `head`, holds `literal`. Consecutive chunks overlap by the literal's
 * length less one, so a literal across a boundary is found.
 */
function restHolds(fd: number, literal: ByteLiteral): boolean {
  let length = CHUNK;
  while (true) {
    const keep = Math.min(literal.bytes.length - 1, length);
    head.copyWithin(0, length - keep, length);
    const read = readSync(fd, head, keep, CHUNK - keep, null);
    if (read === 0) return false;
    length = keep + read;
    if (headHolds(length, literal)) return true;
  }
}

/**
 * Whether a larger file is counted read by read in the SIMD module's buffer
 * ({@link countStreamed}): where there is the module, outside content mode,
 * for a literal it keeps that holds no line break.
 */
function streams(literal: ByteLiteral | null, request: ScanRequest): boolean {
  return simd !== null && literal !== null && request.mode !== "content" &&
    !literal.bytes.includes(NEWLINE) && simd.setLiteral(literal);
}

/** Makes `whole` hold at least `room` bytes, keeping its first `kept`. */
function wholeRoom(room: number, kept: number): void {
  if (whole.length >= room) return;
  const larger = new Uint8Array(Math.max(room, whole.length * 2));
  larger.set(whole.subarray(0, kept));
  whole = larger;
}

/**
 * A whole file of `size` bytes whose first `filled` bytes `whole` holds
 * already (it may have grown: read to its end, never past the cap).
 */
function readRest(fd: number, size: number, maxBytes: number, filled: number): Uint8Array | null {
  // Room for one byte more than the size (or than what is held, for a file that shrank): a read
  // that fills it all shows the file grew.
  wholeRoom(Math.max(size, filled) + 1, filled);
  while (true) {
    if (filled === whole.length) wholeRoom(whole.length * 2, filled);
    const read = readSync(fd, whole, filled, whole.length - filled, filled);
    if (read === 0) return whole.subarray(0, filled);
    filled += read;
    if (filled > maxBytes) return null;
  }
}

/**
 * A whole file of `size` bytes (it may have grown: read to its end, never
 * past the cap). With `start`, its first `start` bytes are those in `head`
 * already, and only the rest is read.
 */
export function readWhole(
  fd: number,
  size: number,
  maxBytes: number,
  start = 0,
): Uint8Array | null {
  wholeRoom(Math.max(size, start) + 1, 0);
  whole.set(head.subarray(0, start));
  return readRest(fd, size, maxBytes, start);
}

/** What {@link restHoldsKept} answers for a file without the literal, and for one past the cap. */
const ABSENT = -1;
const PAST_CAP = -2;

/**
 * As {@link restHolds}, keeping every byte read in `whole` after the first
 * chunk: how many bytes of the file `whole` holds once the literal is found
 * (the rest is read from there), {@link ABSENT} when the file does not hold
 * it, or {@link PAST_CAP} when the file grew past `maxBytes`.
 */
function restHoldsKept(fd: number, size: number, maxBytes: number, literal: ByteLiteral): number {
  wholeRoom(Math.max(size, CHUNK) + 1, 0);
  whole.set(head);
  let filled = CHUNK;
  let length = CHUNK;
  while (true) {
    const keep = Math.min(literal.bytes.length - 1, length);
    head.copyWithin(0, length - keep, length);
    const read = readSync(fd, head, keep, CHUNK - keep, null);
    if (read === 0) return ABSENT;
    wholeRoom(filled + read, filled);
    whole.set(head.subarray(keep, keep + read), filled);
    filled += read;
    if (filled > maxBytes) return PAST_CAP;
    length = keep + read;
    if (headHolds(length, literal)) return filled;
  }
}
/**
 * Scans one file; throws {@link ScanStopped} when `stopped` says its search
 * stopped during it. With `leaveLarge`, a file larger than a few KiB that
 * the pattern must be matched against is not scanned: {@link LeftToWorkers}
 * is thrown (a thread that serves its host matches only small files, as a
 * single long line is matched whole). With `candidate`, the file is one the
 * search index found likely to match: the chunks of a large one searched for
 * the literal are kept, and the file is read on from where it was found
 * rather than again from its start.
 */
export function scanOne(
  directories: VerifiedDirectories,
  path: string,
  matcher: LineMatcher,
  request: ScanRequest,
  stopped: () => boolean,
  leaveLarge = false,
  candidate = false,
): ScanResult {
  // Opened inside its verified directory: a link put in its place, or in a directory's, is not
  // followed.
  const fd = directories.openFile(path, READ_FLAGS);
  if (fd === null) return UNREADABLE;
  try {
    // Most files are smaller than a chunk: one read, no fstat, scanned where they lie. The
    // binary test and the literal come first, on the bytes in place; only a file holding the
    // literal is scanned further, and none when the literal alone decides.
    const read = readSync(fd, head, 0, CHUNK, null);
    const { literal } = matcher;
    if (read < CHUNK) {
      if (literal !== null) {
        if (headIsBinary(read)) return BINARY;
        if (simd !== null && simd.setLiteral(literal) && request.mode !== "content") {
          const first = simd.findLiteral(0, read);
          if (first === -1) return NO_MATCH;
          const matches = countInHead(read, first, matcher, request.mode);
          return matches === 0 ? NO_MATCH : { matches, lines: [] };
        }
        if (!headHolds(read, literal)) return NO_MATCH;
        if (matcher.exact && request.mode === "files_with_matches") return ONE_MATCH;
      }
      // A line is matched whole, between two questions whether to stop: a thread that serves its
      // host matches little text at once, however costly the pattern.
      if (leaveLarge && read > SMALL_HERE) throw new LeftToWorkers();
      return scanBytes(head.subarray(0, read), matcher, request, stopped);
    }
    const stats = fstatSync(fd);
    if (!stats.isFile()) return UNREADABLE;
    if (stats.size > request.maxBytes) return TOO_LARGE;
    if (headIsBinary(CHUNK)) return BINARY;
    // A larger file is read whole only when its chunks hold the pattern's required literal, and
    // not at all when the literal alone decides.
    const decides = matcher.exact && request.mode === "files_with_matches";
    if (!decides && !leaveLarge && streams(literal, request)) {
      const matches = countStreamed(fd, literal!, matcher, request, stopped);
      if (matches === PAST_CAP) return TOO_LARGE;
      if (matches !== LINE_TOO_LONG) return matches === 0 ? NO_MATCH : { matches, lines: [] };
      // A line longer than the buffer: the file is read again from its start, whole.
      const bytes = readWhole(fd, stats.size, request.maxBytes);
      return bytes === null ? TOO_LARGE : scanBytes(bytes, matcher, request, stopped);
    }
    // What of the file is held once the literal is found: the first chunk in `head`, or (after a
    // search of the rest) nothing, or, for a candidate, what was searched, in `whole`.
    let inHead = CHUNK;
    let inWhole = 0;
    if (literal !== null && !headHolds(CHUNK, literal)) {
      if (candidate && !decides) {
        inWhole = restHoldsKept(fd, stats.size, request.maxBytes, literal);
        if (inWhole === ABSENT) return NO_MATCH;
        if (inWhole === PAST_CAP) return TOO_LARGE;
      } else if (!restHolds(fd, literal)) return NO_MATCH;
      inHead = 0;
    }
    if (decides) return ONE_MATCH;
    if (leaveLarge) throw new LeftToWorkers();
    const bytes = inWhole > 0
      ? readRest(fd, stats.size, request.maxBytes, inWhole)
      : readWhole(fd, stats.size, request.maxBytes, inHead);
    return bytes === null ? TOO_LARGE : scanBytes(bytes, matcher, request, stopped);
  } catch (error) {
    if (error instanceof ScanStopped || error instanceof LeftToWorkers) throw error;
    return UNREADABLE;
  } finally {
    closeSync(fd);
  }
}
