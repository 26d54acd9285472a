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
import { byteLength, cutUtf8, numberedLine } from "../shared/text.ts";
import {
  keyOf,
  makeUnique,
  regionOf,
  shapeOf,
  similarWindow,
  splitFile,
  splitWanted,
  whitespaceMatches,
} from "./near_miss.ts";
import type { Bounds, FileLine, Region, Shape, WantedLine } from "./near_miss.ts";

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
/** Most line ranges one note names; the rest are counted. */
const MAX_RANGES = 24;

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
 * import { notFoundMessage } from "./messages.ts";
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
 * import { notUniqueMessage } from "./messages.ts";
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
