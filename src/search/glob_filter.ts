/**
 * The glob matching of `glob` and `grep`, shared by the tools and by a
 * backend's search workers.
 *
 * @module
 */
import picomatch from "picomatch";
import { ToolError } from "../errors.ts";

/**
 * `grep`'s `glob` filter, with ripgrep's `-g` convention: without a slash the
 * pattern matches file names at any depth; with one, paths relative to the
 * working directory; a leading `!` excludes. Throws `invalid_input` for a bad
 * pattern.
 */
export function globFilter(glob: string | undefined): (display: string) => boolean {
  if (glob === undefined) return () => true;
  const negated = glob.startsWith("!");
  const pattern = negated ? glob.slice(1) : glob;
  let test: (path: string) => boolean;
  try {
    test = picomatch(pattern, { dot: true, basename: !pattern.includes("/") });
  } catch (error) {
    throw new ToolError(
      "invalid_input",
      `glob is not a valid pattern: ${(error as Error).message}`,
    );
  }
  return negated ? (path) => !test(path) : test;
}

/**
 * `glob`'s matcher: picomatch with dot files included and brackets strict.
 * Throws `invalid_input` for a bad pattern.
 */
export function globMatcher(pattern: string): (path: string) => boolean {
  try {
    return picomatch(pattern, { dot: true, strictBrackets: true });
  } catch (error) {
    throw new ToolError(
      "invalid_input",
      `pattern is not a valid glob: ${(error as Error).message}`,
    );
  }
}
