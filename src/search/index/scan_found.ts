/**
 * How the results of a files job cross from a search worker (see
 * `jobs.ts`): one number per file in an `Int32Array` whose buffer is
 * transferred, rather than an object per file that both threads copy one
 * by one. A file's number is its count of matches, 0 for none, or a
 * negative code for why it was passed over; in content mode, the lines of
 * each file with matches travel beside them, in order.
 *
 * @module
 */
import { ONE_MATCH, SKIPPED } from "../scan.ts";
import type { ScanLine, ScanResult, SkipReason } from "../scan.ts";

/** The code of each reason to pass a file over. */
const SKIP_CODES: { readonly [R in SkipReason]: number } = {
  unreadable: -1,
  binary: -2,
  too_large: -3,
};

/** The reason each code stands for. */
const SKIP_OF = new Map(
  (Object.keys(SKIP_CODES) as SkipReason[]).map((skip) => [SKIP_CODES[skip], skip]),
);

const NO_LINES: readonly ScanLine[] = Object.freeze([]);

/** The number that stands for `result`: its matches, or the code of its skip. */
export function foundCode(result: ScanResult): number {
  return result.skip === undefined ? result.matches : SKIP_CODES[result.skip];
}

/**
 * The result a number stands for (`null` for 0: nothing found), with
 * `lines` its lines in content mode.
 */
export function foundResult(
  code: number,
  lines: readonly ScanLine[] = NO_LINES,
): ScanResult | null {
  if (code === 0) return null;
  if (code < 0) {
    const skip = SKIP_OF.get(code);
    if (skip === undefined) throw new Error(`A search worker sent an unknown result (${code}).`);
    return SKIPPED[skip];
  }
  if (code === 1 && lines.length === 0) return ONE_MATCH;
  return { matches: code, lines };
}

/**
 * The results of a files job, one per file scanned, from what the worker
 * sent: `found` (see {@link foundCode}) and, in content mode, the lines of
 * each file with matches, in order.
 */
export function foundResults(
  found: Int32Array,
  lines: readonly (readonly ScanLine[])[],
  content: boolean,
): (ScanResult | null)[] {
  const results = new Array<ScanResult | null>(found.length);
  let next = 0;
  for (let i = 0; i < found.length; i++) {
    const code = found[i];
    results[i] = foundResult(code, content && code > 0 ? lines[next++] : NO_LINES);
  }
  return results;
}
