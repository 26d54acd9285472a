/**
 * The search index's entry table alone: walk order however entries come,
 * ranges below a directory, removal of a directory with everything below it,
 * file ids reused once free, and stamps kept per id.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { EntryTable, LISTED_ENTRY_BYTES, NOT_INDEXED } from "../src/index/entries.ts";
import { stringBytes } from "../src/search/index/packed_paths.ts";
import { STAMP_FIELDS } from "../src/search/index/stamps.ts";

test("search index entries: added in any order, the table keeps walk order and each directory's children", () => {
  const table = new EntryTable(null);
  table.addFile("b.txt");
  table.addDirectory("a", null);
  table.addFile("a/z.ts");
  table.addDirectory("a/sub", null);
  table.addFile("a/sub/x.ts");
  table.addFile("a-b.txt");
  // A directory before what it holds, names compared segment by segment.
  assert.deepEqual(table.displays(), ["a", "a/sub", "a/sub/x.ts", "a/z.ts", "a-b.txt", "b.txt"]);
  assert.deepEqual(table.below("a"), ["a/sub", "a/sub/x.ts", "a/z.ts"]);
  assert.deepEqual(table.below("."), [...table.displays()]);
  assert.equal(table.get("a")?.kind, "directory");
  assert.deepEqual(table.get("a/z.ts"), { kind: "file", id: table.ids()[3] });
  assert.equal(table.get("a/zz.ts"), undefined);
  assert.deepEqual(table.children("a"), ["a/sub", "a/z.ts"]);
  assert.deepEqual(table.children("."), ["a", "a-b.txt", "b.txt"]);
  assert.deepEqual(table.counts(), { files: 4, directories: 3 });
});

test("search index entries: removing a directory removes what is below it, and frees its file ids for reuse", () => {
  const table = new EntryTable(null);
  table.addDirectory("src", null);
  const x = table.addFile("src/x.ts");
  const y = table.addFile("src/y.ts");
  const keep = table.addFile("top.ts");
  const stamp = new Float64Array(STAMP_FIELDS).fill(7);
  table.setStamp(keep, stamp, 0);
  const removed: [string, number][] = [];
  table.remove("src", (display, id) => removed.push([display, id]));
  assert.deepEqual(removed, [["src", -1], ["src/x.ts", x], ["src/y.ts", y]]);
  assert.deepEqual(table.displays(), ["top.ts"]);
  assert.equal(table.get("src/x.ts"), undefined);
  assert.equal(table.file(x), null);
  // A freed id is given again, with an unknown stamp; the kept file's stamp stays.
  const again = table.addFile("new.ts");
  assert.ok(again === x || again === y);
  assert.equal(table.file(again)?.segment, NOT_INDEXED);
  assert.ok(Number.isNaN(table.stamps[again * STAMP_FIELDS]));
  assert.equal(table.stamps[keep * STAMP_FIELDS], 7);
  assert.deepEqual(table.counts(), { files: 2, directories: 1 });
});

test("search index entries: a file's place is kept by id, and a removed file's id names no file", () => {
  const table = new EntryTable(null);
  const id = table.addFile("a.ts");
  assert.deepEqual(table.file(id), { display: "a.ts", segment: NOT_INDEXED, local: 0, bytes: 0 });
  table.place(id, 3, 17, 4096);
  assert.deepEqual([table.segment(id), table.local(id), table.bytes(id)], [3, 17, 4096]);
  assert.equal(table.display(id), "a.ts");
  assert.ok(table.has(id));
  table.remove("a.ts", () => {});
  assert.equal(table.has(id), false);
  assert.equal(table.file(id), null);
  assert.equal(table.file(id + 1), undefined);
});

test("search index entries: the memory the table reports is what adding each entry said it would take, and removing gives the paths back", () => {
  const table = new EntryTable(null);
  const empty = table.memory;
  let expected = empty;
  const added: string[] = [];
  for (let i = 0; i < 300; i++) {
    const directory = i % 30 === 0;
    // Paths of one-byte characters, and some with a character that takes two.
    const display = directory
      ? `d${i}`
      : `d${i - (i % 30)}/f${i}${i % 7 === 0 ? "\u00e9\u4e2d" : ""}.ts`;
    const growth = table.growth(display, directory ? "directory" : "file");
    if (directory) table.addDirectory(display, null);
    else table.addFile(display);
    expected += growth;
    assert.equal(table.memory, expected, display);
    added.push(display);
  }
  // Room grows by steps (the typed arrays' lengths are counted whole), a path by its string.
  assert.ok(growthOfSteps(table) > 0);
  assert.equal(stringBytes("abc"), 16 + 8);
  assert.equal(stringBytes("ab\u4e2d"), 16 + 8);
  assert.equal(stringBytes("abcde\u4e2d"), 16 + 16);
  const before = table.memory;
  table.remove("d0", () => {});
  const gone = added.filter((display) => display === "d0" || display.startsWith("d0/"));
  const strings = gone.reduce((sum, display) => sum + stringBytes(display), 0);
  // A directory's record goes with it; the typed arrays keep their room for ids given again.
  assert.ok(before - table.memory >= strings + 8 * gone.length, `${before} ${table.memory}`);
  assert.ok(LISTED_ENTRY_BYTES > 0);
});

test("search index entries: room made for a whole listing at once is counted before it is made", () => {
  const table = new EntryTable(null);
  const growth = table.reserveGrowth(5000, 4900);
  const before = table.memory;
  table.reserve(5000, 4900);
  assert.equal(table.memory - before, growth);
  // Adding within that room takes the paths alone.
  const display = "dir/file.ts";
  assert.equal(table.growth(display, "file"), stringBytes(display) + 16);
});

/** The bytes the table's room takes beyond its entries (some, once it has grown by steps). */
function growthOfSteps(table: EntryTable): number {
  return table.memory - table.displays().reduce((sum, display) => sum + stringBytes(display), 0);
}

test("search index entries: two entries added under one display path are told, the first such path kept", () => {
  const table = new EntryTable(null);
  table.addFile("a\uFFFDb");
  table.addFile("c");
  assert.equal(table.alike, null);
  table.addDirectory("a\uFFFDb", null);
  table.addFile("c");
  assert.equal(table.alike, "a\uFFFDb");
});
