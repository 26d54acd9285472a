/**
 * The search index's entry table alone: walk order however entries come,
 * ranges below a directory, removal of a directory with everything below it,
 * file ids reused once free, and stamps kept per id.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { EntryTable, NOT_INDEXED } from "../src/index/entries.ts";
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
  const a = table.get("a");
  assert.equal(a?.kind, "directory");
  if (a?.kind === "directory") {
    assert.deepEqual([...a.children].sort(), [["sub", "directory"], ["z.ts", "file"]]);
  }
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
