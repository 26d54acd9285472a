/**
 * Where the text `edit` was asked to replace most nearly is in a file when it
 * is not there exactly: the regions that match `old_text` except for
 * whitespace, or else the window of lines most similar to it line by line
 * (bigram similarity, with budgets that keep a large or repetitive file
 * cheap). Pure search: what is said about the region is in `messages.ts`.
 *
 * @module
 */

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

/** One line of the file: its text (without terminator) and where it sits. */
export interface FileLine {
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
export interface WantedLine {
  readonly text: string;
  readonly key: string;
  /** The terminator after it in `old_text`: `"\r\n"`, `"\n"`, or `""` for the last line. */
  readonly ending: string;
  /** Its key's bigrams, for similarity. */
  readonly grams: Bigrams;
}

/** Where a wanted line lies in a file line: the key span it covers. */
export interface Span {
  /** Index in the file's lines. */
  readonly line: number;
  /** First key character covered. */
  readonly from: number;
  /** Key character just past the covered part. */
  readonly to: number;
}

/** Offsets and lines of a stretch of the file. */
export interface Bounds {
  start: number;
  end: number;
  /** The first and last line it touches, 0-based. */
  firstLine: number;
  lastLine: number;
}

/** A region of the file close to `old_text`. */
export interface Region {
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

/** A text with every whitespace character removed: what whitespace-blind matching compares. */
export function keyOf(text: string): string {
  return text.replace(/\s+/g, "");
}

/** The lines of a file, each with its offsets, terminator and key. */
export function splitFile(content: string): FileLine[] {
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

/** The lines of `old_text`, each with its key, terminator and bigrams. */
export function splitWanted(oldText: string): WantedLine[] {
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
export interface Shape {
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

/** How `old_text`'s lines are pinned, or null when they hold only whitespace. */
export function shapeOf(wanted: readonly WantedLine[]): Shape | null {
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
export interface WhitespaceMatches {
  /** The first {@link MAX_MATCHES} regions, as old_text's non-blank lines located in the file. */
  readonly found: Span[][];
  /** How many regions were found in all. */
  readonly count: number;
  /** False when the search stopped at {@link MATCH_BUDGET} before the end of the file. */
  readonly complete: boolean;
}

/** Regions whose non-blank lines equal old_text's core except for whitespace (blank lines ignored). */
export function whitespaceMatches(lines: readonly FileLine[], shape: Shape): WhitespaceMatches {
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
export function similarWindow(lines: readonly FileLine[], shape: Shape): Span[] | null {
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
export function regionOf(
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
export function makeUnique(content: string, lines: readonly FileLine[], region: Bounds): number {
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
