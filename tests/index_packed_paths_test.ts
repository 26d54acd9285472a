/**
 * Paths packed to be sent between threads (a listing of the whole tree):
 * every path comes back as it went, in order, whatever its characters.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  noPaths,
  packPaths,
  pathBytes,
  PathPacker,
  unpackPath,
  unpackPaths,
} from "../src/search/index/packed_paths.ts";

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

test("search index packed paths: a path's bytes packed again, without a string made of it, are the same path", () => {
  const source = packPaths(["a", "d/caf\u00e9.txt", "", "\u4e2d/x"]);
  const packer = new PathPacker();
  for (const i of [3, 1, 0]) packer.addBytes(pathBytes(source, i));
  packer.add("tail");
  assert.deepEqual(unpackPaths(packer.done()), ["\u4e2d/x", "d/caf\u00e9.txt", "a", "tail"]);
});
