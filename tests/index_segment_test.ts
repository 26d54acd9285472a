/**
 * Content-index segments: candidates are exactly the files holding a
 * literal's grams (ASCII letters without case), and/or combine, a builder is
 * reusable, and a segment holds at most 65535 files.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { indexQuery } from "../src/search/index/query.ts";
import {
  MAX_SEGMENT_FILES,
  type Segment,
  SegmentBuilder,
  segmentCandidates,
  segmentMemory,
} from "../src/search/index/segment.ts";

const encoder = new TextEncoder();

const TEXTS = [
  "spin_lock_irqsave(&dev->lock, flags);\n",
  "EXPORT_SYMBOL_GPL(usb_register);\n",
  "export_symbol_gpl is lower case here\n",
  "spin_lock_irqrestore(&dev->lock, flags);\nEXPORT_SYMBOL(x);\n",
  "nothing to see\n",
  "",
  "ab",
  "Größe und Maße: Kelvin \u212a\n",
  "\x00\xff binary-ish \u00e9t\u00e9\n",
];

function build(texts: readonly string[]): Segment {
  const builder = new SegmentBuilder();
  texts.forEach((text, id) => assert.equal(builder.add(encoder.encode(text)), id));
  return builder.finish();
}

function ids(result: Uint16Array | null): number[] | null {
  return result === null ? null : [...result];
}

const literal = (text: string) => ({ op: "literal", bytes: encoder.encode(text) }) as const;

/** The files whose text, with ASCII letters in lower case, holds `needle` in lower case. */
function holding(texts: readonly string[], needle: string): number[] {
  const lower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return texts.flatMap((text, id) => (lower(text).includes(lower(needle)) ? [id] : []));
}

test("index segment: a literal's candidates are exactly the files holding it", () => {
  const segment = build(TEXTS);
  assert.equal(segment.files, TEXTS.length);
  for (
    const needle of [
      "spin_lock_irq",
      "irqsave",
      "irqrestore",
      "EXPORT_SYMBOL_GPL",
      "export_symbol",
      "(&dev->lock, flags);",
      "nothing",
      "absent text",
      "Größe",
      "MASSE",
      "\u212a\n",
      "\u00e9t\u00e9",
      "lock",
    ]
  ) {
    assert.deepEqual(
      ids(segmentCandidates(segment, literal(needle))),
      holding(TEXTS, needle),
      needle,
    );
  }
  // Shorter than a gram: every file.
  assert.equal(segmentCandidates(segment, literal("ab")), null);
  assert.equal(segmentCandidates(segment, { op: "all" }), null);
});

test("index segment: and / or intersect and unite candidate lists", () => {
  const segment = build(TEXTS);
  const query = (pattern: string, caseInsensitive = false) =>
    ids(segmentCandidates(segment, indexQuery(pattern, caseInsensitive)));
  assert.deepEqual(query("spin_lock_irq(save|restore)\\("), [0, 3]);
  assert.deepEqual(query("spin_lock_irq(save|nothing)"), [0]);
  assert.deepEqual(query("spin_.*EXPORT_SYMBOL"), [3]);
  assert.deepEqual(query("(?i)export_symbol_gpl"), [1, 2]);
  assert.deepEqual(query("EXPORT_SYMBOL_GPL", true), [1, 2]);
  assert.deepEqual(query("(usb_register|nothing to)"), [1, 4]);
  assert.deepEqual(query("(usb_register|zzz)+"), [1]);
  assert.equal(query("a.c"), null);
  assert.equal(query("(usb_register|.)"), null);
  assert.deepEqual(query("usb_register.*absent"), []);
  // An and with a part that narrows nothing keeps the parts that do.
  assert.deepEqual(
    ids(segmentCandidates(segment, { op: "and", parts: [{ op: "all" }, literal("nothing")] })),
    [4],
  );
  assert.equal(
    segmentCandidates(segment, { op: "or", parts: [literal("nothing"), { op: "all" }] }),
    null,
  );
});

test("index segment: a builder is empty after finish and builds the next segment afresh", () => {
  const builder = new SegmentBuilder();
  builder.add(encoder.encode("first segment only\n"));
  builder.add(encoder.encode("shared words\n"));
  const first = builder.finish();
  assert.equal(builder.files, 0);
  assert.equal(builder.add(encoder.encode("shared words again\n")), 0);
  const second = builder.finish();
  assert.equal(second.files, 1);
  assert.deepEqual(ids(segmentCandidates(first, literal("shared"))), [1]);
  assert.deepEqual(ids(segmentCandidates(second, literal("shared"))), [0]);
  assert.deepEqual(ids(segmentCandidates(second, literal("first"))), []);
  // Offsets frame the postings; keys are sorted and distinct.
  for (const segment of [first, second]) {
    assert.equal(segment.offsets.length, segment.keys.length + 1);
    assert.equal(segment.offsets[segment.keys.length], segment.postings.length);
    for (let i = 1; i < segment.keys.length; i++) assert.ok(segment.keys[i - 1] < segment.keys[i]);
    assert.ok(segmentMemory(segment) >= segment.postings.byteLength + segment.keys.byteLength);
  }
  const empty = builder.finish();
  assert.equal(empty.files, 0);
  assert.deepEqual(ids(segmentCandidates(empty, literal("shared"))), []);
});

test("index segment: a segment holds 65535 files and refuses one more", () => {
  const builder = new SegmentBuilder();
  for (let id = 0; id < MAX_SEGMENT_FILES; id++) {
    assert.equal(
      builder.add(encoder.encode(id % 1000 === 999 ? `marker ${id}\n` : `file ${id}\n`)),
      id,
    );
  }
  assert.throws(() => builder.add(encoder.encode("one too many\n")), RangeError);
  const segment = builder.finish();
  assert.equal(segment.files, MAX_SEGMENT_FILES);
  const markers = ids(segmentCandidates(segment, literal("marker")));
  assert.equal(markers?.length, 65);
  assert.equal(markers?.[64], 64999);
  assert.deepEqual(ids(segmentCandidates(segment, literal("file 65534"))), [65534]);
  // The builder is usable again once finished.
  assert.equal(builder.add(encoder.encode("again\n")), 0);
});
