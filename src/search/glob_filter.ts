/**
 * The glob matching of `glob` and `grep`, shared by the tools and by a
 * backend's search workers.
 *
 * picomatch turns a glob into a JavaScript regular expression, which
 * backtracks: `*?*?*?*?*?*?*?*?*?*?x` takes seconds to fail on one ordinary
 * file name, and the walk tries it on every entry. So a glob's expression
 * runs on JavaScript's engine only when it cannot backtrack beyond a square
 * of the path's length (the usual `**\/*.ts`, `src/**`, `*.md`); any other
 * runs on re2js, in linear time (see `glob_regex.ts`). A glob is bounded in
 * length too, since picomatch's own parse of nested extglobs grows faster
 * than their length.
 *
 * @module
 */
import picomatch from "picomatch";
import { RE2JS } from "re2js";
import { ToolError } from "../errors.ts";
import {
  backtracksBounded,
  parseRegex,
  re2Input,
  requiredEnding,
  reversedRe2Source,
  UnsupportedRegex,
} from "./glob_regex.ts";

/** Longest glob (`glob`'s `pattern`, `grep`'s `glob`), in UTF-16 code units. */
export const MAX_GLOB_LENGTH = 512;

type PicomatchOptions = NonNullable<Parameters<typeof picomatch>[1]>;

/** Matchers made lately, by pattern and options: a search worker makes one per unit of a walk. */
const made = new Map<string, (path: string) => boolean>();
const MADE_LIMIT = 16;

/** Throws `invalid_input` when a glob given as `field` is longer than {@link MAX_GLOB_LENGTH}. */
function checkLength(field: string, glob: string): void {
  if (glob.length > MAX_GLOB_LENGTH) {
    throw new ToolError(
      "invalid_input",
      `${field} is ${glob.length} characters long; the most is ${MAX_GLOB_LENGTH}.`,
    );
  }
}

/**
 * The matcher picomatch makes for `pattern`, run where its cost is bounded:
 * on JavaScript's engine when its expression backtracks within a square of
 * the input, otherwise on re2js. `invalid` words the error of a bad
 * pattern.
 */
function boundedMatcher(
  pattern: string,
  options: PicomatchOptions,
  invalid: (why: string) => string,
): (path: string) => boolean {
  const key = `${JSON.stringify(options)}\n${pattern}`;
  const known = made.get(key);
  if (known !== undefined) return known;
  let regex: RegExp;
  let tree;
  try {
    regex = picomatch.makeRe(pattern, options);
    tree = parseRegex(regex.source);
  } catch (error) {
    const why = error instanceof UnsupportedRegex
      ? `its expression cannot be matched in bounded time (${error.message})`
      : (error as Error).message;
    throw new ToolError("invalid_input", invalid(why));
  }
  let test: (text: string) => boolean;
  if (backtracksBounded(tree)) test = (text) => regex.test(text);
  else {
    const linear = RE2JS.compile(reversedRe2Source(tree), RE2JS.LOOKBEHINDS);
    test = (text) => linear.test(re2Input(text));
  }
  // Most paths lack the ending every match has: they are turned down without the expression.
  const ending = regex.flags === "" ? requiredEnding(tree) : "";
  // What picomatch's own matcher does around its expression: never the empty path, the
  // pattern itself always, and with `basename` the last segment only.
  const matcher = (path: string) => {
    if (path === "") return false;
    if (path === pattern) return true;
    const text = options.basename === true ? lastSegment(path) : path;
    if (!text.endsWith(ending) && !text.endsWith("/")) return false;
    return test(text);
  };
  if (made.size >= MADE_LIMIT) made.delete(made.keys().next().value!);
  made.set(key, matcher);
  return matcher;
}

/** The last segment of a path, or the one before a trailing slash (as picomatch takes it). */
function lastSegment(path: string): string {
  const segments = path.split("/");
  const last = segments[segments.length - 1];
  return last === "" ? segments[segments.length - 2] : last;
}

/**
 * `grep`'s `glob` filter, with ripgrep's `-g` convention: without a slash the
 * pattern matches file names at any depth; with one, paths relative to the
 * working directory; a leading `!` excludes. Throws `invalid_input` for a bad
 * pattern, or one over {@link MAX_GLOB_LENGTH}.
 */
export function globFilter(glob: string | undefined): (display: string) => boolean {
  if (glob === undefined) return () => true;
  checkLength("glob", glob);
  const negated = glob.startsWith("!");
  const pattern = negated ? glob.slice(1) : glob;
  const test = boundedMatcher(
    pattern,
    { dot: true, basename: !pattern.includes("/") },
    (why) => `glob is not a valid pattern: ${why}`,
  );
  return negated ? (path) => !test(path) : test;
}

/**
 * `glob`'s matcher: picomatch with dot files included and brackets strict.
 * Throws `invalid_input` for a bad pattern, or one over {@link MAX_GLOB_LENGTH}.
 */
export function globMatcher(pattern: string): (path: string) => boolean {
  checkLength("pattern", pattern);
  return boundedMatcher(
    pattern,
    { dot: true, strictBrackets: true },
    (why) => `pattern is not a valid glob: ${why}`,
  );
}
