/**
 * Stand-in: the required literals of a pattern, from re2js's prefilter.
 *
 * @module
 */
import { RE2JS } from "re2js";

/** What a file's bytes must hold for the pattern to match one of its lines. */
export type IndexQuery =
  | { readonly op: "all" }
  | { readonly op: "literal"; readonly bytes: Uint8Array }
  | { readonly op: "and"; readonly parts: readonly IndexQuery[] }
  | { readonly op: "or"; readonly parts: readonly IndexQuery[] };

const ALL: IndexQuery = { op: "all" };

interface Prefilter {
  type: number;
  subs: Prefilter[];
  bytes: number[] | null;
}

function convert(node: Prefilter | null): IndexQuery {
  if (node === null) return ALL;
  if (node.type === 1) {
    return node.bytes !== null && node.bytes.length >= 3
      ? { op: "literal", bytes: Uint8Array.from(node.bytes) }
      : ALL;
  }
  const parts = node.subs.map(convert);
  if (node.type === 2) {
    const kept = parts.filter((p) => p.op !== "all");
    return kept.length === 0 ? ALL : kept.length === 1 ? kept[0] : { op: "and", parts: kept };
  }
  if (node.type === 3) {
    return parts.some((p) => p.op === "all") ? ALL : { op: "or", parts };
  }
  return ALL;
}

/** The query of a pattern. */
export function indexQuery(pattern: string, caseInsensitive: boolean): IndexQuery {
  if (caseInsensitive) return ALL;
  const compiled = RE2JS.compile(pattern) as unknown as {
    re2Input: { prefilter: Prefilter | null };
  };
  return convert(compiled.re2Input.prefilter);
}
