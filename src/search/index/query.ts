/**
 * What a file must contain for a `grep` pattern to match one of its lines,
 * as a tree of required byte literals that a content index can answer.
 *
 * The tree comes from the parsed pattern: the regular expression engine
 * builds a prefilter from its parse tree (literals that every match holds,
 * joined by AND for concatenation and OR for alternation) and this module
 * converts it. A pattern made only of literal text, groups and alternation
 * (`src/search/literal_set.ts`) gives instead the OR of the whole strings it
 * matches, each one literal. Literals compare with ASCII letters folded to lower case, so
 * a case-insensitive pattern keeps every piece of a literal whose characters
 * have no case variant outside ASCII.
 *
 * Soundness is the contract: a file with a line the pattern matches always
 * satisfies the query; the query may admit files with no match.
 *
 * @module
 */
import { RE2JS } from "re2js";
import { literalSet } from "../literal_set.ts";

/** What a file's bytes must hold for the pattern to match one of its lines. */
export type IndexQuery =
  | { readonly op: "all" }
  | { readonly op: "literal"; readonly bytes: Uint8Array }
  | { readonly op: "and"; readonly parts: readonly IndexQuery[] }
  | { readonly op: "or"; readonly parts: readonly IndexQuery[] };

/** The query every file satisfies. */
const ALL: IndexQuery = { op: "all" };

/** Shortest literal the index can look up (one gram). */
const MIN_LITERAL = 3;

/** The node shape of the engine's prefilter tree (types 1 exact, 2 and, 3 or). */
interface PrefilterNode {
  readonly type: number;
  readonly subs: readonly PrefilterNode[];
  readonly str: string;
}

const EXACT = 1;
const AND = 2;
const OR = 3;

/** The flag group that makes the rest of a pattern case-insensitive when it opens it. */
const LEADING_FOLD = "(?i)";

const encoder = new TextEncoder();

/**
 * The query a file must satisfy for `pattern` (RE2 syntax) to match one of
 * its lines; `{ op: "all" }` when the pattern proves no literal of at least
 * three bytes, or does not compile.
 *
 * @example
 * ```ts
 * import { indexQuery } from "./query.ts";
 * const query = indexQuery("EXPORT_SYMBOL", false);
 * console.log(query.op); // "literal"
 * ```
 */
export function indexQuery(pattern: string, caseInsensitive: boolean): IndexQuery {
  let fold = caseInsensitive;
  let source = pattern;
  // At the very start, `(?i)` sets case folding for the whole rest of the
  // pattern (alternatives included): the same as compiling the rest with it.
  while (source.startsWith(LEADING_FOLD)) {
    source = source.slice(LEADING_FOLD.length);
    fold = true;
  }
  let prefilter: PrefilterNode | null;
  try {
    RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
    // Case folding leaves the structure of the parse alone and widens each
    // literal character to its case variants; the case-sensitive parse of the
    // same text gives the structure, and the literals are folded below.
    // Literals under a flag group inside the pattern carry the fold flag and
    // are given no prefilter at all, so they narrow nothing.
    const compiled = RE2JS.compile(source, 0) as unknown as {
      readonly re2Input?: { readonly prefilter?: PrefilterNode | null };
    };
    prefilter = compiled.re2Input?.prefilter ?? null;
  } catch {
    return ALL;
  }
  // A pattern of literal text and alternatives requires one of its strings whole, which the
  // engine's prefilter splits into pieces required apart (`spin_lock_irq` and `save` anywhere).
  const strings = fold ? null : literalSet(pattern);
  if (strings !== null && strings.every((string) => encoder.encode(string).length >= MIN_LITERAL)) {
    // A string that holds another of them asks nothing more of a file than the other does.
    const needed = strings.filter((string) =>
      !strings.some((other) => other !== string && string.includes(other))
    );
    return or(needed.map(literal));
  }
  if (prefilter === null) return ALL;
  return convert(prefilter, fold);
}

/**
 * The prefilter is the engine's own field, not its public interface: a node
 * of any other shape narrows nothing.
 */
function convert(node: PrefilterNode, fold: boolean): IndexQuery {
  switch (node?.type) {
    case EXACT:
      if (typeof node.str !== "string") return ALL;
      return fold ? foldedLiteral(node.str) : literal(node.str);
    case AND:
      if (!Array.isArray(node.subs)) return ALL;
      return and(node.subs.map((sub) => convert(sub, fold)));
    case OR:
      if (!Array.isArray(node.subs)) return ALL;
      return or(node.subs.map((sub) => convert(sub, fold)));
    default:
      return ALL;
  }
}

function literal(text: string): IndexQuery {
  const bytes = encoder.encode(text);
  return bytes.length >= MIN_LITERAL ? { op: "literal", bytes } : ALL;
}

/**
 * A literal matched regardless of case: ASCII letters fold within ASCII,
 * except `k` (Kelvin sign U+212A) and `s` (long s U+017F); any other
 * non-ASCII character may have a case variant with other bytes. Those
 * characters split the literal; every remaining piece is still required.
 */
function foldedLiteral(text: string): IndexQuery {
  const pieces: IndexQuery[] = [];
  let piece = "";
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const safe = code < 0x80 && char !== "k" && char !== "K" && char !== "s" && char !== "S";
    if (safe) piece += char.toLowerCase();
    else {
      pieces.push(literal(piece));
      piece = "";
    }
  }
  pieces.push(literal(piece));
  return and(pieces);
}

function and(parts: readonly IndexQuery[]): IndexQuery {
  const kept: IndexQuery[] = [];
  for (const part of parts) {
    if (part.op === "all") continue;
    if (part.op === "and") kept.push(...part.parts);
    else kept.push(part);
  }
  const unique = dedupe(kept);
  if (unique.length === 0) return ALL;
  return unique.length === 1 ? unique[0] : { op: "and", parts: unique };
}

function or(parts: readonly IndexQuery[]): IndexQuery {
  const kept: IndexQuery[] = [];
  for (const part of parts) {
    if (part.op === "all") return ALL;
    if (part.op === "or") kept.push(...part.parts);
    else kept.push(part);
  }
  const unique = dedupe(kept);
  if (unique.length === 0) return ALL;
  return unique.length === 1 ? unique[0] : { op: "or", parts: unique };
}

/** Drops repeated literals (after folding, `Foo` and `foo` are one requirement). */
function dedupe(parts: readonly IndexQuery[]): IndexQuery[] {
  const seen = new Set<string>();
  const kept: IndexQuery[] = [];
  for (const part of parts) {
    if (part.op === "literal") {
      const key = foldBytes(part.bytes).join(",");
      if (seen.has(key)) continue;
      seen.add(key);
    }
    kept.push(part);
  }
  return kept;
}

/** A copy of `bytes` with ASCII `A`–`Z` folded to `a`–`z`. */
export function foldBytes(bytes: Uint8Array): Uint8Array {
  const folded = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    folded[i] = byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte;
  }
  return folded;
}
