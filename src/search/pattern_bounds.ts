/**
 * The bounds on what a `grep` pattern may cost to compile. re2js compiles
 * in time about linear in the program it builds, but a counted repetition
 * multiplies the program (`(?:a{1000}){1000}` is refused by the engine, yet
 * a pattern of a few kilobytes of `x{1000}` builds over a million
 * instructions, seconds of work); a long literal takes long to parse; a
 * Unicode class (`\pL`) costs about a hundred plain instructions, and a
 * case-folded class spanning many characters (`(?i)[\x{100}-\x{1E900}]`)
 * thousands. So a pattern is bounded twice before it is compiled: by its
 * length, and by the cost of the program it would build, estimated from its
 * text.
 *
 * @module
 */
import { ToolError } from "../errors.ts";

/** Longest `grep` pattern, in UTF-16 code units. */
export const MAX_PATTERN_LENGTH = 4096;

/**
 * Most a `grep` pattern's program may cost, in instructions as
 * {@link programSize} estimates them: a counted repetition multiplies what
 * it repeats.
 */
export const MAX_PATTERN_PROGRAM = 5_000;

/** What a Unicode class escape (`\pL`, `\p{Greek}`, `\PN`) counts for. */
const UNICODE_CLASS_COST = 100;
/** What a class range wider than {@link WIDE_RANGE} counts for when case is folded. */
const FOLDED_WIDE_RANGE_COST = 2_000;
/** The widest range whose case folding is cheap (it is folded character by character). */
const WIDE_RANGE = 256;

/** One group being read: the size of what it holds so far, and of its last item. */
interface Frame {
  total: number;
  last: number;
}

/** One member of a class: where it ends, the character it names (if one), and its cost. */
interface ClassMember {
  readonly end: number;
  readonly char: number | null;
  readonly cost: number;
}

/** The class member that starts at `i`. */
function classMember(pattern: string, i: number): ClassMember {
  if (pattern.startsWith("[:", i)) {
    const close = pattern.indexOf(":]", i + 2);
    return { end: close === -1 ? i + 1 : close + 2, char: null, cost: 0 };
  }
  if (pattern[i] !== "\\") {
    const char = pattern.codePointAt(i)!;
    return { end: i + (char > 0xffff ? 2 : 1), char, cost: 0 };
  }
  const { end, size } = escapeEnd(pattern, i);
  const letter = pattern[i + 1];
  if (letter === "p" || letter === "P") return { end, char: null, cost: size };
  if (letter === "x") {
    const hex = pattern.slice(i + 2, end).replace(/[{}]/g, "");
    const char = /^[0-9a-fA-F]{1,6}$/.test(hex) ? parseInt(hex, 16) : null;
    return { end, char, cost: 0 };
  }
  if (letter in CONTROL_ESCAPES) return { end, char: CONTROL_ESCAPES[letter], cost: 0 };
  return {
    end,
    char: /[a-zA-Z0-9]/.test(letter ?? "") ? null : pattern.codePointAt(i + 1)!,
    cost: 0,
  };
}

/** The characters of RE2's control escapes. */
const CONTROL_ESCAPES: Readonly<Record<string, number>> = {
  a: 7,
  f: 12,
  t: 9,
  n: 10,
  r: 13,
  v: 11,
};

/**
 * The class that starts at `start` (at its `[`): the index after its `]`,
 * and its cost: one, plus its Unicode class escapes, plus, when case is
 * folded, its wide ranges.
 */
function classAt(pattern: string, start: number, folded: boolean): { end: number; cost: number } {
  let i = start + 1;
  if (pattern[i] === "^") i++;
  let cost = 1;
  let first = true;
  while (i < pattern.length && (pattern[i] !== "]" || first)) {
    first = false; // a leading ] is a member
    const low = classMember(pattern, i);
    cost += low.cost;
    i = low.end;
    if (pattern[i] !== "-" || pattern[i + 1] === "]" || i + 1 >= pattern.length) continue;
    const high = classMember(pattern, i + 1);
    cost += high.cost;
    i = high.end;
    // An end that names no one character is taken at its widest.
    if (folded && (high.char ?? 0x10ffff) - (low.char ?? 0) > WIDE_RANGE) {
      cost += FOLDED_WIDE_RANGE_COST;
    }
  }
  return { end: i + 1, cost };
}

/** Where the escape that starts at `start` (at its backslash) ends, and what it costs. */
function escapeEnd(pattern: string, start: number): { end: number; size: number } {
  const letter = pattern[start + 1];
  if (letter === "Q") {
    const close = pattern.indexOf("\\E", start + 2);
    const end = close === -1 ? pattern.length : close + 2;
    return { end, size: Math.max(1, (close === -1 ? end : close) - (start + 2)) };
  }
  if (letter === "x" && pattern[start + 2] === "{") {
    const close = pattern.indexOf("}", start + 3);
    return { end: close === -1 ? pattern.length : close + 1, size: 1 };
  }
  if ((letter === "p" || letter === "P") && pattern[start + 2] === "{") {
    const close = pattern.indexOf("}", start + 3);
    return { end: close === -1 ? pattern.length : close + 1, size: UNICODE_CLASS_COST };
  }
  if (letter === "p" || letter === "P") return { end: start + 3, size: UNICODE_CLASS_COST };
  if (letter === "x") return { end: start + 4, size: 1 };
  return { end: start + 2, size: 1 };
}

/**
 * An estimate, from the text alone, of what compiling `pattern` costs, in
 * instructions as RE2's own size check counts them: each literal
 * character, class or assertion one, a group its contents plus two, `*`,
 * `+` and `?` two more, and `{n,m}` what it repeats times m (or n when
 * unbounded) plus m − n; a Unicode class escape counts as 100, and, when
 * case is folded (`caseInsensitive`, or an `i` flag anywhere in the
 * pattern), a class range over 256 characters wide as 2000. Errs high:
 * `(?i)` counts as a group, a character beyond the BMP outside a class as
 * two.
 */
export function programSize(pattern: string, caseInsensitive = false): number {
  const folded = caseInsensitive || /\(\?[a-zA-Z-]*i/.test(pattern);
  const frames: Frame[] = [{ total: 0, last: 0 }];
  const item = (size: number) => {
    const frame = frames[frames.length - 1];
    frame.total += size;
    frame.last = size;
  };
  const repeat = (times: number, extra: number) => {
    const frame = frames[frames.length - 1];
    const grown = frame.last * times + extra;
    frame.total += grown - frame.last;
    frame.last = grown;
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "\\") {
      const { end, size } = escapeEnd(pattern, i);
      item(size);
      // A quantifier after \Q…\E repeats its last character only.
      if (pattern[i + 1] === "Q") frames[frames.length - 1].last = 1;
      i = end;
    } else if (c === "[") {
      const { end, cost } = classAt(pattern, i, folded);
      item(cost);
      i = end;
    } else if (c === "(") {
      frames.push({ total: 0, last: 0 });
      i++;
    } else if (c === ")") {
      const inner = frames.length > 1 ? frames.pop()!.total : 0;
      item(inner + 2);
      i++;
    } else if (c === "|") {
      const frame = frames[frames.length - 1];
      frame.total += 1;
      frame.last = 0;
      i++;
    } else if (c === "*" || c === "+" || c === "?") {
      repeat(1, 2);
      i++;
    } else if (c === "{") {
      const counted = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (counted === null) {
        item(1);
        i++;
        continue;
      }
      const min = Number(counted[1]);
      const max = counted[2] === undefined ? min : counted[3] === "" ? null : Number(counted[3]);
      // The engine refuses a count over 1000 as it parses it, before any program is built.
      if (min > 1000 || (max !== null && max > 1000)) repeat(1, 0);
      else if (max === null) repeat(Math.max(1, min), 2);
      else repeat(Math.max(1, max), Math.max(0, max - min));
      i += counted[0].length;
    } else {
      item(1);
      i++;
    }
  }
  // Groups left open are an error for the engine; their contents still count.
  return frames.reduce((sum, frame) => sum + frame.total, 0);
}

/**
 * Throws `invalid_input` when `pattern` is longer than
 * {@link MAX_PATTERN_LENGTH} or its program would pass
 * {@link MAX_PATTERN_PROGRAM}; the message names the bound.
 */
export function checkPatternBounds(pattern: string, caseInsensitive = false): void {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new ToolError(
      "invalid_input",
      `pattern is ${pattern.length} characters long; the most is ${MAX_PATTERN_LENGTH}. ` +
        "Search for a shorter pattern (a distinctive part of the text) and narrow with glob or path.",
    );
  }
  const size = programSize(pattern, caseInsensitive);
  if (size > MAX_PATTERN_PROGRAM) {
    throw new ToolError(
      "invalid_input",
      `pattern would cost about ${size} instructions to compile; the most is ` +
        `${MAX_PATTERN_PROGRAM}. Counted repetitions multiply what they repeat, a Unicode class ` +
        `(\\pL) counts as ${UNICODE_CLASS_COST}: use smaller counts, + or * instead, or fewer ` +
        "classes.",
    );
  }
}
