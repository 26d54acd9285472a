/**
 * Scanning one file's bytes for `grep`: binary detection, the literal
 * prefilter, and matching lines with their context. Pure and runtime-free, so
 * the same code runs on the main thread and in a backend's search workers.
 *
 * @module
 */
import type { LineMatcher } from "./matcher.ts";
import { findByte, findByteBefore, findLiteral, haystack, holdsNul } from "./bytes.ts";
import type { Haystack } from "./bytes.ts";

/** How far into a file a NUL byte marks it as binary. */
export const BINARY_SNIFF_BYTES = 8192;
/** Longer lines are cut in results, with a marker. */
export const LINE_CHARS = 500;

/** Whether `bytes` holds a NUL byte in its first 8 KiB. */
export function looksBinary(bytes: Uint8Array): boolean {
  return holdsNul(bytes.subarray(0, BINARY_SNIFF_BYTES));
}

/** What `grep` reports. */
export type ScanMode = "content" | "files_with_matches" | "count";

/** A search, in plain data (it crosses to workers). */
export interface ScanRequest {
  /** The RE2 pattern. */
  readonly pattern: string;
  /** Case-insensitive matching. */
  readonly caseInsensitive: boolean;
  /** What to collect. */
  readonly mode: ScanMode;
  /** Context lines around matches (content mode). */
  readonly context: number;
  /** Larger files are skipped as `too_large`. */
  readonly maxBytes: number;
}

/** One line of a content-mode result. */
export interface ScanLine {
  /** 1-based line number. */
  readonly line: number;
  /** The line, cut at 500 characters with a marker. */
  readonly text: string;
  /** Whether it is a context line rather than a match. */
  readonly context: boolean;
}

/** The result of scanning one file. */
export interface ScanResult {
  /** Why the file was passed over, if it was. */
  readonly skip?: "too_large" | "binary" | "unreadable";
  /** Matching lines (1 at most in files_with_matches mode). */
  readonly matches: number;
  /** Content mode: matches with context. */
  readonly lines: readonly ScanLine[];
}

/**
 * The results a scanned file gives `grep`'s consumer, as `max_results`
 * counts them: its matching lines in content mode, else the file; none when
 * it was skipped.
 */
export function resultCount(result: ScanResult, mode: ScanMode): number {
  if (result.skip !== undefined) return 0;
  return mode === "content" ? result.matches : Math.min(result.matches, 1);
}

const NONE: ScanResult = { matches: 0, lines: [] };

function cutLine(text: string): string {
  if (text.length <= LINE_CHARS) return text;
  return `${text.slice(0, LINE_CHARS)} [… line cut, ${text.length - LINE_CHARS} more characters]`;
}

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/**
 * Matching lines of a file's bytes, from the first occurrence of the
 * pattern's required literal at `first`, visiting only the lines that hold
 * it: nothing else is decoded, and only those lines go through the regular
 * expression (none, when the pattern is the literal itself); at most one in
 * files_with_matches mode.
 */
function countLines(
  bytes: Uint8Array,
  text: Haystack,
  first: number,
  matcher: LineMatcher,
  mode: ScanMode,
): number {
  const literal = matcher.literal!;
  let matches = 0;
  for (let at = first; at !== -1;) {
    let end = findByte(text, NEWLINE, at);
    if (end === -1) end = bytes.length;
    if (
      matcher.exact ||
      matcher.matchesLine(
        decoder.decode(bytes.subarray(findByteBefore(text, NEWLINE, at) + 1, end)),
      )
    ) {
      matches++;
      if (mode === "files_with_matches") break;
    }
    at = end === bytes.length ? -1 : findLiteral(text, literal, end + 1);
  }
  return matches;
}

/** Scans a whole file's bytes. */
export function scanBytes(
  bytes: Uint8Array,
  matcher: LineMatcher,
  request: ScanRequest,
): ScanResult {
  if (looksBinary(bytes)) return { skip: "binary", matches: 0, lines: [] };
  if (matcher.literal !== null) {
    const text = haystack(bytes);
    const first = findLiteral(text, matcher.literal, 0);
    if (first === -1) return NONE;
    if (request.mode !== "content") {
      return { matches: countLines(bytes, text, first, matcher, request.mode), lines: [] };
    }
  }
  const text = decoder.decode(bytes);
  if (!matcher.mayMatch(text)) return NONE;
  const all = text.split("\n");
  if (all.length > 0 && all[all.length - 1] === "") all.pop();
  const lines: ScanLine[] = [];
  let matches = 0;
  let lastShown = -1;
  const { mode, context } = request;
  const { literalText } = matcher;
  const hit = (line: string) =>
    (literalText === null || line.includes(literalText)) && matcher.matchesLine(line);
  for (let i = 0; i < all.length; i++) {
    if (!hit(all[i])) continue;
    matches++;
    if (mode === "files_with_matches") break;
    if (mode !== "content") continue;
    for (let c = Math.max(lastShown + 1, i - context); c < i; c++) {
      lines.push({ line: c + 1, text: cutLine(all[c]), context: true });
    }
    lines.push({ line: i + 1, text: cutLine(all[i]), context: false });
    lastShown = i;
    for (let c = i + 1; c <= Math.min(all.length - 1, i + context); c++) {
      if (hit(all[c])) break;
      lines.push({ line: c + 1, text: cutLine(all[c]), context: true });
      lastShown = c;
    }
  }
  return { matches, lines };
}
