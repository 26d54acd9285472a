/**
 * The search index under attack: every answer it gives equals a fresh
 * walk's (exact), reflects every change made before the call (fresh), and
 * any state it cannot vouch for falls back to the walk. Each test is a
 * break that was found, named for the promise it broke; the disk backends
 * of the runtime under test, each with its own tree watcher.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFile, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createSession, finalizeToolset } from "../mod.ts";
import type { AsyncFileSystem, SearchIndexOptions } from "../mod.ts";
import type { TreeWatcher } from "../src/backends/watch.ts";
import { backendFixtures, type Layout, sh } from "./helpers.ts";

/** The disk backends (the memory one has no search workers, so no index). */
const disks = (await backendFixtures()).filter((fixture) => fixture.name !== "memory");

/** Two sessions on one tree: one with the index, one without; both on the same backend. */
async function indexedAndPlain(
  layout: Layout,
  make: () => Promise<
    { root: string; outside: string; filesystem: AsyncFileSystem; cleanup(): Promise<void> }
  >,
  options: SearchIndexOptions = {},
) {
  const made = await make();
  const root = made.root;
  for (const [relative, text] of Object.entries(layout)) {
    if (typeof text !== "string") continue;
    await mkdir(join(root, relative, ".."), { recursive: true });
    await writeFile(join(root, relative), text);
  }
  const indexed = await createSession({
    workingDirectory: root,
    filesystem: made.filesystem,
    skillRoot: null,
    searchIndex: options,
  });
  const plain = await createSession({
    workingDirectory: root,
    filesystem: made.filesystem,
    skillRoot: null,
  });
  const tools = {
    indexed: finalizeToolset({ session: indexed }),
    plain: finalizeToolset({ session: plain }),
  };
  let n = 0;
  const call = async (which: "indexed" | "plain", name: string, input: unknown) => {
    const result = await tools[which].call({
      name,
      input,
      callId: `call-${++n}`,
      approve: () => Promise.resolve(true),
    });
    // Grep's and glob's data; `files` is grep's list of files.
    const data = result.ok ? result.data as { readonly files: readonly string[] } : null;
    return { ok: result.ok, data, output: result.output };
  };
  const index = indexed.searchIndex!;
  return {
    root,
    outside: made.outside,
    index,
    /** Calls the tool on both sessions; asserts the answers are equal and gives the indexed one. */
    async both(name: string, input: unknown) {
      const fromIndex = await call("indexed", name, input);
      const fromWalk = await call("plain", name, input);
      assert.deepEqual(fromIndex, fromWalk, `${name} ${JSON.stringify(input)}`);
      return fromIndex;
    },
    async close() {
      await index.close();
      await made.cleanup();
    },
  };
}

for (const fixture of disks) {
  test(`${fixture.name}: exact and fresh: a file also linked from outside the tree, changed through that link, is found`, async () => {
    const tree = await indexedAndPlain(
      { "a/f.txt": "before\n", "b/g.txt": "other\n" },
      () => fixture.make({}),
    );
    try {
      const other = join(tree.outside, "f-link.txt");
      await sh('ln "$1" "$2"', join(tree.root, "a/f.txt"), other);
      await tree.index.ready;
      const before = tree.index.stats().searches.indexed;
      assert.deepEqual((await tree.both("grep", { pattern: "before" })).data?.files, ["a/f.txt"]);
      // A write through the other name: no event for any path in the tree.
      await appendFile(other, "marker-after\n");
      const answer = await tree.both("grep", { pattern: "marker-after" });
      assert.deepEqual(answer.data?.files, ["a/f.txt"]);
      assert.equal(tree.index.stats().searches.indexed, before + 2, "the index answered both");
    } finally {
      await tree.close();
    }
  });

  test(`${fixture.name}: fresh: an edit of .git/info/exclude alone changes what is ignored`, async () => {
    const tree = await indexedAndPlain(
      { ".git/info/exclude": "", "a/x.txt": "needle\n", "b/y.txt": "needle\n" },
      () => fixture.make({}),
    );
    try {
      await tree.index.ready;
      const files = async () => (await tree.both("grep", { pattern: "needle" })).data?.files;
      assert.deepEqual(await files(), ["a/x.txt", "b/y.txt"]);
      await writeFile(join(tree.root, ".git/info/exclude"), "a\n");
      assert.deepEqual(await files(), ["b/y.txt"]);
      await rm(join(tree.root, ".git/info"), { recursive: true });
      assert.deepEqual(await files(), ["a/x.txt", "b/y.txt"]);
      await mkdir(join(tree.root, ".git/info"));
      await writeFile(join(tree.root, ".git/info/exclude"), "b\n");
      assert.deepEqual(await files(), ["a/x.txt"]);
      await writeFile(join(tree.root, ".git/info/exclude"), "");
      assert.deepEqual(await files(), ["a/x.txt", "b/y.txt"]);
      await writeFile(join(tree.root, ".git/info/exclude"), "b\n");
      assert.deepEqual(await files(), ["a/x.txt"]);
      // A repository inside the tree, then an edit of its exclude file alone.
      await mkdir(join(tree.root, "b/.git/info"), { recursive: true });
      await writeFile(join(tree.root, ".git/info/exclude"), "");
      await writeFile(join(tree.root, "b/.git/info/exclude"), "y.txt\n");
      assert.deepEqual(await files(), ["a/x.txt"]);
      await writeFile(join(tree.root, "b/.git/info/exclude"), "z.txt\n");
      assert.deepEqual(await files(), ["a/x.txt", "b/y.txt"]);
      assert.equal(tree.index.stats().state, "ready");
    } finally {
      await tree.close();
    }
  });

  test(`${fixture.name}: fresh: a directory made again, or another moved into its place, is watched and read anew`, async () => {
    const tree = await indexedAndPlain({ "d/x.txt": "needle old\n" }, () => fixture.make({}));
    try {
      await tree.index.ready;
      const files = async (pattern: string) => (await tree.both("grep", { pattern })).data?.files;
      assert.deepEqual(await files("needle"), ["d/x.txt"]);
      // Removed and made again: later changes in it must still be seen.
      await rm(join(tree.root, "d"), { recursive: true });
      await mkdir(join(tree.root, "d"));
      await writeFile(join(tree.root, "d/x.txt"), "needle one\n");
      assert.deepEqual(await files("needle one"), ["d/x.txt"]);
      await writeFile(join(tree.root, "d/y.txt"), "needle two\n");
      assert.deepEqual(await files("needle two"), ["d/y.txt"]);
      // Moved away, another made in its place with a file of the same name.
      await sh('mv "$1" "$2"', join(tree.root, "d"), join(tree.outside, "d-away"));
      await mkdir(join(tree.root, "d"));
      await writeFile(join(tree.root, "d/x.txt"), "needle three\n");
      assert.deepEqual(await files("needle three"), ["d/x.txt"]);
      await appendFile(join(tree.outside, "d-away/y.txt"), "needle four\n");
      await writeFile(join(tree.root, "d/z.txt"), "needle five\n");
      assert.deepEqual(await files("needle (four|five)"), ["d/z.txt"]);
      assert.equal(tree.index.stats().state, "ready");
    } finally {
      await tree.close();
    }
  });

  test(`${fixture.name}: memory limit: an index that grows past its limit stops, and searches walk`, async () => {
    const tree = await indexedAndPlain({ "f.txt": "needle\n" }, () => fixture.make({}), {
      memoryLimit: 64 * 1024,
    });
    try {
      await tree.index.ready;
      const layout: string[] = [];
      for (let i = 0; i < 600; i++) layout.push(`g${i}.txt`);
      await Promise.all(
        layout.map((name, i) =>
          writeFile(join(tree.root, name), `needle ${i} ${name.repeat(20)}\n`)
        ),
      );
      const answer = await tree.both("grep", { pattern: "needle", max_results: 1000 });
      assert.equal(answer.data?.files.length, 601);
      const stats = tree.index.stats();
      assert.ok(
        stats.memory <= 64 * 1024,
        `memory ${stats.memory} over the limit in state ${stats.state}`,
      );
      assert.notEqual(stats.state, "ready");
    } finally {
      await tree.close();
    }
  });

  test(`${fixture.name}: fallback: a watcher whose fence fails makes the search walk, not fail`, async () => {
    let fences = 0;
    const watch = (): Promise<TreeWatcher> =>
      Promise.resolve({
        perDirectory: false,
        add() {},
        remove() {},
        fence: () => {
          fences++;
          return Promise.reject(new Error("the fence broke"));
        },
        close: () => Promise.resolve(),
      });
    const tree = await indexedAndPlain({ "a/x.txt": "needle\n" }, () => fixture.make({}), {
      watch,
    });
    try {
      await tree.index.ready;
      const grep = await tree.both("grep", { pattern: "needle" });
      assert.equal(grep.ok, true);
      assert.deepEqual(grep.data?.files, ["a/x.txt"]);
      assert.equal((await tree.both("glob", { pattern: "**" })).ok, true);
      assert.ok(fences > 0, "the fence was asked");
      assert.equal(tree.index.stats().searches.indexed, 0);
    } finally {
      await tree.close();
    }
  });

  test(
    `${fixture.name}: exact and fresh: a file changed through a hard link made after the build`,
    {
      // Not fixed: making a link changes only the inode (its link count), which
      // inotify reports to a watch on the file itself, not to the watches on
      // directories the index holds; writes through the new name report that
      // name only. The file's old content stays in the index. Files linked
      // before the build are candidates of every search (see the test above).
      skip: "a hard link made after the build is not seen by the directory watches",
    },
    async () => {
      const tree = await indexedAndPlain({ "a/f.txt": "before\n" }, () => fixture.make({}));
      try {
        await tree.index.ready;
        assert.deepEqual((await tree.both("grep", { pattern: "before" })).data?.files, ["a/f.txt"]);
        const other = join(tree.outside, "late-link.txt");
        await sh('ln "$1" "$2"', join(tree.root, "a/f.txt"), other);
        await appendFile(other, "marker-late\n");
        assert.deepEqual((await tree.both("grep", { pattern: "marker-late" })).data?.files, [
          "a/f.txt",
        ]);
      } finally {
        await tree.close();
      }
    },
  );
}
