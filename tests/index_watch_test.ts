/**
 * The search index's tree watcher, the runtime's own (`#default-backends`):
 * every change made before a fence is reported by the time the fence
 * resolves, new directories are watched, removals are changes, and closing
 * leaves nothing behind. On Deno it is one recursive `Deno.watchFs`; on Node
 * one `fs.watch` per directory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { renameSync, symlinkSync, unlinkSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import * as fs from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import {
  fencedWatcher,
  type FenceEvents,
  type TreeWatcher,
  type Watches,
  type WatchTree,
} from "../src/backends/watch.ts";
import { watchTreeNode } from "../src/backends/node/watch.ts";
import { defaultWatchTree as watchTree } from "#default-backends";
import { sh, symlinkOnDisk, tempDir, underDeno } from "./helpers.ts";
import { createSession, finalizeToolset, type ToolSessionContext } from "../mod.ts";

/** A watcher over `root` with the paths it reported and the losses it declared. */
async function track(root: string, fenceDirectory?: string) {
  const changed: string[] = [];
  const losses: string[] = [];
  const watcher = await watchTree(
    root,
    { changed: (path) => changed.push(path), lost: (reason) => losses.push(reason) },
    fenceDirectory === undefined ? {} : { fenceDirectory },
  );
  return { watcher, changed, losses };
}

/**
 * Watches a directory and everything below it as the index does: each
 * directory added before it is listed (nothing to do when the watch is recursive).
 */
async function watchBelow(watcher: TreeWatcher, directory: string): Promise<void> {
  if (!watcher.perDirectory) return;
  watcher.add(directory);
  for (const entry of await fs.readdir(directory, { withFileTypes: true })) {
    if (entry.isDirectory()) await watchBelow(watcher, join(directory, entry.name));
  }
}

/** The paths of `expected` missing from `changed`. */
function missing(changed: readonly string[], expected: Iterable<string>): string[] {
  const seen = new Set(changed);
  return [...expected].filter((path) => !seen.has(path));
}

test("watch: a fence resolves only after every earlier change is reported", async () => {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  const directories: string[] = [];
  for (let d = 0; d < 10; d++) {
    for (let s = 0; s < 5; s++) {
      const directory = join(root, `d${d}`, `s${s}`);
      directories.push(directory);
      await fs.mkdir(directory, { recursive: true });
      for (const name of ["old.txt", "gone.txt", "from.txt", "moved.txt"]) {
        await fs.writeFile(join(directory, name), `${name}\n`);
      }
    }
  }
  const { watcher, changed, losses } = await track(root);
  try {
    await watchBelow(watcher, root);
    // Another process changes the tree and exits before the fence is asked for.
    await sh(
      `cd "$1" || exit 1
      for d in d*/s*; do
        for i in 1 2 3 4 5 6 7 8; do echo new > "$d/n$i.txt"; done
        echo more >> "$d/old.txt"
        rm "$d/gone.txt"
        mv "$d/from.txt" "$d/to.txt"
      done
      for d in d*/s*; do mv "$d/moved.txt" d0/s0/; mv d0/s0/moved.txt "$d/back.txt"; done`,
      root,
    );
    const fenced = await watcher.fence();
    if (losses.length > 0) {
      // Deno's watcher takes a burst as large as its runtime's event channel as a possible
      // loss (see the burst test): then no fence vouches.
      assert.ok(underDeno, `a loss: ${losses.join("; ")}`);
      assert.equal(fenced, false);
      return;
    }
    assert.equal(fenced, true);
    const expected = new Set<string>([join(root, "d0", "s0", "moved.txt")]);
    for (const directory of directories) {
      for (let i = 1; i <= 8; i++) expected.add(join(directory, `n${i}.txt`));
      for (const name of ["old.txt", "gone.txt", "from.txt", "to.txt", "moved.txt", "back.txt"]) {
        expected.add(join(directory, name));
      }
    }
    assert.equal(expected.size, 50 * 14);
    assert.deepEqual(missing(changed, expected), []);
    assert.deepEqual(losses, []);
    // Only paths in the tree are reported: no cookie of the fence shows.
    assert.deepEqual(changed.filter((path) => !path.startsWith(root + "/")), []);
  } finally {
    await watcher.close();
    await dir.cleanup();
  }
});

/**
 * A fence's answer: `true` once every earlier change is reported; or, on Deno only, `false`
 * after a loss (its watcher takes a run of events as long as the runtime's event channel as a
 * possible loss, see the burst test), which ends the test there.
 */
async function vouched(watcher: TreeWatcher, losses: readonly string[]): Promise<boolean> {
  const fenced = await watcher.fence();
  if (fenced) return true;
  assert.ok(underDeno && losses.length > 0, `a fence failed without a loss: ${losses.join("; ")}`);
  return false;
}

test("watch: a directory made after the start is watched (per-directory: after add)", async () => {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  await fs.mkdir(root);
  const { watcher, changed, losses } = await track(root);
  try {
    await watchBelow(watcher, root);
    await fs.mkdir(join(root, "new", "a", "b"), { recursive: true });
    if (!await vouched(watcher, losses)) return;
    assert.deepEqual(missing(changed, [join(root, "new")]), []);
    // The index lists a new directory once it is reported, adding each directory first.
    await watchBelow(watcher, join(root, "new"));
    const files = [
      join(root, "new", "top.txt"),
      join(root, "new", "a", "mid.txt"),
      join(root, "new", "a", "b", "deep.txt"),
    ];
    for (const file of files) await fs.writeFile(file, "text\n");
    await fs.mkdir(join(root, "new", "a", "b", "later"));
    if (!await vouched(watcher, losses)) return;
    assert.deepEqual(missing(changed, [...files, join(root, "new", "a", "b", "later")]), []);
    await watchBelow(watcher, join(root, "new", "a", "b", "later"));
    await fs.writeFile(join(root, "new", "a", "b", "later", "last.txt"), "text\n");
    if (!await vouched(watcher, losses)) return;
    assert.deepEqual(missing(changed, [join(root, "new", "a", "b", "later", "last.txt")]), []);
    assert.deepEqual(losses, []);
  } finally {
    await watcher.close();
    await dir.cleanup();
  }
});

test("watch: removing a watched directory is a change, not a loss", async () => {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  await fs.mkdir(join(root, "gone", "inner"), { recursive: true });
  await fs.writeFile(join(root, "gone", "inner", "file.txt"), "text\n");
  const { watcher, changed, losses } = await track(root);
  try {
    await watchBelow(watcher, root);
    await fs.rm(join(root, "gone"), { recursive: true });
    if (!await vouched(watcher, losses)) return;
    assert.deepEqual(missing(changed, [join(root, "gone")]), []);
    // The index stops watching what left the tree; the rest is still watched.
    watcher.remove(join(root, "gone"));
    await fs.writeFile(join(root, "after.txt"), "text\n");
    // A directory made again at the same path is a new directory.
    await fs.mkdir(join(root, "gone"));
    if (!await vouched(watcher, losses)) return;
    await watchBelow(watcher, join(root, "gone"));
    await fs.writeFile(join(root, "gone", "again.txt"), "text\n");
    if (!await vouched(watcher, losses)) return;
    assert.deepEqual(
      missing(changed, [join(root, "after.txt"), join(root, "gone", "again.txt")]),
      [],
    );
    assert.deepEqual(losses, []);
  } finally {
    await watcher.close();
    await dir.cleanup();
  }
});

test("watch: a directory removed and made again is watched anew when added again", async () => {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  await fs.mkdir(join(root, "build"), { recursive: true });
  const { watcher, changed, losses } = await track(root);
  try {
    await watchBelow(watcher, root);
    // Removed and made again, with no remove() between (an ignored directory the index does
    // not hold, say): the first watch followed the directory that is gone.
    await fs.rm(join(root, "build"), { recursive: true });
    await fs.mkdir(join(root, "build"));
    if (!await vouched(watcher, losses)) return;
    await watchBelow(watcher, join(root, "build"));
    await fs.writeFile(join(root, "build", "new.txt"), "text\n");
    if (!await vouched(watcher, losses)) return;
    assert.deepEqual(missing(changed, [join(root, "build", "new.txt")]), []);
    assert.deepEqual(losses, []);
  } finally {
    await watcher.close();
    await dir.cleanup();
  }
});

test(
  "watch: a directory swapped for a link while its watch is put on is watched itself, not the link's target (per-directory)",
  { skip: underDeno ? "Deno's watcher is recursive: no directory is watched on its own" : false },
  async () => {
    const dir = await tempDir();
    const root = join(dir.path, "repo");
    const outside = join(dir.path, "outside");
    const directory = join(root, "d");
    await fs.mkdir(directory, { recursive: true });
    await fs.mkdir(outside);
    // Another process, acting while the watch is put on: the directory is moved away and a link
    // to an outside directory takes its place, then the directory is put back.
    const builtins = createRequire(import.meta.url)("node:fs") as typeof import("node:fs");
    const realWatch = builtins.watch;
    let armed = false;
    const swapped = ((...args: Parameters<typeof realWatch>) => {
      if (!armed) return realWatch(...args);
      armed = false;
      renameSync(directory, `${directory}.away`);
      symlinkSync(outside, directory);
      try {
        return realWatch(...args);
      } finally {
        unlinkSync(directory);
        renameSync(`${directory}.away`, directory);
      }
    }) as typeof realWatch;
    const { watcher, changed, losses } = await track(root);
    try {
      watcher.add(root);
      builtins.watch = swapped;
      syncBuiltinESMExports();
      armed = true;
      try {
        watcher.add(directory);
      } finally {
        builtins.watch = realWatch;
        syncBuiltinESMExports();
      }
      assert.equal(armed, false, "the swap ran");
      watcher.add(directory);
      await fs.writeFile(join(directory, "inside.txt"), "text\n");
      await fs.writeFile(join(outside, "outside.txt"), "text\n");
      assert.equal(await watcher.fence(), true);
      assert.deepEqual(missing(changed, [join(directory, "inside.txt")]), []);
      assert.deepEqual(changed.filter((path) => path.endsWith("outside.txt")), []);
      assert.deepEqual(losses, []);
    } finally {
      await watcher.close();
      await dir.cleanup();
    }
  },
);

test("watch: close ends every watch and the fence directory", async () => {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  const temporary = join(dir.path, "tmp");
  await fs.mkdir(root);
  await fs.mkdir(temporary);
  // The default fence directory is made in the OS temporary directory, read from TMPDIR.
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = temporary;
  let tracked: Awaited<ReturnType<typeof track>>;
  try {
    tracked = await track(root);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  const { watcher, changed, losses } = tracked;
  try {
    const made = await fs.readdir(temporary);
    assert.equal(made.length, 1);
    assert.match(made[0], /^openwork-index-/);
    await watchBelow(watcher, root);
    assert.equal(await watcher.fence(), true);
    // A fence under way when the watcher closes ends with false.
    const pending = watcher.fence();
    await watcher.close();
    assert.equal(await pending, false);
    assert.equal(await watcher.fence(), false);
    assert.deepEqual(await fs.readdir(temporary), []);
    // Nothing is reported once closed.
    const before = changed.length;
    await fs.writeFile(join(root, "late.txt"), "text\n");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(changed.length, before);
    assert.deepEqual(losses, []);
    // Closing twice is harmless.
    await watcher.close();
  } finally {
    await watcher.close();
    await dir.cleanup();
  }
});

test("watch: a fence directory inside the root is refused", async () => {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  await fs.mkdir(join(root, "inside"), { recursive: true });
  try {
    for (const fenceDirectory of [root, join(root, "inside"), dir.path]) {
      await assert.rejects(
        watchTree(root, { changed() {}, lost() {} }, { fenceDirectory }),
        (error: unknown) => error instanceof TypeError && /fence directory/.test(error.message),
      );
    }
    // Nothing was written where it was refused.
    assert.deepEqual(await fs.readdir(join(root, "inside")), []);
  } finally {
    await dir.cleanup();
  }
});

test("watch: concurrent fences each resolve, and leave no cookie behind", async () => {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  const cookies = join(dir.path, "cookies");
  await fs.mkdir(root);
  await fs.mkdir(cookies);
  // Two watchers share one fence directory.
  const first = await track(root, cookies);
  const second = await track(root, cookies);
  try {
    await watchBelow(first.watcher, root);
    await watchBelow(second.watcher, root);
    const writes: Promise<void>[] = [];
    const fences: Promise<boolean>[] = [];
    for (let i = 0; i < 20; i++) {
      writes.push(fs.writeFile(join(root, `f${i}.txt`), "text\n"));
      fences.push(first.watcher.fence(), second.watcher.fence());
    }
    await Promise.all(writes);
    const results = await Promise.all(fences);
    if (first.losses.length + second.losses.length > 0) {
      // So many cookies at once may overflow Deno's event channel: a watcher that may have
      // lost an event says so, and its fences fail; none hangs, and no cookie is left.
      assert.ok(underDeno, "only Deno's watcher reports a burst as a loss here");
      assert.ok(results.every((result) => typeof result === "boolean"));
      assert.deepEqual(await fs.readdir(cookies), []);
      await first.watcher.close();
      await second.watcher.close();
      return;
    }
    assert.deepEqual(results, new Array(40).fill(true));
    assert.equal(await first.watcher.fence(), true);
    assert.equal(await second.watcher.fence(), true);
    const files = Array.from({ length: 20 }, (_, i) => join(root, `f${i}.txt`));
    assert.deepEqual(missing(first.changed, files), []);
    assert.deepEqual(missing(second.changed, files), []);
    assert.deepEqual(await fs.readdir(cookies), []);
    assert.deepEqual([...first.losses, ...second.losses], []);
    await first.watcher.close();
    await second.watcher.close();
    // A fence directory passed in is the caller's: it stays.
    assert.ok((await fs.stat(cookies)).isDirectory());
  } finally {
    await first.watcher.close();
    await second.watcher.close();
    await dir.cleanup();
  }
});

test("watch: a fence fails at once when its signal is aborted or its directory is gone", async () => {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  const cookies = join(dir.path, "cookies");
  await fs.mkdir(root);
  await fs.mkdir(cookies);
  const { watcher } = await track(root, cookies);
  try {
    await watchBelow(watcher, root);
    assert.equal(await watcher.fence(AbortSignal.abort()), false);
    assert.equal(await watcher.fence(new AbortController().signal), true);
    await fs.rm(cookies, { recursive: true });
    assert.equal(await watcher.fence(), false);
  } finally {
    await watcher.close();
    await dir.cleanup();
  }
});

test("watch: the watcher is recursive on Deno and per directory on Node", async () => {
  const dir = await tempDir();
  try {
    const { watcher } = await track(dir.path);
    assert.equal(watcher.perDirectory, !underDeno);
    await watcher.close();
  } finally {
    await dir.cleanup();
  }
});

test("watch: a burst larger than the kernel's event queue is reported in full, or the watch is lost", async () => {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  await fs.mkdir(root);
  let queue = 16384;
  try {
    queue = Number((await fs.readFile("/proc/sys/fs/inotify/max_queued_events", "utf8")).trim());
  } catch {
    // Not Linux: the default size.
  }
  const files = Math.min(queue + 5000, 100_000);
  const { watcher, changed, losses } = await track(root);
  try {
    await watchBelow(watcher, root);
    // The calling thread blocks while the files are made: no event is read meanwhile.
    const made = spawnSync("bash", [
      "-c",
      'cd "$1" && for ((i = 0; i < $2; i++)); do : > "f$i"; done',
      "sh",
      root,
      String(files),
    ]);
    assert.equal(made.status, 0);
    const fenced = await watcher.fence();
    if (losses.length > 0) {
      assert.equal(fenced, false);
      assert.equal(await watcher.fence(), false);
    } else {
      assert.equal(fenced, true);
      const expected = Array.from({ length: files }, (_, i) => join(root, `f${i}`));
      assert.deepEqual(missing(changed, expected).length, 0);
    }
  } finally {
    await watcher.close();
    await dir.cleanup();
  }
});

test("watch: a change in a directory also reached through a link in the tree is reported at its real path", async () => {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  await fs.mkdir(join(root, "real"), { recursive: true });
  // Several links, so that whichever order a recursive watcher meets them in, one comes after the real path.
  for (const name of ["a", "b", "c", "d", "e", "f"]) {
    await fs.mkdir(join(root, name));
    await symlinkOnDisk("../real", join(root, name, "link"));
  }
  const { watcher, changed, losses } = await track(root);
  try {
    await watchBelow(watcher, root);
    await fs.writeFile(join(root, "real", "file.txt"), "text\n");
    assert.equal(await watcher.fence(), true);
    assert.deepEqual(missing(changed, [join(root, "real", "file.txt")]), []);
    assert.deepEqual(losses, []);
  } finally {
    await watcher.close();
    await dir.cleanup();
  }
});

test("watch: node:fs watches are refused under Deno (one inotify instance each)", async () => {
  const dir = await tempDir();
  try {
    const started = watchTreeNode(dir.path, { changed() {}, lost() {} });
    if (underDeno) await assert.rejects(started, TypeError);
    else await (await started).close();
  } finally {
    await dir.cleanup();
  }
});

/** Deno's own test runner, whose sanitizers `node:test` tests do not get. */
const deno = (globalThis as {
  Deno?: {
    test(definition: {
      name: string;
      sanitizeOps: boolean;
      sanitizeResources: boolean;
      fn(): Promise<void>;
    }): void;
  };
}).Deno;

if (deno !== undefined) {
  deno.test({
    name: "watch: close leaves no watcher, pending operation or timer behind (Deno sanitizers)",
    sanitizeOps: true,
    sanitizeResources: true,
    async fn() {
      const dir = await tempDir();
      const root = join(dir.path, "repo");
      await fs.mkdir(join(root, "sub"), { recursive: true });
      const { watcher, changed, losses } = await track(root);
      try {
        await fs.writeFile(join(root, "sub", "file.txt"), "text\n");
        assert.equal(await watcher.fence(), true);
        assert.ok(changed.includes(join(root, "sub", "file.txt")));
        const pending = watcher.fence();
        await watcher.close();
        assert.equal(await pending, false);
        assert.deepEqual(losses, []);
      } finally {
        await watcher.close();
        await dir.cleanup();
      }
    },
  });
}

/**
 * Deno's tree watcher with its thread wrapped so that the test can drop its
 * events and post what a burst or the kernel's overflow brings (see
 * `fixtures/overflow_watch_worker.ts`): the watcher, and `say`, which says
 * a word to the watch threads and waits for the answer.
 */
async function wrappedDenoWatch() {
  // Computed, so that the Node build (which ships no Deno adapter) neither compiles nor resolves it.
  const adapter = "../src/backends/deno/watch.ts";
  const { denoWatches } = await import(adapter) as {
    denoWatches: (root: string, fences: FenceEvents, worker: URL) => Promise<Watches>;
  };
  const name = `overflow-${process.pid}-${Date.now()}`;
  const worker = new URL(`./fixtures/overflow_watch_worker.ts?channel=${name}`, import.meta.url);
  const channel = new BroadcastChannel(name);
  const watch: WatchTree = (root, handlers, options) =>
    fencedWatcher(root, handlers, options, (fences) => denoWatches(root, fences, worker));
  return {
    watch,
    say(word: string, answer: string) {
      const answered = new Promise<void>((resolve) => {
        channel.onmessage = ({ data }) => {
          if (data === answer) resolve();
        };
      });
      channel.postMessage(word);
      return answered;
    },
    close: () => channel.close(),
  };
}

/** {@link wrappedDenoWatch} over a new directory, with what it reported. */
async function overflowable() {
  const { watch, say, close } = await wrappedDenoWatch();
  const dir = await tempDir();
  const root = await fs.realpath(dir.path);
  const changed: string[] = [];
  const losses: string[] = [];
  const misses: string[] = [];
  const watcher = await watch(root, {
    changed: (path) => changed.push(path),
    lost: (reason) => losses.push(reason),
    missed: (reason) => misses.push(reason),
  }, {});
  return {
    root,
    watcher,
    changed,
    losses,
    misses,
    say,
    /** The watch made anew covers `made`, a directory whose creation was dropped. */
    async coversMade() {
      await fs.writeFile(join(root, "made", "after.txt"), "after\n");
      assert.equal(await watcher.fence(), true);
      assert.ok(changed.includes(join(root, "made", "after.txt")));
      assert.deepEqual(losses, []);
    },
    async close() {
      close();
      await watcher.close();
      await dir.cleanup();
    },
  };
}

test(
  "watch: an event flagged rescan (the kernel's overflow, should the runtime pass it on) has Deno's watch made anew, and the loss is a miss, not a loss",
  { skip: !underDeno && "Deno's watcher only" },
  async () => {
    const { root, watcher, changed, losses, misses, say, coversMade, close } = await overflowable();
    try {
      await fs.writeFile(join(root, "before.txt"), "before\n");
      assert.equal(await watcher.fence(), true);
      assert.ok(changed.includes(join(root, "before.txt")));
      // The kernel drops what comes now, a new directory's creation among it.
      await say("drop", "dropping");
      await fs.mkdir(join(root, "made"));
      await fs.writeFile(join(root, "made", "during.txt"), "during\n");
      const during = watcher.fence();
      await say("overflow", "overflowed");
      // The fence under way ends once the watch is made anew, the miss reported before it.
      assert.equal(await during, true);
      assert.deepEqual(losses, []);
      assert.equal(misses.length, 1);
      assert.match(misses[0], /overflowed; the watch was made anew/);
      assert.ok(!changed.includes(join(root, "made", "during.txt")), "a dropped event came");
      await coversMade();
    } finally {
      await close();
    }
  },
);

test(
  "watch: when Deno's watch drops events without a word, a fence that waited in vain has it made anew and reports a miss, not a loss",
  { skip: !underDeno && "Deno's watcher only" },
  async () => {
    const { root, watcher, losses, misses, say, coversMade, close } = await overflowable();
    try {
      await say("drop", "dropping");
      await fs.mkdir(join(root, "made"));
      // No event of its cookie comes: the fence waits its time, then has the watch made anew.
      assert.equal(await watcher.fence(), true);
      assert.deepEqual(losses, []);
      assert.equal(misses.length, 1);
      assert.match(misses[0], /no event of a fence came within \d+ ms; the watch was made anew/);
      await coversMade();
    } finally {
      await close();
    }
  },
);

test(
  "watch: a directory whose creation a burst dropped is found by the index's look at the tree, which has Deno's watch made anew, and later changes in it are answered",
  { skip: !underDeno && "Deno's watcher only" },
  async () => {
    const { watch, say, close } = await wrappedDenoWatch();
    const dir = await tempDir();
    const root = await fs.realpath(dir.path);
    await fs.writeFile(join(root, "a.txt"), "needle\n");
    const indexed = await createSession({ workingDirectory: root, searchIndex: { watch } });
    const plain = await createSession({ workingDirectory: root });
    const grep = async (session: ToolSessionContext) => {
      const result = await finalizeToolset({ session }).call({
        name: "grep",
        input: { pattern: "needle" },
        callId: "grep",
      });
      assert.equal(result.ok, true, JSON.stringify(result.error));
      return result.output;
    };
    const index = indexed.searchIndex!;
    try {
      await index.ready;
      // The burst: events dropped, a directory made among them, then the runtime's overrun.
      await say("drop", "dropping");
      await fs.mkdir(join(root, "made"));
      await fs.writeFile(join(root, "made", "during.txt"), "needle\n");
      // The burst's last change, in the root: its event comes (one for a file made in a directory
      // just made may not, the directory's watch being added after it).
      await fs.writeFile(join(root, "burst.txt"), "end\n");
      await say(`overrun ${join(root, "burst.txt")}`, "overran");
      assert.equal(await grep(indexed), await grep(plain));
      // Made after the burst, in the directory the old watch never covered.
      await fs.writeFile(join(root, "made", "after.txt"), "needle\n");
      // Searches walk while the index looks at the tree again; every answer is the walk's, until
      // the index gives one itself.
      for (let answered = false; !answered;) {
        const searches = index.stats().searches.indexed;
        const answer = await grep(indexed);
        assert.equal(answer, await grep(plain));
        assert.match(answer, /made\/after\.txt/);
        answered = index.stats().searches.indexed > searches;
        if (!answered) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(index.stats().builds, 1, index.stats().reason ?? "");
    } finally {
      await index.close();
      close();
      await dir.cleanup();
    }
  },
);
