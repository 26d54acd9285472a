/**
 * The JavaScript regular expressions picomatch makes from globs, read into a
 * tree, so that a glob's cost can be bounded: JavaScript's engine
 * backtracks, and a short glob such as `*?*?*?*?*?*?*?*?*?*?x` takes seconds
 * to fail on an ordinary file name (each `*` tries every length). The tree
 * tells whether the expression can backtrack beyond a square of the input's
 * length ({@link backtracksBounded}); when it can, the same expression runs
 * on re2js, in linear time, instead ({@link reversedRe2Source}).
 *
 * RE2 has no lookahead, and picomatch's expressions use it (to keep a `*`
 * from matching `.` and `..` or nothing at all). So the expression is
 * reversed and matched against the reversed input: a lookahead becomes a
 * lookbehind, which re2js runs in linear time. JavaScript's semantics are
 * kept exactly: `.` excludes the line terminators, `\s` is JavaScript's
 * whitespace, and the input is read by UTF-16 code unit, as a JavaScript
 * expression without the `u` flag reads it ({@link re2Input}).
 *
 * Only what a JavaScript expression without flags can say is read; a
 * construct outside it (a backreference, a lookbehind) throws
 * {@link UnsupportedRegex}.
 *
 * @module
 */

/** A node of the tree. */
export type RegexNode =
  | { readonly kind: "alternation"; readonly options: readonly RegexNode[] }
  | { readonly kind: "sequence"; readonly items: readonly RegexNode[] }
  | { readonly kind: "group"; readonly look: "" | "=" | "!"; readonly body: RegexNode }
  | {
    readonly kind: "repeat";
    readonly body: RegexNode;
    readonly min: number;
    /** `Infinity` when unbounded. */
    readonly max: number;
  }
  | { readonly kind: "anchor"; readonly end: boolean }
  /** One UTF-16 code unit from a set of ranges (inclusive), or outside them when `negated`. */
  | {
    readonly kind: "set";
    readonly ranges: readonly (readonly [number, number])[];
    readonly negated: boolean;
  }
  /** `\b` (or `\B` when `negated`). */
  | { readonly kind: "boundary"; readonly negated: boolean };

/** Thrown for an expression outside what this module reads. */
export class UnsupportedRegex extends Error {}

/** Inclusive ranges of UTF-16 code units. */
type Ranges = readonly (readonly [number, number])[];

const DIGITS: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
/** JavaScript's `\s`: WhiteSpace and LineTerminator. */
const SPACE: Ranges = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
/** What `.` excludes: the line terminators. */
const LINE_TERMINATORS: Ranges = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];
const CONTROL: Readonly<Record<string, number>> = { t: 9, n: 10, v: 11, f: 12, r: 13 };

/** The ranges of UTF-16 code units outside `ranges`. */
function complement(ranges: Ranges): Ranges {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  let next = 0;
  for (const [low, high] of sorted) {
    if (low > next) out.push([next, low - 1]);
    next = Math.max(next, high + 1);
  }
  if (next <= 0xffff) out.push([next, 0xffff]);
  return out;
}

/** The capturing groups of an expression's source: each `(` not escaped, in no class, and not `(?`. */
function capturingGroups(source: string): number {
  let count = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "(" && source[i + 1] !== "?") count++;
  }
  return count;
}

/** Reads a regular expression's source, one UTF-16 code unit at a time. */
class Reader {
  i = 0;
  /** How many capturing groups the expression has (what a `\N` may refer to). */
  readonly groups: number;

  /** Starts at the beginning of `source`. */
  constructor(readonly source: string) {
    this.groups = capturingGroups(source);
  }

  /** The whole expression. */
  read(): RegexNode {
    const node = this.alternation();
    if (this.i < this.source.length) throw new UnsupportedRegex(`unmatched ) at ${this.i}`);
    return node;
  }

  alternation(): RegexNode {
    const options = [this.sequence()];
    while (this.source[this.i] === "|") {
      this.i++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0] : { kind: "alternation", options };
  }

  sequence(): RegexNode {
    const items: RegexNode[] = [];
    while (
      this.i < this.source.length && this.source[this.i] !== "|" && this.source[this.i] !== ")"
    ) {
      const atom = this.atom();
      items.push(this.quantified(atom));
    }
    return { kind: "sequence", items };
  }

  quantified(atom: RegexNode): RegexNode {
    const c = this.source[this.i];
    let min: number;
    let max: number;
    if (c === "*" || c === "+" || c === "?") {
      this.i++;
      [min, max] = c === "*" ? [0, Infinity] : c === "+" ? [1, Infinity] : [0, 1];
    } else {
      const counted = c === "{" ? /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.i)) : null;
      if (counted === null) return atom;
      this.i += counted[0].length;
      min = Number(counted[1]);
      max = counted[2] === undefined ? min : counted[3] === "" ? Infinity : Number(counted[3]);
      // RE2 refuses counts over 1000; picomatch makes none.
      if (min > 1000 || (max !== Infinity && max > 1000) || max < min) {
        throw new UnsupportedRegex(`the count ${counted[0]}`);
      }
    }
    if (this.source[this.i] === "?") this.i++; // lazy: the same language
    if (atom.kind === "anchor" || atom.kind === "boundary") {
      throw new UnsupportedRegex("a quantified assertion");
    }
    if (atom.kind === "group" && atom.look !== "") {
      // A quantified lookahead (Annex B) matches nothing, so a repetition after its first stops:
      // it is the lookahead itself when required at least once, and nothing when optional.
      return this.quantified(min === 0 ? { kind: "sequence", items: [] } : atom);
    }
    return this.quantified({ kind: "repeat", body: atom, min, max });
  }

  atom(): RegexNode {
    const c = this.source[this.i++];
    switch (c) {
      case "(": {
        let look: "" | "=" | "!" = "";
        if (this.source.startsWith("?:", this.i)) this.i += 2;
        else if (this.source.startsWith("?=", this.i)) [look, this.i] = ["=", this.i + 2];
        else if (this.source.startsWith("?!", this.i)) [look, this.i] = ["!", this.i + 2];
        else if (this.source[this.i] === "?") {
          throw new UnsupportedRegex("a lookbehind or named group");
        }
        const body = this.alternation();
        if (this.source[this.i++] !== ")") throw new UnsupportedRegex("an unclosed group");
        return { kind: "group", look, body };
      }
      case "[":
        return this.set();
      case ".":
        return { kind: "set", ranges: LINE_TERMINATORS, negated: true };
      case "^":
        return { kind: "anchor", end: false };
      case "$":
        return { kind: "anchor", end: true };
      case "\\":
        return this.escape(false);
      case "*":
      case "+":
      case "?":
        throw new UnsupportedRegex("a quantifier with nothing to repeat");
      default: {
        // `{`, `}` and `]` not forming syntax stand for themselves (Annex B).
        const code = c.charCodeAt(0);
        return { kind: "set", ranges: [[code, code]], negated: false };
      }
    }
  }

  /**
   * An escape after its backslash, as a JavaScript expression without the
   * `u` flag reads it (Annex B): in a class `\b` is a backspace; `\N` is a
   * backreference only when the expression has N capturing groups (refused
   * here), otherwise an octal escape (`\8`, `\9`: the digit itself); `\c`
   * and `\x`, `\u` without their digits, and any other letter stand for
   * themselves.
   */
  escape(inClass: boolean): RegexNode & { kind: "set" | "boundary" } {
    const c = this.source[this.i++];
    if (c === undefined) throw new UnsupportedRegex("a trailing backslash");
    const one = (code: number) => ({
      kind: "set" as const,
      ranges: [[code, code]] as Ranges,
      negated: false,
    });
    if (c === "b" && !inClass) return { kind: "boundary", negated: false };
    if (c === "B" && !inClass) return { kind: "boundary", negated: true };
    if (c === "b") return one(8);
    if (c === "d" || c === "D") return { kind: "set", ranges: DIGITS, negated: c === "D" };
    if (c === "w" || c === "W") return { kind: "set", ranges: WORD, negated: c === "W" };
    if (c === "s" || c === "S") return { kind: "set", ranges: SPACE, negated: c === "S" };
    if (c in CONTROL) return one(CONTROL[c]);
    if (/[0-9]/.test(c)) {
      const decimal = /^[0-9]*/.exec(this.source.slice(this.i))![0];
      if (c !== "0" && !inClass && Number(c + decimal) <= this.groups) {
        throw new UnsupportedRegex(`the backreference \\${c}${decimal}`);
      }
      if (c === "8" || c === "9") return one(c.charCodeAt(0));
      // A legacy octal escape: up to three octal digits, at most \377.
      let value = Number(c);
      while (
        /[0-7]/.test(this.source[this.i] ?? "") && value * 8 + Number(this.source[this.i]) <= 0o377
      ) {
        value = value * 8 + Number(this.source[this.i++]);
      }
      return one(value);
    }
    if (c === "c") {
      const letter = this.source[this.i] ?? "";
      if (/[a-zA-Z]/.test(letter)) {
        this.i++;
        return one(letter.charCodeAt(0) % 32);
      }
      this.i--; // `\c` without a letter is a backslash, and `c` after it
      return one(0x5c);
    }
    if (c === "x" || c === "u") {
      const digits = c === "x" ? 2 : 4;
      const hex = this.source.slice(this.i, this.i + digits);
      if (new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex)) {
        this.i += digits;
        return one(parseInt(hex, 16));
      }
    }
    return one(c.charCodeAt(0)); // an identity escape
  }

  /** A class after its `[`. */
  set(): RegexNode {
    const negated = this.source[this.i] === "^";
    if (negated) this.i++;
    const ranges: (readonly [number, number])[] = [];
    while (this.source[this.i] !== "]") {
      if (this.i >= this.source.length) throw new UnsupportedRegex("an unclosed class");
      const low = this.member();
      if (
        this.source[this.i] === "-" && this.source[this.i + 1] !== "]" &&
        this.i + 1 < this.source.length
      ) {
        this.i++;
        const high = this.member();
        const single = (m: Ranges | number) => typeof m === "number";
        if (!single(low) || !single(high)) {
          // `[\w-a]` is a class of \w, `-` and `a` (Annex B).
          for (const m of [low, high]) {
            if (typeof m === "number") ranges.push([m, m]);
            else ranges.push(...m);
          }
          ranges.push([0x2d, 0x2d]);
          continue;
        }
        if ((high as number) < (low as number)) throw new UnsupportedRegex("a range out of order");
        ranges.push([low as number, high as number]);
        continue;
      }
      if (typeof low === "number") ranges.push([low, low]);
      else ranges.push(...low);
    }
    this.i++;
    return { kind: "set", ranges, negated };
  }

  /** One member of a class: a code unit, or the ranges of a class escape. */
  member(): number | Ranges {
    const c = this.source[this.i++];
    if (c !== "\\") return c.charCodeAt(0);
    const escaped = this.escape(true);
    if (escaped.kind !== "set") throw new UnsupportedRegex("an assertion in a class");
    const { ranges, negated } = escaped;
    if (!negated && ranges.length === 1 && ranges[0][0] === ranges[0][1]) return ranges[0][0];
    return negated ? complement(ranges) : ranges;
  }
}

/**
 * The tree of a JavaScript regular expression's source, read as with no
 * flags; throws {@link UnsupportedRegex} outside that.
 */
export function parseRegex(source: string): RegexNode {
  return new Reader(source).read();
}

/** What of a tree can make a backtracking engine do more than a bounded amount of work per step. */
interface Cost {
  /** Unbounded repetitions, lookarounds included. */
  unbounded: number;
  /** Whether something repeated holds an unbounded repetition or a choice, lookarounds included. */
  nested: boolean;
  /**
   * The most ways the choices of one scope combine: the expression outside
   * every lookaround is one scope, and each lookaround's body another.
   */
  alternatives: number;
}

/** Most ways {@link backtracksBounded} lets the choices of one scope combine. */
const MAX_ALTERNATIVES = 16;

/**
 * Adds `node`'s cost to `cost`, multiplying `scope.ways` by the ways its
 * choices combine; says whether it holds an unbounded repetition, and a
 * choice (something that can match the same text in more than one way).
 */
function costOf(
  node: RegexNode,
  scope: { ways: number },
  cost: Cost,
): { unbounded: boolean; choice: boolean } {
  switch (node.kind) {
    case "alternation": {
      scope.ways *= node.options.length;
      let unbounded = false;
      for (const option of node.options) {
        unbounded = costOf(option, scope, cost).unbounded || unbounded;
      }
      return { unbounded, choice: true };
    }
    case "sequence": {
      let unbounded = false;
      let choice = false;
      for (const item of node.items) {
        const inner = costOf(item, scope, cost);
        unbounded ||= inner.unbounded;
        choice ||= inner.choice;
      }
      return { unbounded, choice };
    }
    case "group": {
      if (node.look === "") return costOf(node.body, scope, cost);
      // A lookaround is tried whole each time the engine reaches it: its body backtracks within
      // itself, a scope of its own, but what it tried is not tried again for what follows.
      const inside = { ways: 1 };
      costOf(node.body, inside, cost);
      cost.alternatives = Math.max(cost.alternatives, inside.ways);
      return { unbounded: false, choice: false };
    }
    case "repeat": {
      const inner = costOf(node.body, scope, cost);
      if (node.max > 1 && (inner.unbounded || inner.choice)) cost.nested = true;
      if (node.max === Infinity) cost.unbounded++;
      // `x?` and `x{2,5}` choose how many times, as an alternation chooses an option.
      else if (node.max > node.min) scope.ways *= node.max - node.min + 1;
      return {
        unbounded: inner.unbounded || node.max === Infinity,
        choice: inner.choice || node.max > node.min,
      };
    }
    default:
      return { unbounded: false, choice: false };
  }
}

/**
 * Whether a backtracking engine matches the tree in time bounded by a
 * small multiple of the square of the input's length: at most two
 * unbounded repetitions in all, nothing that can match in more than one way
 * repeated (an unbounded repetition, a choice, an optional part), and
 * choices that combine in at most 16 ways (each multiplies the work by its
 * number of alternatives; `x?` counts two). Lookarounds are atomic in
 * JavaScript: the choices inside one do not multiply what follows it, but
 * they multiply each other while it is tried, so its body obeys the same
 * rules as a scope of its own.
 */
export function backtracksBounded(tree: RegexNode): boolean {
  const cost: Cost = { unbounded: 0, nested: false, alternatives: 1 };
  const outside = { ways: 1 };
  costOf(tree, outside, cost);
  const alternatives = Math.max(cost.alternatives, outside.ways);
  return cost.unbounded <= 2 && !cost.nested && alternatives <= MAX_ALTERNATIVES;
}

/** Whether a node is one `/`. */
function isSlash(node: RegexNode): boolean {
  return node.kind === "set" && !node.negated && node.ranges.length === 1 &&
    node.ranges[0][0] === 0x2f && node.ranges[0][1] === 0x2f;
}

/**
 * The code units every string the tree's expression matches ends with,
 * unless the string ends with `/`; `""` when the tree does not tell. A
 * glob's matcher turns down a path without that ending with `endsWith`,
 * before running the expression: on the Linux tree, `**\/*.c` runs it on a
 * third of the paths.
 *
 * Read from the expression's end, in the order a match ends: its end
 * anchor (`$`, with no flags the input's end: without one, nothing is
 * required) and lookarounds take no input; picomatch's optional trailing
 * slash (`\/?`, the last item taking input) takes none from a string that
 * does not end with `/`; a class of one code unit takes exactly that unit.
 * Groups are read in place; a choice ends with what all its options end
 * with, and the reading stops there, as at anything else.
 */
export function requiredEnding(tree: RegexNode): string {
  return endingOf(tree, { anchored: false, atEnd: true }).text;
}

/**
 * What `node` ends with, read back from its end (see {@link requiredEnding}):
 * `state` says whether the input's end was asserted after it and whether
 * anything after it takes input; `whole` is whether the text is all the node
 * can match, so that the reading may go on before it.
 */
function endingOf(
  node: RegexNode,
  state: { anchored: boolean; atEnd: boolean },
): { text: string; whole: boolean } {
  switch (node.kind) {
    case "sequence": {
      let text = "";
      for (let i = node.items.length - 1; i >= 0; i--) {
        const item = endingOf(node.items[i], state);
        text = item.text + text;
        if (!item.whole) return { text, whole: false };
      }
      return { text, whole: true };
    }
    case "group":
      // A lookaround takes no input.
      return node.look === "" ? endingOf(node.body, state) : { text: "", whole: true };
    case "anchor":
      if (!node.end) return { text: "", whole: false };
      if (state.atEnd) state.anchored = true;
      return { text: "", whole: true };
    case "set": {
      const [range] = node.ranges;
      if (
        !state.anchored || node.negated || node.ranges.length !== 1 || range[0] !== range[1]
      ) return { text: "", whole: false };
      state.atEnd = false;
      return { text: String.fromCharCode(range[0]), whole: true };
    }
    case "repeat":
      if (state.anchored && state.atEnd && node.min === 0 && node.max === 1 && isSlash(node.body)) {
        // Taken by a string that ends with `/` only.
        state.atEnd = false;
        return { text: "", whole: true };
      }
      return { text: "", whole: false };
    case "alternation": {
      const endings = node.options.map((option) => endingOf(option, { ...state }).text);
      let common = endings[0];
      for (const ending of endings) {
        while (!ending.endsWith(common)) common = common.slice(1);
      }
      return { text: common, whole: false };
    }
    case "boundary":
      return { text: "", whole: false };
  }
}

/** A code unit (or a surrogate, moved to where {@link re2Input} puts it) as RE2 writes it. */
function unit(code: number): number {
  return code >= 0xd800 && code <= 0xdfff ? SURROGATES + (code - 0xd800) : code;
}

/** Where {@link re2Input} moves the surrogate code units: Supplementary Private Use Area-A. */
const SURROGATES = 0xf0000;

/** A range of code units as RE2 class text; one holding surrogates splits around them. */
function rangeText(low: number, high: number): string {
  const parts: string[] = [];
  const add = (a: number, b: number) =>
    parts.push(
      a === b ? `\\x{${a.toString(16)}}` : `\\x{${a.toString(16)}}-\\x{${b.toString(16)}}`,
    );
  if (low < 0xd800) add(low, Math.min(high, 0xd7ff));
  if (high >= 0xd800 && low <= 0xdfff) {
    add(unit(Math.max(low, 0xd800)), unit(Math.min(high, 0xdfff)));
  }
  if (high > 0xdfff) add(Math.max(low, 0xe000), high);
  return parts.join("");
}

function setText(ranges: readonly (readonly [number, number])[], negated: boolean): string {
  const inner = ranges.map(([low, high]) => rangeText(low, high)).join("");
  if (inner === "") return negated ? "[\\x{0}-\\x{10ffff}]" : "[^\\x{0}-\\x{10ffff}]";
  return `[${negated ? "^" : ""}${inner}]`;
}

function reversed(node: RegexNode): string {
  switch (node.kind) {
    case "alternation":
      return node.options.map(reversed).join("|");
    case "sequence":
      return node.items.map((item) => reversed(item)).reverse().join("");
    case "group": {
      const open = node.look === "" ? "(?:" : node.look === "=" ? "(?<=" : "(?<!";
      return `${open}${reversed(node.body)})`;
    }
    case "repeat": {
      const count = node.max === Infinity
        ? `{${node.min},}`
        : node.min === node.max
        ? `{${node.min}}`
        : `{${node.min},${node.max}}`;
      return `(?:${reversed(node.body)})${count}`;
    }
    case "anchor":
      // The start of the input is the end of the reversed input, and the other way round.
      return node.end ? "^" : "$";
    case "boundary":
      return node.negated ? "\\B" : "\\b";
    case "set":
      return setText(node.ranges, node.negated);
  }
}

/**
 * RE2 source (with re2js's lookbehinds) that matches the reversed
 * {@link re2Input} of exactly the strings the tree's expression matches.
 */
export function reversedRe2Source(tree: RegexNode): string {
  return reversed(tree);
}

/**
 * The input for {@link reversedRe2Source}: reversed by UTF-16 code unit,
 * each surrogate code unit moved into Supplementary Private Use Area-A, so
 * that RE2, which reads code points, reads the units a JavaScript
 * expression without the `u` flag reads.
 */
export function re2Input(text: string): string {
  let out = "";
  for (let i = text.length - 1; i >= 0; i--) {
    const code = text.charCodeAt(i);
    out += code >= 0xd800 && code <= 0xdfff ? String.fromCodePoint(unit(code)) : text[i];
  }
  return out;
}
