/**
 * The content index's query of a grep pattern: every file with a matching
 * line satisfies it (checked on thousands of generated patterns and lines,
 * directly and through a built segment), and it narrows where the pattern
 * proves a literal.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { foldBytes, indexQuery } from "../src/search/index/query.ts";
import type { IndexQuery } from "../src/search/index/query.ts";
import { SegmentBuilder, segmentCandidates } from "../src/search/index/segment.ts";
import { compileMatcher } from "../src/search/matcher.ts";
import { literalSet } from "../src/search/literal_set.ts";
import { RE2JS } from "re2js";
import { mulberry32 } from "./shell_oracle.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Whether `bytes`, folded, contain `literal`, folded. */
function holds(bytes: Uint8Array, literal: Uint8Array): boolean {
  const text = foldBytes(bytes);
  const needle = foldBytes(literal);
  outer: for (let i = 0; i + needle.length <= text.length; i++) {
    for (let j = 0; j < needle.length; j++) if (text[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** Evaluates a query on a whole file's bytes. */
function satisfies(query: IndexQuery, bytes: Uint8Array): boolean {
  switch (query.op) {
    case "all":
      return true;
    case "literal":
      return holds(bytes, query.bytes);
    case "and":
      return query.parts.every((part) => satisfies(part, bytes));
    case "or":
      return query.parts.some((part) => satisfies(part, bytes));
  }
}

/** A query as text, for comparisons: literals as their strings. */
function show(query: IndexQuery): string {
  switch (query.op) {
    case "all":
      return "all";
    case "literal":
      return JSON.stringify(decoder.decode(query.bytes));
    case "and":
    case "or":
      return `${query.op}(${query.parts.map(show).join(", ")})`;
  }
}

/** Whether a line of the file, split and decoded as grep's scanner does, matches. */
function fileMatches(match: (line: string) => boolean, bytes: Uint8Array): boolean {
  return decoder.decode(bytes).split("\n").some(match);
}

test("index query: literal patterns narrow to their required literals", () => {
  const cases: [string, boolean, string][] = [
    ["EXPORT_SYMBOL_GPL", false, '"EXPORT_SYMBOL_GPL"'],
    ["spin_lock_irq(save|restore)\\(", false, 'or("spin_lock_irqsave(", "spin_lock_irqrestore(")'],
    ["foo.*bar", false, 'and("foo", "bar")'],
    ["(?i)hello", false, '"hello"'],
    ["hello", true, '"hello"'],
    ["(?i)(?i)HELLO|world", false, 'or("hello", "world")'],
    ["struct\\s+(\\w+)_ops\\b", false, 'and("struct", "_ops")'],
    ["(abc)+x?", false, '"abc"'],
    ["(?:abc){2,}", false, '"abc"'],
    ["中文字", false, '"中文字"'],
  ];
  for (const [pattern, caseInsensitive, expected] of cases) {
    assert.equal(show(indexQuery(pattern, caseInsensitive)), expected, pattern);
  }
});

test("index query: a pattern of literal text and alternatives requires one of its strings whole", () => {
  const cases: [string, string][] = [
    ["spin_lock_irq(save|restore)\\(", 'or("spin_lock_irqsave(", "spin_lock_irqrestore(")'],
    ["foo(bar|baz)qux", 'or("foobarqux", "foobazqux")'],
    ["a(?:bc|de)f", 'or("abcf", "adef")'],
    ["(?P<name>abc|def)g", 'or("abcg", "defg")'],
    ["x(ab|cd)(ef|gh)", 'or("xabef", "xabgh", "xcdef", "xcdgh")'],
    ["read\\.(c|h)", 'or("read.c", "read.h")'],
    ["(ab|c)def", 'or("abdef", "cdef")'],
    // A string holding another asks no more of a file than the other.
    ["abc(d|)", '"abc"'],
    // A string shorter than a gram narrows nothing by itself: the engine's prefilter stands.
    ["(ab|c)d", "all"],
    ["(ab|c)defg", 'or("abdefg", "cdefg")'],
    ["(a|bc)xyz", 'or("axyz", "bcxyz")'],
    // Not literal text only: the engine's prefilter.
    ["abc(def|ghi)+xyz", 'and("abc", or("def", "ghi"), "xyz")'],
    ["(?i)abc(d|e)", '"abc"'],
  ];
  for (const [pattern, expected] of cases) {
    assert.equal(show(indexQuery(pattern, false)), expected, pattern);
  }
  // A file that holds the pieces apart but neither string is no candidate any more.
  const builder = new SegmentBuilder();
  const apart = builder.add(encoder.encode("spin_lock_irq(&lock);\n/* save */\n"));
  const whole = builder.add(encoder.encode("spin_lock_irqsave(&lock, flags);\n"));
  const ids = segmentCandidates(
    builder.finish(),
    indexQuery("spin_lock_irq(save|restore)\\(", false),
  );
  assert.deepEqual(ids === null ? null : [...ids], [whole]);
  assert.notEqual(apart, whole);
});

test("index query: patterns that prove no literal of three bytes give all", () => {
  for (
    const pattern of [
      "a.c",
      "[a-z]+",
      "\\w+",
      "ab",
      "(abc)?",
      "abc|.",
      "abc*",
      "",
      "(?i:abc)",
      "[Aa]bc",
    ]
  ) {
    assert.equal(show(indexQuery(pattern, false)), "all", pattern);
  }
  // Not a valid pattern: nothing to narrow by.
  assert.equal(show(indexQuery("(abc", false)), "all");
});

test("index query: without case, letters with case variants outside ASCII split literals", () => {
  // k folds with U+212A (Kelvin sign), s with U+017F (long s); é has another byte form.
  assert.equal(show(indexQuery("thinking", true)), 'and("thin", "ing")');
  assert.equal(show(indexQuery("(?i)Kernel_module", false)), '"ernel_module"');
  assert.equal(show(indexQuery("a_s_b", true)), "all");
  assert.equal(show(indexQuery("réaction", true)), '"action"');
  assert.equal(show(indexQuery("abcsxyz", true)), 'and("abc", "xyz")');
  // The same patterns with case keep the whole literal.
  assert.equal(show(indexQuery("thinking", false)), '"thinking"');
  assert.equal(show(indexQuery("réaction", false)), '"réaction"');
  // A literal U+FFFD is never required: the decoder makes one from any invalid byte.
  assert.equal(show(indexQuery("abc\uFFFDdef", false)), "all");
  assert.equal(show(indexQuery("(?:abc\uFFFDdef|xyz)", false)), "all");
});

test("index query: the engine folds no character outside ASCII to ASCII but U+017F and U+212A", () => {
  // The case-insensitive split relies on this: every other ASCII character
  // matches only ASCII bytes regardless of case.
  const ascii = RE2JS.compile("[\\x00-\\x7f]", RE2JS.CASE_INSENSITIVE);
  const folded: number[] = [];
  for (let code = 0x80; code <= 0x10ffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    if (ascii.matches(String.fromCodePoint(code))) folded.push(code);
  }
  assert.deepEqual(folded, [0x17f, 0x212a]);
});

/** A generated pattern with a way to make text that it likely matches. */
interface Gen {
  readonly pattern: string;
  sample(fold: boolean): string;
}

const CHARS = [..."abcdkKsSxyz_09 .-é中ÉßΣσ\u212a\u017f"];
const CASE_VARIANTS: Record<string, readonly string[]> = {
  k: ["k", "K", "\u212a"],
  K: ["k", "K", "\u212a"],
  "\u212a": ["k", "K", "\u212a"],
  s: ["s", "S", "\u017f"],
  S: ["s", "S", "\u017f"],
  "\u017f": ["s", "S", "\u017f"],
  é: ["é", "É"],
  É: ["é", "É"],
  σ: ["σ", "Σ", "ς"],
  Σ: ["σ", "Σ", "ς"],
};
const META = new Set([..."\\.+*?()|[]{}^$"]);

function generator(next: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const vary = (char: string, fold: boolean): string => {
    if (!fold || next() < 0.4) return char;
    const variants = CASE_VARIANTS[char];
    if (variants !== undefined) return pick(variants);
    return next() < 0.5 ? char.toUpperCase() : char.toLowerCase();
  };
  const literalChar = (): Gen => {
    const char = pick(CHARS);
    const pattern = META.has(char) ? `\\${char}` : char;
    return { pattern, sample: (fold) => vary(char, fold) };
  };
  const word = (): Gen => {
    const parts = Array.from({ length: 1 + Math.floor(next() * 5) }, literalChar);
    return {
      pattern: parts.map((part) => part.pattern).join(""),
      sample: (fold) => parts.map((part) => part.sample(fold)).join(""),
    };
  };
  const atom = (depth: number): Gen => {
    const roll = next();
    if (roll < 0.35 || depth > 2) return word();
    if (roll < 0.45) {
      const [pattern, chars] = pick<[string, string]>([
        ["[a-k]", "abk"],
        ["[^x]", "aé中"],
        ["[kK]", "kK"],
        ["[é]", "é"],
        ["\\w", "a_9"],
        ["\\d", "05"],
        ["\\s", " \t"],
        [".", "x中\uFFFD"],
        ["\\x{212A}", "\u212a"],
        ["\\.", "."],
        ["\\Qa.b\\E", "a.b"],
        ["[[:alpha:]]", "q"],
        ["\\pL", "é"],
      ]);
      return { pattern, sample: (fold) => vary(pick([...chars]), fold) };
    }
    if (roll < 0.55) {
      const anchor = pick(["^", "$", "\\b", "\\B"]);
      return { pattern: anchor, sample: () => "" };
    }
    if (roll < 0.75) {
      const inner = sequence(depth + 1);
      const open = pick(["(", "(?:", "(?i:", "(?-i:", "(?i)", "(?P<n>"]);
      const local = open === "(?i:" ? true : open === "(?-i:" ? false : undefined;
      if (open === "(?i)") {
        return { pattern: `(?:(?i)${inner.pattern})`, sample: () => inner.sample(true) };
      }
      return {
        pattern: `${open}${inner.pattern})`,
        sample: (fold) => inner.sample(local ?? fold),
      };
    }
    if (roll < 0.88) {
      const alternatives = Array.from(
        { length: 2 + Math.floor(next() * 2) },
        () => sequence(depth + 1),
      );
      return {
        pattern: `(?:${alternatives.map((a) => a.pattern).join("|")})`,
        sample: (fold) => pick(alternatives).sample(fold),
      };
    }
    const inner = atom(depth + 1);
    const [suffix, min, max] = pick<[string, number, number]>([
      ["?", 0, 1],
      ["*", 0, 3],
      ["+", 1, 3],
      ["{2}", 2, 2],
      ["{1,3}", 1, 3],
      ["{0,2}", 0, 2],
      ["{2,}", 2, 4],
    ]);
    return {
      pattern: `(?:${inner.pattern})${suffix}`,
      sample: (fold) => {
        const count = min + Math.floor(next() * (max - min + 1));
        return Array.from({ length: count }, () => inner.sample(fold)).join("");
      },
    };
  };
  const sequence = (depth: number): Gen => {
    const parts = Array.from({ length: 1 + Math.floor(next() * 3) }, () => atom(depth));
    return {
      pattern: parts.map((part) => part.pattern).join(""),
      sample: (fold) => parts.map((part) => part.sample(fold)).join(""),
    };
  };
  const pattern = (): Gen => {
    const body = next() < 0.2
      ? (() => {
        const inner = sequence(0);
        return { pattern: `(?i)${inner.pattern}`, sample: () => inner.sample(true) };
      })()
      : sequence(0);
    return body;
  };
  const noise = (): string =>
    Array.from({ length: Math.floor(next() * 12) }, () => pick(CHARS)).join("");
  /** UTF-8 bytes of `text`, sometimes with invalid bytes spliced in. */
  const bytes = (text: string): Uint8Array => {
    const encoded = encoder.encode(text);
    if (next() < 0.7) return encoded;
    const out: number[] = [];
    for (const byte of encoded) {
      if (next() < 0.1) out.push(pick([0x80, 0xbf, 0xc3, 0xe4, 0xff, 0xe2, 0x84]));
      out.push(byte);
    }
    return new Uint8Array(out);
  };
  return { pattern, noise, bytes, next };
}

test("index query: sound on generated patterns and lines, directly and through a segment", () => {
  const gen = generator(mulberry32(0x1d3e5));
  const builder = new SegmentBuilder();
  let pending: { query: IndexQuery; id: number; label: string }[] = [];
  let checked = 0;
  let narrowed = 0;
  let checkedNarrowed = 0;
  let literalText = 0;
  const flush = () => {
    const segment = builder.finish();
    for (const { query, id, label } of pending) {
      const ids = segmentCandidates(segment, query);
      assert.ok(ids === null || ids.includes(id), `not a candidate in its segment: ${label}`);
    }
    pending = [];
  };
  for (let round = 0; round < 1800; round++) {
    const made = gen.pattern();
    for (const caseInsensitive of [false, true]) {
      let matcher;
      try {
        matcher = compileMatcher(made.pattern, { caseInsensitive });
      } catch {
        break; // an invalid pattern (e.g. a repeat of an empty-width assertion): nothing to check
      }
      const query = indexQuery(made.pattern, caseInsensitive);
      const engine = RE2JS.compile(made.pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
      if (query.op !== "all") narrowed++;
      if (!caseInsensitive && literalSet(made.pattern) !== null) literalText++;
      for (let sample = 0; sample < 3; sample++) {
        const line = gen.noise() + made.sample(caseInsensitive) + gen.noise();
        const lines = [gen.noise(), line, gen.noise()].map(gen.bytes);
        const file = new Uint8Array(lines.reduce((n, l) => n + l.length + 1, 0));
        let at = 0;
        for (const l of lines) {
          file.set(l, at);
          at += l.length;
          file[at++] = 0x0a;
        }
        const label = `${JSON.stringify(made.pattern)} ${caseInsensitive ? "(i) " : ""}` +
          `on ${JSON.stringify(decoder.decode(file))}: ${show(query)}`;
        // Unrelated files share the segment, so a candidate list must pick this one out.
        builder.add(gen.bytes(gen.noise() + gen.noise()));
        // The matcher answers as the engine does, on every line (a pattern of literal text and
        // alternatives is matched without it).
        for (const text of decoder.decode(file).split("\n")) {
          assert.equal(matcher.matchesLine(text), engine.test(text), `${label}: line ${text}`);
        }
        if (!fileMatches((text) => matcher.matchesLine(text), file)) continue;
        checked++;
        if (query.op !== "all") checkedNarrowed++;
        assert.ok(satisfies(query, file), `matching file does not satisfy the query: ${label}`);
        pending.push({ query, id: builder.add(file), label });
        if (builder.files > 2000) flush();
      }
    }
  }
  flush();
  // The generator must actually exercise the property, and narrowing must happen.
  assert.ok(checked > 3000, `${checked} matching files checked`);
  assert.ok(narrowed > 500, `${narrowed} narrowing queries`);
  assert.ok(
    checkedNarrowed > 1000,
    `${checkedNarrowed} matching files checked against a narrowing query`,
  );
  assert.ok(literalText > 150, `${literalText} patterns of literal text and alternatives`);
});
