/**
 * What `edit` says when `old_text` is missing or repeated, so that the exact
 * retry is possible without reading the file again: a missing `old_text`
 * gets the closest current text quoted byte for byte (whitespace-insensitive
 * match first, then line-by-line similarity for a stale line), with where its
 * whitespace differs spelled out beside it; a repeated one gets each
 * occurrence's line with a line of context either side.
 *
 * @module
 */
import { byteLength, cutUtf8, numberedLine } from "./text.ts";

/** Most bytes of current text quoted in one `old_text_not_found` message. */
export const MAX_QUOTED_BYTES = 4096;
/** Most candidate regions quoted when several match except for whitespace. */
const MAX_CANDIDATES = 3;
/** Most whitespace notes listed per region. */
const MAX_NOTES = 8;
/** Most occurrences listed in an `old_text_not_unique` message. */
export const MAX_LISTED_OCCURRENCES = 20;
/** Bytes of context lines an `old_text_not_unique` message may hold. */
const MAX_CONTEXT_BYTES = 4096;
/** Characters of one context line shown before it is cut. */
const MAX_CONTEXT_LINE = 200;
/** The weighted line similarity a region needs to be called close. */
const MIN_SIMILARITY = 0.6;
/** Characters of a line's key compared by similarity (a minified line is not scored whole). */
const MAX_COMPARED = 400;
/** Most file lines one repeated key anchors a candidate window at. */
const MAX_ANCHORS_PER_KEY = 64;
/** Most candidate windows scored line by line. */
const MAX_WINDOWS = 64;
/** Most regions matching except for whitespace kept to be ranked (more are only counted). */
const MAX_MATCHES = 64;
/**
 * Key characters compared in all while looking for regions that match except
 * for whitespace: repetitive text (a file of `}` lines, old_text of thousands
 * of them) would otherwise cost file lines times old_text lines.
 */
const MATCH_BUDGET = 8_000_000;
/** Most line ranges one note names; the rest are counted. */
const MAX_RANGES = 24;

/** One line of the file: its text (without terminator) and where it sits. */
interface FileLine {
  /** Offset of its first character. */
  readonly start: number;
  /** Offset just past its text, before `\r\n` or `\n`. */
  readonly end: number;
  /** Offset just past its terminator (equal to `end` on a last line without one). */
  readonly next: number;
  /** The text, without its terminator. */
  readonly text: string;
  /** The text with every whitespace character removed: what whitespace-blind matching compares. */
  readonly key: string;
}

/** One line of `old_text`. */
interface WantedLine {
  readonly text: string;
  readonly key: string;
  /** The terminator after it in `old_text`: `"\r\n"`, `"\n"`, or `""` for the last line. */
  readonly ending: string;
  /** Its key's bigrams, for similarity. */
  readonly grams: Bigrams;
}

/** Where a wanted line lies in a file line: the key span it covers. */
interface Span {
  /** Index in the file's lines. */
  readonly line: number;
  /** First key character covered. */
  readonly from: number;
  /** Key character just past the covered part. */
  readonly to: number;
}

/** Offsets and lines of a stretch of the file. */
interface Bounds {
  start: number;
  end: number;
  /** The first and last line it touches, 0-based. */
  firstLine: number;
  lastLine: number;
}

/** A region of the file close to `old_text`. */
interface Region {
  /** What old_text's core was matched to. */
  readonly matched: Readonly<Bounds>;
  /** What is quoted: the match, widened by whole lines when its text is not unique. */
  readonly quoted: Bounds;
  /** Each non-blank core line (index in the core) with the file line it stands for. */
  readonly pairs: readonly { wanted: number; line: number }[];
  /** Whether it matched except for whitespace (else by line similarity). */
  readonly whitespaceOnly: boolean;
}

const WHITESPACE = /\s/;

function keyOf(text: string): string {
  return text.replace(/\s+/g, "");
}

function splitFile(content: string): FileLine[] {
  const lines: FileLine[] = [];
  let start = 0;
  while (true) {
    const newline = content.indexOf("\n", start);
    if (newline === -1) {
      const text = content.slice(start);
      lines.push({ start, end: content.length, next: content.length, text, key: keyOf(text) });
      return lines;
    }
    const end = newline > start && content[newline - 1] === "\r" ? newline - 1 : newline;
    const text = content.slice(start, end);
    lines.push({ start, end, next: newline + 1, text, key: keyOf(text) });
    start = newline + 1;
  }
}

function splitWanted(oldText: string): WantedLine[] {
  const parts = oldText.split(/(\r?\n)/);
  const lines: WantedLine[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const key = keyOf(parts[i]);
    lines.push({ text: parts[i], key, ending: parts[i + 1] ?? "", grams: bigrams(key) });
  }
  return lines;
}

/** Offset within `text` of its key character `index` (or just past the last when `index` = key length). */
function offsetOfKey(text: string, index: number): number {
  let seen = 0;
  for (let i = 0; i < text.length; i++) {
    if (WHITESPACE.test(text[i])) continue;
    if (seen === index) return i;
    seen++;
  }
  return text.length;
}

/** Offset within `text` just past its key character `index - 1`. */
function offsetAfterKey(text: string, index: number): number {
  if (index === 0) return 0;
  return offsetOfKey(text, index - 1) + 1;
}

/** A string's distinct character bigrams, each with how often it occurs: what {@link dice} compares. */
interface Bigrams {
  /** Each distinct bigram's slot. */
  readonly slots: Map<number, number>;
  /** How often each slot's bigram occurs. */
  readonly counts: Int32Array;
  /** Bigrams in all. */
  readonly size: number;
}

function bigramOf(text: string, i: number): number {
  return text.charCodeAt(i) * 0x10000 + text.charCodeAt(i + 1);
}

function bigrams(text: string): Bigrams {
  text = text.slice(0, MAX_COMPARED);
  const slots = new Map<number, number>();
  const counts: number[] = [];
  for (let i = 0; i + 1 < text.length; i++) {
    const gram = bigramOf(text, i);
    const slot = slots.get(gram);
    if (slot === undefined) {
      slots.set(gram, counts.length);
      counts.push(1);
    } else counts[slot]++;
  }
  return { slots, counts: Int32Array.from(counts), size: Math.max(0, text.length - 1) };
}

/** Scratch counts of bigrams taken, one per slot (a key is at most {@link MAX_COMPARED} long). */
const taken = new Int32Array(MAX_COMPARED);

/** Bigrams `a` and `b.slice(from, to)` have in common (each counted as often as both hold it). */
function common(a: Bigrams, b: string, from: number, to: number): number {
  taken.fill(0, 0, a.counts.length);
  let count = 0;
  for (let i = from; i + 1 < to; i++) {
    const slot = a.slots.get(bigramOf(b, i));
    if (slot !== undefined && taken[slot] < a.counts[slot]) {
      taken[slot]++;
      count++;
    }
  }
  return count;
}

/** Dice similarity of `a`'s bigrams and those of `b.slice(from, to)`, 0 to 1. */
function dice(a: Bigrams, b: string, from = 0, to = b.length): number {
  to = Math.min(to, from + MAX_COMPARED);
  const size = Math.max(0, to - from - 1);
  if (a.size === 0 || size === 0) return 0;
  return (2 * common(a, b, from, to)) / (a.size + size);
}

/** How old_text's core (its lines from the first to the last holding more than whitespace) is pinned. */
interface Shape {
  readonly core: readonly WantedLine[];
  /** old_text's first core line starts at a line start (it begins with whitespace, or a line break precedes it). */
  readonly pinnedStart: boolean;
  /** old_text's last core line runs to its line end (it ends with whitespace, or a line break follows it). */
  readonly pinnedEnd: boolean;
  /** old_text ends with a line break: the region takes the terminator of its last line too. */
  readonly endsWithBreak: boolean;
  /** Line breaks before old_text's first line with text, and blank lines after its last one's break. */
  readonly breaksBefore: number;
  readonly blanksAfter: number;
}

function shapeOf(wanted: readonly WantedLine[]): Shape | null {
  const first = wanted.findIndex((l) => l.key !== "");
  if (first === -1) return null;
  let last = wanted.length - 1;
  while (wanted[last].key === "") last--;
  const core = wanted.slice(first, last + 1);
  return {
    core,
    pinnedStart: first > 0 || WHITESPACE.test(core[0].text[0]),
    pinnedEnd: last < wanted.length - 1 || WHITESPACE.test(core[core.length - 1].text.at(-1)!),
    endsWithBreak: last < wanted.length - 1,
    breaksBefore: first,
    blanksAfter: Math.max(0, wanted.length - 2 - last),
  };
}

/**
 * Where a core line's key sits in a file line's key when it matches except
 * for whitespace, or null. The first line may be a line's tail, the last its
 * head, a single line any part of it, unless old_text pins that side.
 */
function keySpan(
  wanted: string,
  key: string,
  first: boolean,
  last: boolean,
  shape: Shape,
): { from: number; to: number } | null {
  const openStart = first && !shape.pinnedStart;
  const openEnd = last && !shape.pinnedEnd;
  if (openStart && openEnd) {
    const at = key.indexOf(wanted);
    return at === -1 ? null : { from: at, to: at + wanted.length };
  }
  if (openStart) {
    return key.endsWith(wanted) ? { from: key.length - wanted.length, to: key.length } : null;
  }
  if (openEnd) return key.startsWith(wanted) ? { from: 0, to: wanted.length } : null;
  return key === wanted ? { from: 0, to: key.length } : null;
}

/** Regions that match old_text's core except for whitespace: the first ones, and how many were found. */
interface WhitespaceMatches {
  /** The first {@link MAX_MATCHES} regions, as old_text's non-blank lines located in the file. */
  readonly found: Span[][];
  /** How many regions were found in all. */
  readonly count: number;
  /** False when the search stopped at {@link MATCH_BUDGET} before the end of the file. */
  readonly complete: boolean;
}

/** Regions whose non-blank lines equal old_text's core except for whitespace (blank lines ignored). */
function whitespaceMatches(lines: readonly FileLine[], shape: Shape): WhitespaceMatches {
  const wanted = shape.core.filter((l) => l.key !== "");
  const nonBlank = lines.map((_, i) => i).filter((i) => lines[i].key !== "");
  const found: Span[][] = [];
  let count = 0;
  let budget = MATCH_BUDGET;
  for (let p = 0; p + wanted.length <= nonBlank.length; p++) {
    const spans: Span[] = [];
    for (let j = 0; j < wanted.length; j++) {
      budget -= wanted[j].key.length + 1;
      if (budget < 0) return { found, count, complete: false };
      const line = nonBlank[p + j];
      const span = keySpan(wanted[j].key, lines[line].key, j === 0, j === wanted.length - 1, shape);
      if (span === null) break;
      spans.push({ line, ...span });
    }
    if (spans.length < wanted.length) continue;
    count++;
    if (found.length < MAX_MATCHES) found.push(spans);
  }
  return { found, count, complete: true };
}

/**
 * Similarity of a core line to a file line, with the key span it covers;
 * spans are not searched when even the best one would score below `floor`.
 */
function lineSimilarity(
  wanted: WantedLine,
  key: string,
  first: boolean,
  last: boolean,
  shape: Shape,
  floor = 0,
): { score: number; from: number; to: number } {
  const want = wanted.key;
  if (want === "" || key === "") return { score: want === key ? 1 : 0, from: 0, to: key.length };
  const exact = keySpan(want, key, first, last, shape);
  if (exact !== null) return { score: 1, ...exact };
  const shared = common(wanted.grams, key, 0, Math.min(key.length, MAX_COMPARED));
  const keySize = Math.min(key.length, MAX_COMPARED) - 1;
  const sizes = wanted.grams.size + keySize;
  let best = { score: sizes === 0 ? 0 : (2 * shared) / sizes, from: 0, to: key.length };
  const openStart = first && !shape.pinnedStart;
  const openEnd = last && !shape.pinnedEnd;
  // A part of the line shares at most the whole line's bigrams: the best a part can score.
  const partBound = shared === 0 ? 0 : (2 * shared) / (wanted.grams.size + shared);
  if (!(openStart || openEnd) || partBound < floor || partBound <= best.score) return best;
  const consider = (from: number, to: number) => {
    from = Math.max(0, from);
    to = Math.min(key.length, to);
    if (from >= to) return;
    const score = dice(wanted.grams, key, from, to);
    if (score > best.score) best = { score, from, to };
  };
  // A fragment of a line is compared with the part of the line it would cover.
  if (openStart && !openEnd) consider(key.length - want.length, key.length);
  if (openEnd && !openStart) consider(0, want.length);
  if (openStart && openEnd) {
    // Where old_text's first and last few characters are found, the part between is a candidate.
    const found = (part: string) => {
      const at: number[] = [];
      for (let i = key.indexOf(part); i !== -1 && at.length < 16; i = key.indexOf(part, i + 1)) {
        at.push(i);
      }
      return at;
    };
    const heads = found(want.slice(0, 3));
    const tails = found(want.slice(-3)).map((at) => at + Math.min(3, want.length));
    for (const head of heads) consider(head, head + want.length);
    for (const tail of tails) consider(tail - want.length, tail);
    for (const head of heads) for (const tail of tails) if (tail > head) consider(head, tail);
  }
  return best;
}

/** The window of file lines most similar to old_text's core, line by line, if close enough. */
function similarWindow(lines: readonly FileLine[], shape: Shape): Span[] | null {
  const core = shape.core;
  const n = core.length;
  if (n > lines.length) return null;
  const votes = new Map<number, number>();
  const vote = (start: number, weight: number) => {
    if (start >= 0 && start + n <= lines.length) {
      votes.set(start, (votes.get(start) ?? 0) + weight);
    }
  };
  const byKey = new Map<string, number[]>();
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].key === "") continue;
    const list = byKey.get(lines[i].key);
    if (list === undefined) byKey.set(lines[i].key, [i]);
    else if (list.length < MAX_ANCHORS_PER_KEY) list.push(i);
  }
  for (let j = 0; j < n; j++) {
    for (const i of byKey.get(core[j].key) ?? []) vote(i - j, core[j].key.length);
  }
  // Where no line matches whole (a single line, or every line changed), the edge lines'
  // most similar file lines anchor the windows instead.
  if (votes.size === 0 || n === 1) {
    const floor = n === 1 ? MIN_SIMILARITY : MIN_SIMILARITY / 2;
    for (const j of new Set([0, n - 1])) {
      const scored: { i: number; score: number }[] = [];
      lines.forEach((line, i) => {
        const { score } = lineSimilarity(core[j], line.key, j === 0, j === n - 1, shape, floor);
        if (score >= floor) scored.push({ i, score });
      });
      scored.sort((a, b) => b.score - a.score || a.i - b.i);
      for (const { i, score } of scored.slice(0, 8)) vote(i - j, score);
    }
  }
  // Windows far behind the best in whole-line matches are not scored.
  const ranked = [...votes].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const most = ranked.length > 0 ? ranked[0][1] : 0;
  const starts = ranked.filter(([, count]) => count >= most / 2).slice(0, MAX_WINDOWS);
  const weights = core.map((line) => Math.max(1, line.key.length));
  const allWeight = weights.reduce((a, b) => a + b, 0);
  let best: { score: number; spans: Span[] } | null = null;
  for (const [start] of starts) {
    let total = 0;
    let left = allWeight;
    const spans: Span[] = [];
    for (let j = 0; j < n; j++) {
      // Stop once even perfect lines from here on could not beat the best window.
      if (best !== null && (total + left) / allWeight <= best.score) break;
      const line = start + j;
      const sim = lineSimilarity(core[j], lines[line].key, j === 0, j === n - 1, shape);
      total += sim.score * weights[j];
      left -= weights[j];
      spans.push({ line, from: sim.from, to: sim.to });
    }
    if (spans.length < n) continue;
    const score = total / allWeight;
    if (best === null || score > best.score) best = { score, spans };
  }
  return best !== null && best.score >= MIN_SIMILARITY ? best.spans : null;
}

/** The region of the file that a list of spans (old_text's lines located in the file) covers. */
function regionOf(
  lines: readonly FileLine[],
  spans: readonly Span[],
  shape: Shape,
  whitespaceOnly: boolean,
): Region {
  const first = spans[0];
  const last = spans[spans.length - 1];
  const firstLine = lines[first.line];
  const lastLine = lines[last.line];
  let start = shape.pinnedStart
    ? firstLine.start
    : firstLine.start + offsetOfKey(firstLine.text, first.from);
  let end = shape.pinnedEnd
    ? lastLine.end
    : lastLine.start + offsetAfterKey(lastLine.text, last.to);
  if (shape.endsWithBreak) end = lastLine.next;
  // A part of a line found by similarity never splits a character made of a surrogate pair.
  const lowSurrogate = (line: FileLine, at: number) => {
    const code = line.text.charCodeAt(at - line.start);
    return code >= 0xdc00 && code <= 0xdfff;
  };
  if (start > firstLine.start && lowSurrogate(firstLine, start)) start--;
  if (end < lastLine.end && lowSurrogate(lastLine, end)) end++;
  // A whitespace-blind match pairs old_text's non-blank lines with the file's in order; a
  // similar window pairs them position by position.
  const pairs: { wanted: number; line: number }[] = [];
  let k = 0;
  shape.core.forEach((l, j) => {
    if (whitespaceOnly && l.key === "") return;
    const line = spans[k++].line;
    if (l.key !== "") pairs.push({ wanted: j, line });
  });
  const matched = { start, end, firstLine: first.line, lastLine: last.line };
  return { matched, quoted: { ...matched }, pairs, whitespaceOnly };
}

/** Counts occurrences of `needle` in `text`, stopping at `limit`. */
function countUpTo(text: string, needle: string, limit: number): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1 && count < limit; i = text.indexOf(needle, i + 1)) {
    count++;
  }
  return count;
}

/**
 * Widens a region by whole neighbouring lines until its text occurs once in
 * the file (a few lines each way at most); returns how many times it occurs then.
 */
function makeUnique(content: string, lines: readonly FileLine[], region: Bounds): number {
  for (let step = 0; step < 6; step++) {
    const count = countUpTo(content, content.slice(region.start, region.end), 2);
    if (count < 2) return count;
    if (step % 2 === 0 && region.lastLine + 1 < lines.length) {
      const endsAtBreak = region.end === lines[region.lastLine].next &&
        region.end !== lines[region.lastLine].end;
      region.lastLine++;
      region.end = endsAtBreak ? lines[region.lastLine].next : lines[region.lastLine].end;
    } else if (region.firstLine > 0) {
      region.firstLine--;
      region.start = lines[region.firstLine].start;
    } else if (region.lastLine + 1 < lines.length) {
      region.lastLine++;
      region.end = lines[region.lastLine].end;
    } else break;
  }
  return countUpTo(content, content.slice(region.start, region.end), 2);
}

function plural(count: number, word: string): string {
  return count === 1 ? `a ${word}` : `${count} ${word}s`;
}

/** Names a run of whitespace characters in words: "4 spaces", "a tab then 2 spaces". */
function describeWhitespace(run: string): string {
  if (run === "") return "no whitespace";
  const parts: string[] = [];
  for (let i = 0; i < run.length;) {
    let j = i;
    while (j < run.length && run[j] === run[i]) j++;
    const count = j - i;
    const c = run[i];
    if (c === " ") parts.push(plural(count, "space"));
    else if (c === "\t") parts.push(plural(count, "tab"));
    else if (c === "\u00a0") parts.push(plural(count, "non-breaking space") + " (U+00A0)");
    else if (c === "\r") parts.push(plural(count, "carriage return") + " (\\r)");
    else {
      const code = c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
      parts.push(`${count === 1 ? "a" : count} U+${code} space character${count === 1 ? "" : "s"}`);
    }
    i = j;
  }
  return parts.join(" then ");
}

function leading(text: string): string {
  return text.match(/^\s*/)![0];
}

function trailing(text: string): string {
  return text.slice(text.trimEnd().length);
}

/** The first whitespace run inside two lines (equal except for whitespace) that differs. */
function innerDifference(file: string, wanted: string): { file: string; wanted: string } | null {
  const split = (s: string) => s.trim().split(/(\s+)/);
  const a = split(file);
  const b = split(wanted);
  let ai = 0;
  let bi = 0;
  // Tokens and runs alternate; an absent run (`a,b` against `a, b`) shows as a token split.
  while (ai < a.length && bi < b.length) {
    const aRun = ai % 2 === 1;
    const bRun = bi % 2 === 1;
    if (aRun && bRun) {
      if (a[ai] !== b[bi]) return { file: a[ai], wanted: b[bi] };
      ai++;
      bi++;
    } else if (!aRun && !bRun) {
      if (a[ai] === b[bi]) {
        ai++;
        bi++;
      } else {
        return a[ai].length < b[bi].length ? { file: a[ai + 1] ?? "", wanted: "" } : {
          file: "",
          wanted: b[bi + 1] ?? "",
        };
      }
    } else return aRun ? { file: a[ai], wanted: "" } : { file: "", wanted: b[bi] };
  }
  return null;
}

/** Quotes a stretch of a line for a note, bounded, its whitespace escaped by JSON. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/**
 * Where two lines differ beyond whitespace: the stretch between their common
 * start and common end, widened to whole words, quoted.
 */
function textDifference(file: string, wanted: string): { file: string; wanted: string } {
  let start = 0;
  while (start < file.length && start < wanted.length && file[start] === wanted[start]) start++;
  let end = 0;
  while (
    end < file.length - start && end < wanted.length - start &&
    file[file.length - 1 - end] === wanted[wanted.length - 1 - end]
  ) end++;
  const word = /[\p{L}\p{N}_]/u;
  while (start > 0 && word.test(file[start - 1])) start--;
  while (end > 0 && word.test(file[file.length - end])) end--;
  const show = (text: string) => {
    const middle = text.slice(start, text.length - end);
    return middle === "" ? "nothing" : quoted(middle);
  };
  return { file: show(file), wanted: show(wanted) };
}

/** The whitespace notes for one file line against the old_text line it stands for. */
function lineNotes(
  number: number,
  file: string,
  wanted: WantedLine,
  checkLead: boolean,
  checkTrail: boolean,
  checkInner: boolean,
): string[] {
  const notes: string[] = [];
  const fileLead = leading(file);
  const wantedLead = leading(wanted.text);
  if (checkLead && fileLead !== wantedLead) {
    const indent = (run: string) =>
      run === "" ? "has no indentation" : `indents with ${describeWhitespace(run)}`;
    notes.push(`line ${number}: the file ${indent(fileLead)} where old_text ${indent(wantedLead)}`);
  }
  const inner = checkInner ? innerDifference(file, wanted.text) : null;
  if (inner !== null) {
    notes.push(
      `line ${number}: inside the line the file has ${
        describeWhitespace(inner.file)
      } where old_text has ${describeWhitespace(inner.wanted)}`,
    );
  }
  const fileTrail = trailing(file);
  const wantedTrail = trailing(wanted.text);
  if (checkTrail && fileTrail !== wantedTrail) {
    notes.push(
      fileTrail === ""
        ? `line ${number}: old_text has ${
          describeWhitespace(wantedTrail)
        } at the end of the line where the file has none`
        : `line ${number}: the file has ${describeWhitespace(fileTrail)} at the end of the line ` +
          `where old_text has ${wantedTrail === "" ? "none" : describeWhitespace(wantedTrail)}`,
    );
  }
  return notes;
}

function lineRange(first: number, last: number): string {
  return first === last ? `line ${first + 1}` : `lines ${first + 1}–${last + 1}`;
}

/** The part of a file line inside the matched region. */
function partInRegion(content: string, line: FileLine, region: Bounds): string {
  return content.slice(Math.max(region.start, line.start), Math.min(region.end, line.end));
}

/** File lines (1-based) of a region whose text differs from old_text's beyond whitespace. */
function staleLines(
  content: string,
  lines: readonly FileLine[],
  region: Region,
  shape: Shape,
): number[] {
  return region.pairs.filter(({ wanted, line }) =>
    keyOf(partInRegion(content, lines[line], region.matched)) !== shape.core[wanted].key
  ).map(({ line }) => line + 1);
}

function lineEndings(ends: ReadonlySet<string>): string {
  if (ends.size > 1) return "mixed line endings";
  return ends.has("\r\n") ? "CRLF line endings (\\r\\n)" : "LF line endings (\\n)";
}

/** The notes of how a region differs from old_text: whitespace per line, line ends, blank lines, stale lines. */
function regionNotes(
  content: string,
  lines: readonly FileLine[],
  region: Region,
  shape: Shape,
): string[] {
  const notes: string[] = [];
  const core = shape.core;
  const matched = region.matched;
  region.pairs.forEach(({ wanted, line }) => {
    const w = core[wanted];
    const part = partInRegion(content, lines[line], matched);
    const atLineStart = line > matched.firstLine || shape.pinnedStart;
    const toLineEnd = line < matched.lastLine || shape.pinnedEnd;
    if (keyOf(part) !== w.key) {
      const { file, wanted } = textDifference(part.trim(), w.text.trim());
      notes.push(`line ${line + 1}: the file has ${file} where old_text has ${wanted}`);
    }
    notes.push(...lineNotes(line + 1, part, w, atLineStart, toLineEnd, keyOf(part) === w.key));
  });
  const fileLines = matched.lastLine - matched.firstLine + 1;
  if (region.whitespaceOnly && fileLines !== core.length) {
    notes.push(
      `blank lines differ: old_text has ${core.length} lines where the file has ${fileLines} (${
        lineRange(matched.firstLine, matched.lastLine)
      })`,
    );
  }
  const fileEnds = new Set<string>();
  const lastBreak = shape.endsWithBreak ? matched.lastLine : matched.lastLine - 1;
  for (let i = matched.firstLine; i <= lastBreak; i++) {
    const ending = content.slice(lines[i].end, lines[i].next);
    if (ending !== "") fileEnds.add(ending);
  }
  const wantedEnds = new Set(
    core.map((l) => l.ending).filter((ending, j) =>
      ending !== "" && (j < core.length - 1 || shape.endsWithBreak)
    ),
  );
  if (fileEnds.size > 0 && wantedEnds.size > 0) {
    const file = lineEndings(fileEnds);
    const wanted = lineEndings(wantedEnds);
    if (file !== wanted) notes.push(`the file has ${file} where old_text has ${wanted}`);
  }
  if (shape.breaksBefore > 0) {
    notes.push(
      `old_text begins with ${plural(shape.breaksBefore, "line break")} before its first line of ` +
        `text; the block starts at line ${matched.firstLine + 1}`,
    );
  }
  if (shape.blanksAfter > 0) {
    notes.push(
      `old_text ends with ${
        plural(shape.blanksAfter, "blank line")
      } after its last line of text; ` +
        `the block ends with the line break of line ${matched.lastLine + 1}`,
    );
  }
  const last = lines[matched.lastLine];
  if (shape.endsWithBreak && last.next === last.end) {
    notes.push(
      `line ${matched.lastLine + 1} is the last line and the file has no line break after it; ` +
        "old_text ends with one",
    );
  }
  return notes;
}

/** A fence of backticks longer than any run of backticks in `text` (at least three). */
function fenceFor(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  return "`".repeat(Math.max(3, longest + 1));
}

/** Quotes `text` between fence lines: the text is exactly what lies between them, less the line break before the closing fence. */
function fenced(text: string): string {
  const fence = fenceFor(text);
  return `${fence}\n${text}\n${fence}`;
}

/** The longest prefix of `text` within `maxBytes`, cut after a line break when one is in reach. */
function boundedQuote(text: string, maxBytes: number): { text: string; cut: boolean } {
  const cut = cutUtf8(text, maxBytes);
  if (!cut.cut) return cut;
  const lastBreak = cut.text.lastIndexOf("\n");
  return { text: lastBreak > 0 ? cut.text.slice(0, lastBreak + 1) : cut.text, cut: true };
}

/**
 * Line numbers as ranges: "line 4", "lines 2–9", "lines 3, 7–8"; past
 * {@link MAX_RANGES} ranges, the lines left are counted ("and 40 more lines").
 */
function numberRanges(numbers: readonly number[]): string {
  const ranges: string[] = [];
  let i = 0;
  while (i < numbers.length && ranges.length < MAX_RANGES) {
    let j = i;
    while (j + 1 < numbers.length && numbers[j + 1] === numbers[j] + 1) j++;
    ranges.push(i === j ? `${numbers[i]}` : `${numbers[i]}–${numbers[j]}`);
    i = j + 1;
  }
  const left = numbers.length - i;
  if (left > 0) ranges.push(`and ${left} more ${left === 1 ? "line" : "lines"}`);
  return `${numbers.length === 1 ? "line" : "lines"} ${ranges.join(", ")}`;
}

/** Notes that say the same of several lines, said once with the lines as ranges. */
function groupedNotes(notes: readonly string[]): string[] {
  const byText = new Map<string, number[]>();
  const order: string[] = [];
  for (const note of notes) {
    const match = note.match(/^line (\d+): ([\s\S]*)$/);
    const text = match === null ? note : match[2];
    if (!byText.has(text)) {
      byText.set(text, []);
      order.push(text);
    }
    if (match !== null) byText.get(text)!.push(Number(match[1]));
  }
  return order.map((text) => {
    const numbers = byText.get(text)!;
    return numbers.length === 0 ? text : `${numberRanges(numbers)}: ${text}`;
  });
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A region's notes and its quoted text, the quote within `budget` bytes. */
function describeRegion(
  content: string,
  lines: readonly FileLine[],
  region: Region,
  shape: Shape,
  budget: number,
): { text: string; bytes: number } {
  const notes = groupedNotes(regionNotes(content, lines, region, shape));
  const unique = makeUnique(content, lines, region.quoted) < 2;
  const { start, end, firstLine, lastLine } = region.quoted;
  const whole = content.slice(start, end);
  const quote = boundedQuote(whole, budget);
  const parts: string[] = [];
  if (notes.length > 0) {
    const listed = notes.slice(0, MAX_NOTES).map((note) => `- ${note}`);
    if (notes.length > MAX_NOTES) listed.push(`- and ${notes.length - MAX_NOTES} more`);
    parts.push(`How the file differs from old_text:\n${listed.join("\n")}`);
  }
  const matched = region.matched;
  if (start !== matched.start || end !== matched.end) {
    parts.push(
      unique
        ? `Its text occurs more than once, so the block below is widened to whole neighbouring lines, to ${
          lineRange(firstLine, lastLine)
        }, where it occurs once.`
        : `Its text occurs more than once, even widened to ${
          lineRange(firstLine, lastLine)
        }; add more neighbouring lines to make old_text unique.`,
    );
  }
  const range = lineRange(firstLine, lastLine);
  if (quote.cut) {
    const shownLines = quote.text.split("\n").length - (quote.text.endsWith("\n") ? 1 : 0);
    parts.push(
      `The current text of ${range} is ${
        byteLength(whole)
      } bytes; the block below holds its first ` +
        `${byteLength(quote.text)} bytes (${shownLines} lines${
          quote.text.endsWith("\n") ? ", ending with a line break" : ""
        }), exactly as in the file, between the fence lines:`,
    );
  } else {
    parts.push(
      `The exact current text of ${range}${
        whole.endsWith("\n") ? " (it ends with a line break)" : ""
      }, between the fence lines:`,
    );
  }
  parts.push(fenced(quote.text));
  return { text: parts.join("\n"), bytes: byteLength(quote.text) };
}

/**
 * The message of `old_text_not_found`: the closest region of `content` quoted
 * exactly (fenced, so that it can be copied as `old_text`), with its line
 * range and the whitespace differences in words; or a short line saying
 * nothing is close.
 *
 * @example
 * ```ts
 * import { notFoundMessage } from "./edit_hints.ts";
 * const message = notFoundMessage("a.ts", "if (x) {\n\treturn 1;\n}\n", "if (x) {\n    return 1;");
 * console.log(message.includes("\treturn 1;")); // true
 * ```
 */
export function notFoundMessage(display: string, content: string, oldText: string): string {
  const head = `old_text does not occur in ${display}.`;
  const shape = shapeOf(splitWanted(oldText));
  if (shape === null) return `${head} It holds only whitespace; give the text to replace.`;
  const lines = splitFile(content);
  const { found: matches, count, complete } = whitespaceMatches(lines, shape);
  if (matches.length > 0) {
    // The closest first: the fewest lines that differ from old_text's at all.
    const ranked = matches.map((spans) => {
      const region = regionOf(lines, spans, shape, true);
      const differing = region.pairs.filter(({ wanted, line }) =>
        partInRegion(content, lines[line], region.matched) !== shape.core[wanted].text
      ).length;
      return { region, differing };
    }).sort((a, b) => a.differing - b.differing || a.region.matched.start - b.region.matched.start);
    const shown = ranked.slice(0, MAX_CANDIDATES).map((r) => r.region);
    const parts: string[] = [];
    if (count === 1 && complete) {
      const range = lineRange(shown[0].matched.firstLine, shown[0].matched.lastLine);
      parts.push(
        `${head} ${capitalized(range)} ${range.startsWith("lines") ? "match" : "matches"} it ` +
          "except for whitespace; copy the block below as old_text.",
      );
    } else {
      parts.push(
        `${head} ${complete ? "" : "At least "}${count} ${
          count === 1 ? "place matches" : "places match"
        } it except for whitespace` +
          (count > shown.length
            ? ` (the closest ${shown.length}${
              count > matches.length ? ` of the first ${matches.length}` : ""
            } are shown)`
            : "") +
          "; copy the block of the one you mean as old_text.",
      );
    }
    let budget = MAX_QUOTED_BYTES;
    shown.forEach((region, i) => {
      if (budget <= 0) return;
      const described = describeRegion(content, lines, region, shape, budget);
      budget -= described.bytes;
      if (shown.length > 1) parts.push(`Candidate ${i + 1}:`);
      parts.push(described.text);
    });
    return parts.join("\n");
  }
  const window = similarWindow(lines, shape);
  if (window === null) {
    return `${head} Nothing in the file is close to it, even ignoring whitespace; read the file ` +
      "again and copy old_text exactly.";
  }
  const region = regionOf(lines, window, shape, false);
  const stale = staleLines(content, lines, region, shape);
  const range = lineRange(region.matched.firstLine, region.matched.lastLine);
  return `${head} The closest text is ${range}; it differs from old_text beyond whitespace at ` +
    `${numberRanges(stale)} (the file has changed since ` +
    "it was read, or old_text is mistyped). If it is the text you mean, copy the block below as " +
    `old_text and make new_text from it.\n${
      describeRegion(content, lines, region, shape, MAX_QUOTED_BYTES).text
    }`;
}

/** Index of the line holding `offset`, given each line's start offset in order. */
function lineIndexAt(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid] <= offset) low = mid;
    else high = mid - 1;
  }
  return low;
}

function numbered(index: number, text: string): string {
  const shown = text.length > MAX_CONTEXT_LINE
    ? `${text.slice(0, MAX_CONTEXT_LINE)} [line cut at ${MAX_CONTEXT_LINE} characters]`
    : text;
  return numberedLine(index, shown);
}

/**
 * The message of `old_text_not_unique`: the count, then each occurrence (the
 * first {@link MAX_LISTED_OCCURRENCES}, within a few KB) as numbered lines in
 * `read`'s format with one line of context either side.
 *
 * @example
 * ```ts
 * import { notUniqueMessage } from "./edit_hints.ts";
 * const text = "a\nx = 1\nb\nx = 1\nc\n";
 * console.log(notUniqueMessage("f.py", text, "x = 1", [2, 10]).includes("     4\tx = 1")); // true
 * ```
 */
export function notUniqueMessage(
  display: string,
  content: string,
  oldText: string,
  found: readonly number[],
): string {
  const starts = [0];
  for (let i = content.indexOf("\n"); i !== -1; i = content.indexOf("\n", i + 1)) {
    starts.push(i + 1);
  }
  const lineText = (i: number) => {
    const end = i + 1 < starts.length ? starts[i + 1] - 1 : content.length;
    return content.slice(starts[i], end);
  };
  const blocks: string[] = [];
  let bytes = 0;
  for (const at of found.slice(0, MAX_LISTED_OCCURRENCES)) {
    const first = lineIndexAt(starts, at);
    const last = lineIndexAt(starts, at + Math.max(0, oldText.length - 1));
    const shown: string[] = [];
    if (first > 0) shown.push(numbered(first - 1, lineText(first - 1)));
    shown.push(numbered(first, lineText(first)));
    if (last - first > 1) shown.push(`      \t[… through line ${last + 1}]`);
    if (last > first) shown.push(numbered(last, lineText(last)));
    if (last + 1 < starts.length && !(last + 2 === starts.length && lineText(last + 1) === "")) {
      shown.push(numbered(last + 1, lineText(last + 1)));
    }
    const block = `At line ${first + 1}:\n${shown.join("\n")}`;
    if (blocks.length > 0 && bytes + byteLength(block) > MAX_CONTEXT_BYTES) break;
    blocks.push(block);
    bytes += byteLength(block);
  }
  const listed = blocks.length < found.length ? `the first ${blocks.length} with` : `each with`;
  return `old_text occurs ${found.length} times in ${display}; include more surrounding text so ` +
    `that it matches exactly once. The occurrences (${listed} a line of context either side, ` +
    `numbered as read shows them):\n${blocks.join("\n")}`;
}
