/**
 * The search index's cache file read in pieces: the entries' tables in a
 * buffer apart from the segments (so that they are dropped once taken up),
 * the same index as when read whole, and a file whose pieces do not fit its
 * tables refused, never thrown.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs/promises";
import { join } from "node:path";
import { readCacheFile } from "../src/index/cache_directory.ts";
import { decodeCache, encodeCache, nextCachePiece } from "../src/index/cache_format.ts";
import type { CachedIndex } from "../src/index/cache_format.ts";
import { SegmentBuilder } from "../src/search/index/segment.ts";
import { STAMP_FIELDS } from "../src/search/index/stamps.ts";
import { packPaths } from "../src/search/index/packed_paths.ts";
import { tempDir } from "./helpers.ts";

/** A small index of two files in one segment, a directory and a file not indexed. */
function smallIndex(): CachedIndex {
  const builder = new SegmentBuilder();
  const encoder = new TextEncoder();
  const a = builder.add(encoder.encode("alpha needle\n"));
  const b = builder.add(encoder.encode("beta haystack\n"));
  const stamps = new Float64Array(3 * STAMP_FIELDS).fill(NaN);
  stamps.fill(7, 0, 2 * STAMP_FIELDS);
  return {
    root: "/srv/repo",
    entries: packPaths(["a.txt", "d", "d/b.txt", "z\u00e9.txt"]),
    kinds: Uint8Array.of(1, 0, 1, 1),
    fileSegments: Int32Array.of(0, 0, -2),
    fileLocals: Int32Array.of(a, b, 0),
    fileBytes: Int32Array.of(13, 14, 0),
    stamps,
    segments: [{ segment: builder.finish(), ids: Int32Array.of(0, 1) }],
  };
}

/** The bytes of the cache file of `index`. */
async function fileOf(index: CachedIndex): Promise<Uint8Array> {
  const chunks = await encodeCache(index);
  const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  chunks.reduce((at, chunk) => (bytes.set(chunk, at), at + chunk.length), 0);
  return bytes;
}

/** `bytes` cut as {@link nextCachePiece} says, each piece a buffer of its own. */
function cut(bytes: Uint8Array): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    const length = nextCachePiece(pieces, bytes.length);
    pieces.push(bytes.slice(at, at + length));
    at += length;
  }
  return pieces;
}

test("search index cache pieces: read in pieces, the segments' buffer holds none of the entries' tables, and the index is the one read whole", async () => {
  const bytes = await fileOf(smallIndex());
  const pieces = cut(bytes);
  assert.equal(pieces.length, 4);
  const whole = await decodeCache(bytes, "/srv/repo");
  const apart = await decodeCache(pieces, "/srv/repo");
  assert.equal(typeof whole, "object", String(whole));
  assert.equal(typeof apart, "object", String(apart));
  assert.deepEqual(apart, whole);
  const loaded = apart as CachedIndex;
  const segmentBuffer = loaded.segments[0].segment.postings.buffer;
  assert.equal(loaded.segments[0].ids.buffer, segmentBuffer);
  for (const table of [loaded.kinds, loaded.fileSegments, loaded.stamps]) {
    assert.notEqual(table.buffer, segmentBuffer);
  }
  // The segments' buffer is the last piece: the segments and the checksum, nothing more.
  assert.equal(segmentBuffer.byteLength, pieces[3].length);
});

test("search index cache pieces: a cache file read by readCacheFile in the pieces asked for", async () => {
  const dir = await tempDir();
  try {
    const bytes = await fileOf(smallIndex());
    await fs.chmod(dir.path, 0o700);
    await fs.writeFile(join(dir.path, "index.bin"), bytes, { mode: 0o600 });
    const uid = (await fs.stat(dir.path)).uid;
    const read = await readCacheFile(dir.path, "index.bin", uid, undefined, nextCachePiece);
    assert.ok(Array.isArray(read), String(read));
    assert.deepEqual(read.map((piece) => piece.length), cut(bytes).map((piece) => piece.length));
    assert.deepEqual(await decodeCache(read, "/srv/repo"), await decodeCache(bytes, "/srv/repo"));
    const whole = await readCacheFile(dir.path, "index.bin", uid);
    assert.ok(Array.isArray(whole));
    assert.deepEqual(whole, [bytes]);
  } finally {
    await dir.cleanup();
  }
});

test("search index cache pieces: pieces that do not fit the file's tables are refused, not thrown", async () => {
  const bytes = await fileOf(smallIndex());
  // Cut at every offset: a table across two pieces, or out of line with its elements.
  for (let at = 1; at < bytes.length; at++) {
    const pieces = [bytes.slice(0, at), bytes.slice(at)];
    const decoded = await decodeCache(pieces, "/srv/repo");
    if (typeof decoded === "string") {
      assert.match(decoded, /cut short|do not fill|header/, `cut at ${at}`);
    }
  }
  // Cut short at every length: refused.
  for (let length = 0; length < bytes.length; length += 7) {
    const decoded = await decodeCache(cut(bytes.slice(0, length)), "/srv/repo");
    assert.equal(typeof decoded, "string", `cut short at ${length}`);
  }
});

test("search index cache pieces: a cache whose table of names holds more or fewer paths than its entries is refused", async () => {
  const index = smallIndex();
  // A NUL inside a path: one more path in the table of names than entries.
  const more = await fileOf({
    ...index,
    entries: packPaths(["a.txt", "d", "d/b\0.txt", "z\u00e9.txt"]),
  });
  assert.match(String(await decodeCache(more, "/srv/repo")), /not as many as its entries/);
  const fewer = await fileOf({ ...index, entries: packPaths(["a.txt", "d", "d/b.txt"]) });
  assert.equal(typeof await decodeCache(fewer, "/srv/repo"), "string");
});
