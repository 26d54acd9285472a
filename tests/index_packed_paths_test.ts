/**
 * Paths packed to be sent between threads (a listing of the whole tree):
 * every path comes back as it went, in order, whatever its characters.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { noPaths, PathPacker, unpackPath } from "../src/search/index/packed_paths.ts";

test("search index packed paths: every path comes back as it was packed, in order, wide characters and all", () => {
  const paths: string[] = [];
  for (let i = 0; i < 5000; i++) {
    paths.push(
      i % 3 === 0 ? `dir${i}/caf\u00e9/\u4e2d\u6587-${i}.txt` : `d/${"x".repeat(i % 300)}${i}`,
    );
  }
  paths.push("\u{1f600}/emoji", "a");
  const packer = new PathPacker();
  for (const path of paths) packer.add(path);
  assert.equal(packer.count, paths.length);
  const packed = packer.done();
  assert.equal(packed.ends.length, paths.length);
  assert.equal(packed.bytes.length, new TextEncoder().encode(paths.join("")).length);
  for (let i = 0; i < paths.length; i++) assert.equal(unpackPath(packed, i), paths[i]);
});

test("search index packed paths: none packed is empty", () => {
  assert.equal(new PathPacker().done().ends.length, 0);
  assert.equal(noPaths().ends.length, 0);
  assert.equal(noPaths().bytes.length, 0);
});
