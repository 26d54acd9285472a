/**
 * The strings a pattern made only of literal text, groups and alternation
 * matches (`spin_lock_irq(save|restore)\(` matches exactly
 * `spin_lock_irqsave(` and `spin_lock_irqrestore(`): a line matches such a
 * pattern exactly when it holds one of them. The search index looks each of
 * them up whole (rather than the pieces the engine's prefilter keeps apart),
 * and the scan tests a line for them with a plain search rather than the
 * regular expression engine.
 *
 * Read from the pattern's text by a small parser of the RE2 syntax that
 * admits: characters that are not syntax, a backslash before punctuation,
 * groups `(…)`, `(?:…)`, `(?P<name>…)` and `(?<name>…)`, and `|`. Anything
 * else (a class, a repetition, an anchor, a flag, any other escape) gives
 * `null`: the pattern is then matched by the engine as before.
 *
 * @module
 */

/** Strings in a set, at most: a pattern with more alternatives goes to the engine. */
const MAX_STRINGS = 64;
/** Characters of the strings together, at most. */
const MAX_CHARS = 4096;

/** Characters that are syntax outside a class. */
const SYNTAX = new Set([..."\\.+*?()|[]{}^$"]);
/** A group's opening that only names it. */
const NAMED_GROUP = /^\(\?P?<[A-Za-z_][A-Za-z0-9_]*>/;

/** Thrown inside the parser when the pattern is not one it admits. */
class NotLiteral extends Error {}

/**
 * The strings the pattern matches (in no particular order, without
 * repeats), or `null` when it is not made only of literal text, groups and
 * alternation, when one of its strings holds a line break (no line does),
 * U+FFFD or U+FEFF (a line's decoding may make or drop them: the bytes of
 * a line would not tell), or when there are too many.
 *
 * @example
 * ```ts
 * import { literalSet } from "./literal_set.ts";
 * console.log(literalSet("spin_lock_irq(save|restore)\\(")); // ["spin_lock_irqsave(", "spin_lock_irqrestore("]
 * console.log(literalSet("spin_lock_irq(save)?")); // null
 * ```
 */
export function literalSet(pattern: string): string[] | null {
  let at = 0;
  /** An alternation: one or more sequences split by `|`, up to `)` or the end. */
  const alternation = (): string[] => {
    const strings = new Set(sequence());
    while (pattern[at] === "|") {
      at++;
      for (const string of sequence()) strings.add(string);
      if (strings.size > MAX_STRINGS) throw new NotLiteral();
    }
    return [...strings];
  };
  /** A sequence of characters and groups: the concatenation of their strings. */
  const sequence = (): string[] => {
    let strings = [""];
    const append = (suffixes: readonly string[]) => {
      if (strings.length * suffixes.length > MAX_STRINGS) throw new NotLiteral();
      strings = strings.flatMap((prefix) => suffixes.map((suffix) => prefix + suffix));
      if (strings.reduce((n, string) => n + string.length, 0) > MAX_CHARS) throw new NotLiteral();
    };
    while (at < pattern.length && pattern[at] !== "|" && pattern[at] !== ")") {
      const char = pattern[at];
      if (char === "(") {
        const named = NAMED_GROUP.exec(pattern.slice(at, at + 64));
        if (named !== null) at += named[0].length;
        else if (pattern.startsWith("(?:", at)) at += 3;
        else if (pattern[at + 1] === "?") throw new NotLiteral();
        else at++;
        const inner = alternation();
        if (pattern[at] !== ")") throw new NotLiteral();
        at++;
        append(inner);
      } else if (char === "\\") {
        const next = pattern[at + 1];
        // Only punctuation escapes itself; a letter or digit after a backslash is syntax.
        if (next === undefined || !/^[!-/:-@[-`{-~]$/.test(next)) throw new NotLiteral();
        append([next]);
        at += 2;
      } else if (SYNTAX.has(char)) {
        throw new NotLiteral();
      } else {
        append([char]);
        at++;
      }
    }
    return strings;
  };
  try {
    const strings = alternation();
    if (at !== pattern.length) return null;
    if (strings.some((string) => /[\n\uFFFD\uFEFF]/.test(string))) return null;
    return strings;
  } catch (error) {
    if (error instanceof NotLiteral) return null;
    throw error;
  }
}
