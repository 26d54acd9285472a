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
import { setImmediate } from "node:timers";

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

/** Why a file is passed over (see {@link ScanResult.skip}). */
export type SkipReason = NonNullable<ScanResult["skip"]>;

const NO_LINES: readonly ScanLine[] = Object.freeze([]);

/** A file scanned with no match; shared, as a result is never changed once made. */
export const NO_MATCH: ScanResult = Object.freeze({ matches: 0, lines: NO_LINES });
/** A file with one match and no lines kept (files_with_matches mode); shared. */
export const ONE_MATCH: ScanResult = Object.freeze({ matches: 1, lines: NO_LINES });
/** The result of a file passed over, per reason; shared. */
export const SKIPPED: { readonly [R in SkipReason]: ScanResult } = Object.freeze({
  too_large: Object.freeze({ skip: "too_large", matches: 0, lines: NO_LINES }),
  binary: Object.freeze({ skip: "binary", matches: 0, lines: NO_LINES }),
  unreadable: Object.freeze({ skip: "unreadable", matches: 0, lines: NO_LINES }),
});

function cutLine(text: string): string {
  if (text.length <= LINE_CHARS) return text;
  return `${text.slice(0, LINE_CHARS)} [… line cut, ${text.length - LINE_CHARS} more characters]`;
}

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/**
 * The least text matched between two pauses of a scan (see
 * {@link scanSteps}), in bytes or characters, beyond the line that passes
 * it. The regular expression engine takes time in proportion to the text
 * times the pattern's program: a megabyte takes milliseconds under most
 * patterns, and seconds under a costly one (`a(?:[ab]{500}){2}c` over text
 * of `a`s and `b`s), so a file is matched a step at a time.
 */
export const SCAN_STEP: number = 4 * 1024;
/** The most text matched between two pauses. */
const MAX_SCAN_STEP = 1024 * 1024;
/** The time a step aims at, in milliseconds: steps grow while shorter, and shrink while longer. */
const STEP_MS = 8;

/**
 * How much text the next step of a scan matches: {@link SCAN_STEP} at first,
 * then doubled after a step that took under half of {@link STEP_MS}, and
 * halved after one that took over twice as long; pausing after each step is
 * then cheap, however fast the pattern.
 */
class StepSize {
  size = SCAN_STEP;
  #started = performance.now();

  /** Takes a step's end: sizes the next, which starts now. */
  next(): void {
    const now = performance.now();
    const took = now - this.#started;
    if (took < STEP_MS / 2) this.size = Math.min(this.size * 2, MAX_SCAN_STEP);
    else if (took > STEP_MS * 2) this.size = Math.max(this.size / 2, SCAN_STEP);
    this.#started = now;
  }
}

/**
 * Matching lines of a file's bytes, from the first occurrence of the
 * pattern's required literal at `first`, visiting only the lines that hold
 * it: nothing else is decoded, and only those lines go through the regular
 * expression (none, when the pattern is the literal itself); at most one in
 * files_with_matches mode. Pauses after each step of text.
 */
function* countLines(
  bytes: Uint8Array,
  text: Haystack,
  first: number,
  matcher: LineMatcher,
  mode: ScanMode,
): Generator<void, number, void> {
  const literal = matcher.literal!;
  let matches = 0;
  const step = new StepSize();
  let stepStart = first;
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
    if (at !== -1 && at - stepStart >= step.size) {
      yield;
      step.next();
      stepStart = at;
    }
  }
  return matches;
}

/**
 * Scans a whole file's bytes, a step at a time: the generator pauses (yields)
 * after each step of text matched (at least {@link SCAN_STEP}, as much as
 * takes a few milliseconds), so that its driver can stop
 * it ({@link scanBytes}) or let other work run ({@link scanBytesPausing});
 * it returns the result.
 */
export function* scanSteps(
  bytes: Uint8Array,
  matcher: LineMatcher,
  request: ScanRequest,
): Generator<void, ScanResult, void> {
  if (looksBinary(bytes)) return SKIPPED.binary;
  if (matcher.literal !== null) {
    const text = haystack(bytes);
    const first = findLiteral(text, matcher.literal, 0);
    if (first === -1) return NO_MATCH;
    if (request.mode !== "content") {
      const matches = yield* countLines(bytes, text, first, matcher, request.mode);
      return { matches, lines: [] };
    }
  }
  const text = decoder.decode(bytes);
  const all = text.split("\n");
  if (all.length > 0 && all[all.length - 1] === "") all.pop();
  const lines: ScanLine[] = [];
  let matches = 0;
  let lastShown = -1;
  const { mode, context } = request;
  const { literalText } = matcher;
  const hit = (line: string) =>
    (literalText === null || line.includes(literalText)) && matcher.matchesLine(line);
  // The lines go by in steps of whole lines; a step whose text the pattern cannot match (a
  // multiline test of the step at once) is passed over without a test per line.
  const step = new StepSize();
  let stepStart = 0; // the first line of the step
  let offset = 0; // where line `stepStart` starts in `text`
  while (stepStart < all.length) {
    let stepEnd = stepStart;
    let end = offset;
    while (stepEnd < all.length && end - offset < step.size) end += all[stepEnd++].length + 1;
    const mayMatch = matcher.mayMatch(text.slice(offset, end - 1));
    for (let i = mayMatch ? stepStart : stepEnd; i < stepEnd; i++) {
      if (!hit(all[i])) continue;
      matches++;
      if (mode === "files_with_matches") return { matches, lines };
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
    [stepStart, offset] = [stepEnd, end];
    if (stepStart < all.length) {
      yield;
      step.next();
    }
  }
  return { matches, lines };
}

/** Thrown by {@link scanBytes} when its search stopped during the scan. */
export class ScanStopped extends Error {
  /** The scan of a file stopped before its end. */
  constructor() {
    super("The search stopped during the scan of a file.");
  }
}

/**
 * Scans a whole file's bytes on this thread at once, asking `stopped`
 * between steps; throws {@link ScanStopped} when it says the search has
 * stopped (a search worker reads its job's stop flag there).
 */
export function scanBytes(
  bytes: Uint8Array,
  matcher: LineMatcher,
  request: ScanRequest,
  stopped: () => boolean = () => false,
): ScanResult {
  const steps = scanSteps(bytes, matcher, request);
  for (let step = steps.next();; step = steps.next()) {
    if (step.done) return step.value;
    if (stopped()) throw new ScanStopped();
  }
}

/** Resolves at the event loop's next turn, after the I/O and timers due (`setImmediate`). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Scans a whole file's bytes on a thread that serves other work (the
 * host's): between steps it awaits `pause` (the event loop's next turn), so
 * that a large file under a costly pattern keeps the host serving, and
 * throws the signal's reason once it has aborted.
 */
export async function scanBytesPausing(
  bytes: Uint8Array,
  matcher: LineMatcher,
  request: ScanRequest,
  signal: AbortSignal,
  pause: () => Promise<void> = nextTurn,
): Promise<ScanResult> {
  const steps = scanSteps(bytes, matcher, request);
  for (let step = steps.next();; step = steps.next()) {
    if (step.done) return step.value;
    await pause();
    signal.throwIfAborted();
  }
}
