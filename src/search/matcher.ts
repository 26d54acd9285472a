/**
 * Line matching for `grep` on a linear-time engine (RE2 syntax via re2js),
 * with a byte-level literal prefilter so files without a required literal
 * are rejected before they are decoded.
 *
 * @module
 */
import { RE2JS } from "re2js";
import { ToolError } from "../errors.ts";
import { byteLiteral } from "./bytes.ts";
import type { ByteLiteral } from "./bytes.ts";
import { checkPatternBounds } from "./pattern_bounds.ts";
import { literalSet } from "./literal_set.ts";

/** A compiled pattern. */
export interface LineMatcher {
  /** Bytes every match must contain, when the pattern proves some. */
  readonly literal: ByteLiteral | null;
  /** The same literal as text, to skip lines without it before the regular expression runs. */
  readonly literalText: string | null;
  /** The pattern is the literal itself, matched with case: a line holding it matches. */
  readonly exact: boolean;
  /** Whether `text` may hold a match (a fast whole-text test). */
  mayMatch(text: string): boolean;
  /** Whether one line matches. */
  matchesLine(line: string): boolean;
}

const META = new Set([..."\\.+*?()|[]{}^$"]);

/**
 * The longest run of characters every match must contain, read from the top
 * level of the pattern; `null` when there is a top-level alternation or no
 * run of at least three characters. Conservative: it may miss literals, it
 * never invents one.
 */
export function requiredLiteral(pattern: string): string | null {
  let depth = 0;
  let best = "";
  let run = "";
  const close = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    let literal: string | null = null;
    // A counted repetition's digits are no text to find: `x{1000}` requires no "1000".
    const counted = c === "{" ? /^\{\d+(,\d*)?\}/.exec(pattern.slice(i, i + 24)) : null;
    if (counted !== null) {
      i += counted[0].length - 1;
      close();
      continue;
    }
    if (c === "\\") {
      const next = pattern[i + 1];
      i++;
      if (next !== undefined && META.has(next)) literal = next;
      else if (next !== undefined && /[-/ "'#%&,:;<=>@_`~!]/.test(next)) literal = next;
    } else if (c === "[") {
      // Skip the class, honouring escapes and a leading ].
      let j = i + 1;
      if (pattern[j] === "^") j++;
      if (pattern[j] === "]") j++;
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
      i = j;
    } else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) return null;
    else if (depth === 0 && !META.has(c)) literal = c;
    const next = pattern[i + 1];
    const optional = next === "?" || next === "*" || next === "{";
    if (literal !== null && depth === 0 && !optional) {
      run += literal;
      if (next === "+") close();
    } else close();
  }
  close();
  return best.length >= 3 ? best : null;
}

/** Options of {@link compileMatcher}. */
export interface MatcherOptions {
  /** Match regardless of case (default false). */
  readonly caseInsensitive?: boolean;
  /**
   * The pattern was compiled before, as a search worker's was on the calling
   * thread (default false): its regular expressions are compiled only when
   * first used, and a pattern that is its own literal may never need one.
   */
  readonly checked?: boolean;
}

/**
 * Compiles `pattern`, or throws `invalid_input` with the engine's message,
 * or naming the bound it passes (see `pattern_bounds.ts`) before any work.
 */
export function compileMatcher(pattern: string, options: MatcherOptions = {}): LineMatcher {
  const { caseInsensitive = false, checked = false } = options;
  const flags = caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0;
  const compile = (extra: number) => RE2JS.compile(pattern, flags | extra);
  let regex: RE2JS | null = null;
  if (!checked) {
    checkPatternBounds(pattern, caseInsensitive);
    try {
      regex = compile(0);
    } catch (error) {
      throw new ToolError(
        "invalid_input",
        `pattern is not a valid RE2 regular expression: ${(error as Error).message}`,
      );
    }
  }
  let multiline: RE2JS | null = null;
  const literal = caseInsensitive ? null : requiredLiteral(pattern);
  // A pattern of literal text and alternatives matches a line exactly when the line holds one of
  // its strings: a plain search answers, far faster than the engine.
  const strings = caseInsensitive ? null : literalSet(pattern);
  const holdsOne = (text: string) => strings!.some((string) => text.includes(string));
  return {
    literal: literal === null ? null : byteLiteral(new TextEncoder().encode(literal)),
    literalText: literal,
    exact: literal !== null && !pattern.includes("\n") &&
      (literal === pattern || (strings?.length === 1 && strings[0] === literal)),
    mayMatch: strings !== null
      ? holdsOne
      : (text) => (multiline ??= compile(RE2JS.MULTILINE)).test(text),
    matchesLine: strings !== null ? holdsOne : (line) => (regex ??= compile(0)).test(line),
  };
}
