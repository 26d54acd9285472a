/**
 * The search index when things go wrong: a watcher that loses track or
 * whose fence does not return, a search or a build cancelled, and the
 * path boundary (nothing outside the working directory, symbolic links
 * never followed). Whatever happens, grep and glob answer as a fresh walk.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type AsyncFileSystem,
  createSession,
  type FinalizedToolset,
  finalizeToolset,
  type SearchIndexHandle,
  type SearchIndexOptions,
} from "../mod.ts";
import type { TreeWatcher, WatchHandlers } from "../src/backends/watch.ts";
import { RACY_MS } from "../src/search/index/stamps.ts";
import { sh, tempDir } from "./helpers.ts";
import {
  assertSameAnswer,
  callTool,
  type IndexBackend,
  layOutTree,
  linkedIndexBackends,
  put,
  Random,
} from "./search_index_tree.ts";

const backends = await linkedIndexBackends();

/** A watcher the test drives: it reports what the test tells it to, and its fence does as the test says. */
class DrivenWatcher implements TreeWatcher {
  readonly perDirectory = false;
  readonly handlers: WatchHandlers;
  closed = false;
  /** What the next fence does (default: returns `true` at once). */
  fenceOnce: ((signal?: AbortSignal) => Promise<boolean>) | null = null;

  constructor(handlers: WatchHandlers) {
    this.handlers = handlers;
  }

  add(): void {}

  remove(): void {}

  fence(signal?: AbortSignal): Promise<boolean> {
    const once = this.fenceOnce;
    this.fenceOnce = null;
    return once === null ? Promise.resolve(true) : once(signal);
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/** Makes driven watchers for an index; while `hold` is set, a new watcher waits for it. */
class DrivenWatchers {
  readonly made: DrivenWatcher[] = [];
  hold: Promise<void> | null = null;
  readonly watch: NonNullable<SearchIndexOptions["watch"]> = async (_root, handlers) => {
    if (this.hold !== null) await this.hold;
    const watcher = new DrivenWatcher(handlers);
    this.made.push(watcher);
    return watcher;
  };

  /** The latest watcher made. */
  get current(): DrivenWatcher {
    return this.made[this.made.length - 1];
  }
}

/** A promise and the function that resolves it. */
function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Waits until the index is in `state` (the test's own timeout bounds the wait). */
async function until(index: SearchIndexHandle, state: string): Promise<void> {
  while (index.stats().state !== state) await sleep(5);
}

/** Until `condition` holds (the test's own timeout bounds the wait). */
async function untilTrue(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(5);
}

/**
 * Looks at an index's stats at every turn of the event loop (all a host
 * can ever see) until stopped: the states it was seen in, and every look
 * that found its memory over `limit`.
 */
function watchMemory(index: SearchIndexHandle, limit: number) {
  const states = new Set<string>();
  const over: string[] = [];
  const look = () => {
    const { state, memory } = index.stats();
    states.add(state);
    if (memory > limit) over.push(`${memory} bytes in state ${state}`);
  };
  let on = true;
  const looking = (async () => {
    while (on) {
      look();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  })();
  return {
    states,
    over,
    async stop() {
      on = false;
      await looking;
      look();
    },
  };
}

/** Writes `count` small files into `directory` (made here), 64 at a time. */
async function grow(directory: string, count: number): Promise<void> {
  await fs.mkdir(directory, { recursive: true });
  for (let i = 0; i < count; i += 64) {
    const names = Array.from({ length: Math.min(64, count - i) }, (_, k) => `grown_${i + k}.txt`);
    await Promise.all(
      names.map((name) => fs.writeFile(join(directory, name), `alpha ${name}\n`)),
    );
  }
}

/** A tree, a session with the index and one without, on a backend. */
async function pair(
  backend: IndexBackend,
  options: SearchIndexOptions | true,
  files = 300,
  wrap: (filesystem: AsyncFileSystem) => AsyncFileSystem = (filesystem) => filesystem,
): Promise<{
  root: string;
  outside: string;
  index: SearchIndexHandle;
  indexed: FinalizedToolset;
  plain: FinalizedToolset;
  same(name: string, input: Record<string, unknown>): Promise<void>;
  cleanup(): Promise<void>;
}> {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  const outside = join(dir.path, "outside");
  await layOutTree(root, outside, new Random(7), files);
  const indexedSession = await createSession({
    workingDirectory: root,
    filesystem: wrap(backend.create()),
    skillRoot: null,
    searchIndex: options,
  });
  const plainSession = await createSession({
    workingDirectory: root,
    filesystem: backend.create(),
    skillRoot: null,
  });
  const index = indexedSession.searchIndex!;
  const indexed = finalizeToolset({ session: indexedSession });
  const plain = finalizeToolset({ session: plainSession });
  return {
    root,
    outside,
    index,
    indexed,
    plain,
    async same(name, input) {
      await assertSameAnswer(indexed, plain, name, input, () => `backend ${backend.name}`);
    },
    async cleanup() {
      await index.close();
      await dir.cleanup();
    },
  };
}

/** Searches of every kind, compared between the two sessions. */
async function compareAll(
  same: (name: string, input: Record<string, unknown>) => Promise<void>,
  patterns: readonly string[],
): Promise<void> {
  for (const pattern of patterns) {
    await same("grep", { pattern });
    await same("grep", { pattern, mode: "content", context: 1 });
    await same("grep", { pattern, mode: "count", case_insensitive: true, max_results: 3 });
  }
  await same("glob", { pattern: "**/*.ts" });
  await same("glob", { pattern: "src/**", max_results: 5 });
}

for (const backend of backends) {
  test(`search index: watcher loss falls back to the walk, then rebuilds (${backend.name})`, {
    timeout: 120_000,
  }, async () => {
    const watchers = new DrivenWatchers();
    const { root, index, same, cleanup } = await pair(backend, { watch: watchers.watch });
    try {
      await index.ready;
      assert.equal(index.stats().builds, 1);
      let searches = index.stats().searches;
      await compareAll(same, ["alpha", "zanzibar"]);
      assert.ok(index.stats().searches.indexed > searches.indexed, "the index answered");

      // A change the watcher never reports, then the watcher loses track.
      await put(join(root, "src/unreported.ts"), "alpha lost_marker\n");
      const rebuild = gate();
      watchers.hold = rebuild.promise;
      watchers.current.handlers.lost("overflow");
      assert.equal(index.stats().state, "rebuilding");
      assert.match(index.stats().reason ?? "", /overflow/);
      assert.equal(watchers.made[0].closed, true, "the lost watcher is closed");
      searches = index.stats().searches;
      await compareAll(same, ["lost_marker", "alpha"]);
      assert.equal(index.stats().searches.indexed, searches.indexed, "nothing answered meanwhile");
      assert.ok(index.stats().searches.walked > searches.walked, "searches walked meanwhile");

      // Rebuilt: the index answers again, with what the lost watcher never reported.
      watchers.hold = null;
      rebuild.open();
      await until(index, "ready");
      assert.equal(index.stats().builds, 2);
      searches = index.stats().searches;
      await compareAll(same, ["lost_marker", "alpha"]);
      assert.ok(index.stats().searches.indexed > searches.indexed, "the rebuilt index answered");

      // A fence that does not return: that search walks, and the index is built again.
      await put(join(root, "lib/unfenced.ts"), "bravo fence_marker\n");
      const second = gate();
      watchers.hold = second.promise;
      watchers.current.fenceOnce = () => Promise.resolve(false);
      searches = index.stats().searches;
      await same("grep", { pattern: "fence_marker", mode: "content" });
      assert.equal(index.stats().searches.indexed, searches.indexed);
      assert.equal(index.stats().state, "rebuilding");
      await compareAll(same, ["fence_marker"]);
      watchers.hold = null;
      second.open();
      await until(index, "ready");
      assert.equal(index.stats().builds, 3);
      searches = index.stats().searches;
      await compareAll(same, ["fence_marker", "bravo"]);
      assert.ok(index.stats().searches.indexed > searches.indexed);
    } finally {
      await cleanup();
    }
  });

  test(
    `search index: a watcher that missed changes makes it look at the whole tree again, not build again (${backend.name})`,
    {
      timeout: 120_000,
    },
    async () => {
      const watchers = new DrivenWatchers();
      const { root, index, same, cleanup } = await pair(backend, { watch: watchers.watch });
      try {
        await index.ready;
        await compareAll(same, ["alpha", "zanzibar"]);

        // Changes no event reports: a new file, a rewritten one, a removed one, a directory moved,
        // and an ignore rule that hides what it did not.
        await put(join(root, "src/missed_new.ts"), "alpha missed_marker new\n");
        await put(join(root, "docs/README.md"), "# alpha\nmissed_marker rewritten\n");
        await fs.rm(join(root, "keep_me.log"));
        await fs.rename(join(root, "lib"), join(root, "lib_moved"));
        await put(join(root, "docs/.gitignore"), "*.md\n!README.md\n*.ts\n");
        const held = gate();
        watchers.current.fenceOnce = () => held.promise.then(() => true);
        watchers.current.handlers.missed!("dropped events");
        assert.equal(index.stats().state, "rebuilding");
        assert.match(index.stats().reason ?? "", /dropped events/);
        let searches = index.stats().searches;
        await compareAll(same, ["missed_marker", "alpha"]);
        assert.equal(
          index.stats().searches.indexed,
          searches.indexed,
          "nothing answered meanwhile",
        );
        assert.ok(index.stats().searches.walked > searches.walked, "searches walked meanwhile");

        // Looked at again: the index answers, with every change, from what it kept and read anew.
        held.open();
        await until(index, "ready");
        searches = index.stats().searches;
        await compareAll(same, ["missed_marker", "alpha", "zanzibar"]);
        await same("glob", { pattern: "lib*/**" });
        assert.ok(index.stats().searches.indexed > searches.indexed, "the index answered");
        assert.equal(index.stats().builds, 1, "not built again");
        assert.equal(index.stats().resyncs, 1);
        assert.deepEqual(
          watchers.made.map((watcher) => watcher.closed),
          [false],
          "the watcher is kept",
        );
      } finally {
        await cleanup();
      }
    },
  );

  test(
    `search index: a look at the whole tree reads again only the files whose stamp changed (${backend.name})`,
    {
      timeout: 120_000,
    },
    async () => {
      const watchers = new DrivenWatchers();
      // The files the index reads, as the workers are asked to read them.
      const read: string[] = [];
      const wrap = (filesystem: AsyncFileSystem): AsyncFileSystem => {
        const workers = filesystem.indexWorkers!;
        return {
          ...filesystem,
          indexWorkers: {
            ...workers,
            buildSegment(job) {
              read.push(...job.files.map((file) => file.slice(file.indexOf("/repo/") + 6)));
              return workers.buildSegment(job);
            },
          },
        };
      };
      const { root, index, same, cleanup } = await pair(
        backend,
        { watch: watchers.watch },
        300,
        wrap,
      );
      try {
        // A file read within RACY_MS of its last change has no stamp (it is read again every
        // time): the index is built once the tree is older than that.
        const made = Date.now();
        await untilTrue(() => Date.now() > made + RACY_MS + 500);
        await index.ready;
        assert.ok(read.length > 200, `${read.length} files read by the build`);
        read.length = 0;

        await put(join(root, "docs/README.md"), "# alpha\nstamp_marker rewritten\n");
        await put(join(root, "src/stamp_new.ts"), "alpha stamp_marker new\n");
        watchers.current.handlers.missed!("dropped events");
        await until(index, "ready");
        const searches = index.stats().searches;
        await compareAll(same, ["stamp_marker", "alpha"]);
        assert.ok(index.stats().searches.indexed > searches.indexed, "the index answered");
        assert.deepEqual(read.sort(), ["docs/README.md", "src/stamp_new.ts"]);
        assert.equal(index.stats().builds, 1);
      } finally {
        await cleanup();
      }
    },
  );

  test(
    `search index: changes missed while it builds are looked at once it is built (${backend.name})`,
    {
      timeout: 120_000,
    },
    async () => {
      const made: DrivenWatcher[] = [];
      const watch: NonNullable<SearchIndexOptions["watch"]> = (_root, handlers) => {
        const watcher = new DrivenWatcher(handlers);
        made.push(watcher);
        // After the build has its watcher: the walk is under way.
        queueMicrotask(() => handlers.missed!("dropped while building"));
        return Promise.resolve(watcher);
      };
      const { root, index, same, cleanup } = await pair(backend, { watch });
      try {
        // A change made while the index builds, reported by no event.
        await put(join(root, "src/during_build.ts"), "alpha build_marker\n");
        await index.ready;
        await until(index, "ready");
        const searches = index.stats().searches;
        await compareAll(same, ["build_marker", "alpha"]);
        assert.ok(index.stats().searches.indexed > searches.indexed, "the index answered");
        assert.equal(index.stats().builds, 1);
        assert.equal(index.stats().resyncs, 1);
        assert.equal(made.length, 1);
      } finally {
        await cleanup();
      }
    },
  );

  test(
    `search index: a burst of 2,000 rewritten files is looked at again, not built again (${backend.name})`,
    {
      timeout: 300_000,
    },
    async () => {
      // The runtime's own watcher. Deno's drops events past a channel of 16: such a burst is one
      // it may have dropped, every time; Node's sees it whole unless the kernel's queue fills.
      const { root, index, same, cleanup } = await pair(backend, true, 2_100);
      try {
        await index.ready;
        await compareAll(same, ["alpha"]);
        await sh(
          `cd "$1" || exit 1
        find . -path ./.git -prune -o -type f -print | head -n 2000 |
          while read -r f; do echo "alpha burst_marker" 2>/dev/null > "$f"; done; true`,
          root,
        );
        // Exact whatever the index is doing (walking while it looks again, or answering).
        await compareAll(same, ["burst_marker", "alpha"]);
        await until(index, "ready");
        const searches = index.stats().searches;
        await compareAll(same, ["burst_marker", "alpha"]);
        assert.ok(index.stats().searches.indexed > searches.indexed, "the index answered");
        assert.equal(index.stats().builds, 1, index.stats().reason ?? "");
      } finally {
        await cleanup();
      }
    },
  );

  test(`search index: a loss while it builds starts the build again (${backend.name})`, {
    timeout: 120_000,
  }, async () => {
    // Each new watcher loses track at once, while its build is under way (a
    // burst still going on), until the test lets one be.
    let lossesLeft = 3;
    const made: DrivenWatcher[] = [];
    const watch: NonNullable<SearchIndexOptions["watch"]> = (_root, handlers) => {
      const watcher = new DrivenWatcher(handlers);
      made.push(watcher);
      if (lossesLeft > 0) {
        lossesLeft--;
        // After the build has its watcher: the walk is under way.
        queueMicrotask(() => handlers.lost("overflow"));
      }
      return Promise.resolve(watcher);
    };
    const { root, index, same, cleanup } = await pair(backend, { watch });
    try {
      // A change made while the builds are lost, reported by no watcher.
      await put(join(root, "src/during_build.ts"), "alpha build_marker\n");
      await index.ready;
      assert.equal(index.stats().state, "ready");
      assert.equal(index.stats().builds, 4, "each loss started the build again");
      assert.deepEqual(made.slice(0, 3).map((watcher) => watcher.closed), [true, true, true]);
      const searches = index.stats().searches;
      await compareAll(same, ["build_marker", "alpha"]);
      assert.ok(index.stats().searches.indexed > searches.indexed, "the index answered");
    } finally {
      await cleanup();
    }
  });

  test(
    `search index: a watcher that keeps losing track while it builds makes the index unavailable (${backend.name})`,
    {
      timeout: 120_000,
    },
    async () => {
      let made = 0;
      const watch: NonNullable<SearchIndexOptions["watch"]> = (_root, handlers) => {
        made++;
        queueMicrotask(() => handlers.lost("overflow"));
        return Promise.resolve(new DrivenWatcher(handlers));
      };
      const { index, same, cleanup } = await pair(backend, { watch }, 50);
      try {
        // It gives up rather than build forever: ready rejects, and searches walk.
        await assert.rejects(index.ready, /lost track 8 times in a row/);
        assert.equal(index.stats().state, "unavailable");
        assert.equal(made, 8);
        const searches = index.stats().searches;
        await compareAll(same, ["alpha"]);
        assert.equal(index.stats().searches.indexed, searches.indexed);
        assert.ok(index.stats().searches.walked > searches.walked);
      } finally {
        await cleanup();
      }
    },
  );

  test(
    `search index: a build lost while it starts leaves the next build's entries alone (${backend.name})`,
    {
      timeout: 120_000,
    },
    async () => {
      // The first build waits in its first step (reading the user's git excludes) until the test
      // lets it go on; meanwhile its watcher is lost and the next build gets ready.
      const held = gate();
      let resumed: Promise<unknown> | null = null;
      const wrap = (filesystem: AsyncFileSystem): AsyncFileSystem => ({
        ...filesystem,
        readGitExcludes(environment) {
          const first = resumed === null;
          const answer = (async () => {
            if (first) await held.promise;
            return await filesystem.readGitExcludes?.(environment) ?? null;
          })();
          resumed ??= answer;
          return answer;
        },
      });
      const watchers = new DrivenWatchers();
      const { root, index, same, cleanup } = await pair(
        backend,
        { watch: watchers.watch },
        300,
        wrap,
      );
      try {
        await put(join(root, "top.txt"), "alpha top\n");
        const ready = index.ready;
        await untilTrue(() => watchers.made.length === 1 && resumed !== null);
        watchers.current.handlers.lost("overflow");
        await ready;
        assert.equal(index.stats().builds, 2);
        // The first build goes on: it must change nothing of the second's.
        held.open();
        await resumed;
        await sleep(0);
        // A file at the top that both builds met is removed, and reported.
        await fs.rm(join(root, "top.txt"));
        watchers.current.handlers.changed(join(root, "top.txt"));
        await same("glob", { pattern: "**", max_results: 2000 });
        await compareAll(same, ["alpha"]);
        assert.equal(index.stats().state, "ready");
      } finally {
        held.open();
        await cleanup();
      }
    },
  );

  test(
    `search index: the scan begins while the fence is under way, and a change the fence reports voids it (${backend.name})`,
    {
      timeout: 120_000,
    },
    async () => {
      // Scans the workers were asked for, counted as they are asked.
      let scans = 0;
      const wrap = (filesystem: AsyncFileSystem): AsyncFileSystem => {
        const workers = filesystem.indexWorkers!;
        return {
          ...filesystem,
          indexWorkers: {
            ...workers,
            scanFiles(job) {
              scans++;
              return workers.scanFiles(job);
            },
          },
        };
      };
      const watchers = new DrivenWatchers();
      const { root, index, same, cleanup } = await pair(
        backend,
        { watch: watchers.watch },
        300,
        wrap,
      );
      try {
        await index.ready;
        // A first search takes in whatever the start left to look at again (directories listed
        // within the racy window of their last change, say).
        await same("grep", { pattern: "alpha", mode: "files_with_matches" });
        // Nothing changed: the workers are scanning by the time the fence is asked.
        let scansAtFence = -1;
        watchers.current.fenceOnce = () => {
          scansAtFence = scans;
          return Promise.resolve(true);
        };
        scans = 0;
        await same("grep", { pattern: "alpha", mode: "count" });
        assert.ok(scansAtFence > 0, `${scansAtFence} scans asked for before the fence`);

        // Changes made before the call, reported only by its fence (as a watcher late with its
        // events would): the scan begun before is void, and the answer has them.
        await put(join(root, "late/new.ts"), "alpha late_marker\n");
        const changed = (await fs.readdir(join(root, "src"))).find((name) => name.endsWith(".ts"));
        if (changed !== undefined) await put(join(root, "src", changed), "late_marker alpha\n");
        watchers.current.fenceOnce = () => {
          watchers.current.handlers.changed(join(root, "late"));
          watchers.current.handlers.changed(join(root, "late/new.ts"));
          if (changed !== undefined) watchers.current.handlers.changed(join(root, "src", changed));
          return Promise.resolve(true);
        };
        const searches = index.stats().searches;
        await same("grep", { pattern: "late_marker", mode: "content" });
        assert.ok(index.stats().searches.indexed > searches.indexed, "the index answered");
        await compareAll(same, ["late_marker", "alpha"]);
      } finally {
        await cleanup();
      }
    },
  );

  test(
    `search index: a refresh that fails as its search is cancelled still builds the index again (${backend.name})`,
    {
      timeout: 120_000,
    },
    async () => {
      // The next segment the workers build fails, just as the search that asked for it is cancelled.
      let failNext: (() => void) | null = null;
      const wrap = (filesystem: AsyncFileSystem): AsyncFileSystem => {
        const workers = filesystem.indexWorkers!;
        return {
          ...filesystem,
          indexWorkers: {
            ...workers,
            buildSegment(job) {
              const fail = failNext;
              failNext = null;
              if (fail === null) return workers.buildSegment(job);
              fail();
              return Promise.resolve({
                id: 0,
                segment: null,
                locals: new Int32Array(0),
                sizes: new Int32Array(0),
                error: "a segment failed",
              });
            },
          },
        };
      };
      const watchers = new DrivenWatchers();
      const { root, index, indexed, same, cleanup } = await pair(
        backend,
        { watch: watchers.watch },
        300,
        wrap,
      );
      try {
        await index.ready;
        await put(join(root, "src/refreshed.ts"), "alpha refreshed_marker\n");
        watchers.current.handlers.changed(join(root, "src/refreshed.ts"));
        const turn = new AbortController();
        failNext = () => turn.abort();
        const cancelled = await callTool(indexed, "grep", { pattern: "alpha" }, turn.signal);
        assert.equal(cancelled.error?.code, "cancelled", cancelled.output);
        // The index could not take the change in: it does not answer until it is built again.
        assert.notEqual(index.stats().state, "ready");
        assert.match(index.stats().reason ?? "", /a segment failed/);
        await compareAll(same, ["refreshed_marker"]);
        await until(index, "ready");
        assert.equal(index.stats().builds, 2);
        const searches = index.stats().searches;
        await compareAll(same, ["refreshed_marker", "alpha"]);
        assert.ok(index.stats().searches.indexed > searches.indexed, "the rebuilt index answered");
      } finally {
        await cleanup();
      }
    },
  );

  test(`search index: the memory limit holds in every state of a growing index (${backend.name})`, {
    timeout: 120_000,
  }, async () => {
    // The limit: half as much again as a 300-file tree's index takes, when
    // nothing limits it. A tree of eight times as many files passes it.
    const probe = await pair(backend, true);
    let limit: number;
    try {
      await probe.index.ready;
      limit = Math.round(probe.index.stats().memory * 1.5);
    } finally {
      await probe.cleanup();
    }

    // Building: a tree past the limit from the start. The listing in a worker stops at the limit
    // too, rather than hold the whole tree first.
    const listings: { over?: number; entries: { readonly ends: Uint32Array } }[] = [];
    const big = await pair(backend, { memoryLimit: limit }, 2400, (filesystem) => {
      const workers = filesystem.indexWorkers!;
      if (workers.listTree === undefined) return filesystem;
      return {
        ...filesystem,
        indexWorkers: {
          ...workers,
          listTree: async (job) => {
            const answer = await workers.listTree!(job);
            listings.push(answer);
            return answer;
          },
        },
      };
    });
    try {
      const seen = watchMemory(big.index, limit);
      await assert.rejects(big.index.ready, /more than its limit/);
      await seen.stop();
      assert.deepEqual(seen.over, []);
      for (const listing of listings) {
        assert.ok(
          listing.over !== undefined && listing.entries.ends.length === 0,
          "the listing stopped",
        );
      }
      assert.ok(seen.states.has("building"), [...seen.states].join());
      assert.equal(big.index.stats().state, "unavailable");
      await big.same("grep", { pattern: "alpha", mode: "count" });
    } finally {
      await big.cleanup();
    }

    // Refreshing, then rebuilding: a tree within the limit that grows past it.
    for (const how of ["refresh", "rebuild"] as const) {
      const watchers = new DrivenWatchers();
      const tree = await pair(backend, { memoryLimit: limit, watch: watchers.watch });
      try {
        await tree.index.ready;
        const seen = watchMemory(tree.index, limit);
        await grow(join(tree.root, "grown"), 2100);
        if (how === "refresh") {
          watchers.current.handlers.changed(join(await fs.realpath(tree.root), "grown"));
        } else {
          watchers.current.handlers.lost("overflow");
        }
        await tree.same("grep", { pattern: "grown_2099", mode: "files_with_matches" });
        await untilTrue(() => tree.index.stats().state === "unavailable");
        await seen.stop();
        assert.deepEqual(seen.over, [], how);
        assert.ok(seen.states.has(how === "refresh" ? "ready" : "rebuilding"), how);
        assert.match(tree.index.stats().reason ?? "", /more than its limit/);
        await tree.same("grep", { pattern: "grown_1", mode: "count" });
      } finally {
        await tree.cleanup();
      }
    }
  });

  test(`search index: cancellation stops a search and the build (${backend.name})`, {
    timeout: 120_000,
  }, async () => {
    const watchers = new DrivenWatchers();
    const first = await pair(backend, { watch: watchers.watch });
    try {
      await first.index.ready;
      // Cancelled while the search waits for the watcher's fence.
      const turn = new AbortController();
      watchers.current.fenceOnce = (signal) => {
        turn.abort();
        return new Promise((resolve) => {
          if (signal?.aborted) resolve(false);
          else signal?.addEventListener("abort", () => resolve(false), { once: true });
        });
      };
      const cancelled = await callTool(first.indexed, "grep", { pattern: "alpha" }, turn.signal);
      assert.equal(cancelled.error?.code, "cancelled", cancelled.output);
      // A cancelled search is not a lost watcher: the index still answers.
      assert.equal(first.index.stats().state, "ready");
      assert.equal(first.index.stats().builds, 1);
      const searches = first.index.stats().searches;
      await compareAll(first.same, ["alpha"]);
      assert.ok(first.index.stats().searches.indexed > searches.indexed);

      // Closed while the build waits for its watcher: close settles, the build stops.
      const held = new DrivenWatchers();
      const opening = gate();
      held.hold = opening.promise;
      const second = await pair(backend, { watch: held.watch }, 50);
      try {
        const ready = second.index.ready;
        assert.equal(second.index.stats().state, "building");
        await second.index.close();
        assert.equal(second.index.stats().state, "closed");
        await assert.rejects(ready);
        held.hold = null;
        opening.open();
        // The watcher that arrives after the close is closed at once.
        await untilTrue(() => held.made.length === 1 && held.made[0].closed);
        const before = second.index.stats().searches;
        await compareAll(second.same, ["alpha", "zanzibar"]);
        const now = second.index.stats();
        assert.equal(now.state, "closed");
        assert.equal(now.searches.indexed, before.indexed, "a closed index answers nothing");
        assert.ok(now.searches.walked > before.walked);
      } finally {
        await second.cleanup();
      }

      // Closed while the segments are built, with the runtime's watcher.
      const third = await pair(backend, true, 2000);
      try {
        const ready = third.index.ready.then(() => "ready", () => "rejected");
        await third.index.close();
        assert.equal(third.index.stats().state, "closed");
        await ready;
        const before = third.index.stats().searches;
        await compareAll(third.same, ["alpha", "zanzibar"]);
        assert.equal(third.index.stats().searches.indexed, before.indexed);
        assert.equal(third.index.stats().files, 0, "a closed index holds nothing");
      } finally {
        await third.cleanup();
      }
    } finally {
      await first.cleanup();
    }
  });

  test(
    `search index: nothing outside the roots is indexed; symbolic links are not followed (${backend.name})`,
    {
      timeout: 120_000,
    },
    async () => {
      // The tree holds links to a file and a directory outside, and to a directory inside (links/).
      const { root, outside, index, indexed, same, cleanup } = await pair(backend, true, 200);
      // The first line of grep's answer: a path, or "No matches." (the skipped counts follow).
      const grepOf = async (pattern: string) =>
        (await callTool(indexed, "grep", { pattern })).output.split("\n")[0];
      const everything = async () =>
        (await callTool(indexed, "glob", { pattern: "**", max_results: 2000 })).output.split("\n");
      try {
        await put(join(root, "swap/inner.ts"), "alpha swapped_marker\n");
        await put(join(outside, "other/far.ts"), "alpha outsider_marker far\n");
        await index.ready;
        await compareAll(same, ["outsider_marker", "swapped_marker", "alpha"]);
        assert.equal(await grepOf("outsider_marker"), "No matches.");
        assert.equal(await grepOf("swapped_marker"), "swap/inner.ts");
        const paths = await everything();
        assert.ok(!paths.some((path) => path.startsWith("links/out/")), "never gone through");
        assert.ok(!paths.some((path) => path.startsWith("links/to_dir/")), "never gone through");

        // Outside changes, and a directory swapped for a link to outside, lead nowhere.
        await put(join(outside, "late.ts"), "alpha outsider_marker late\n");
        await sh('rm -r "$1" && ln -s "$2" "$1"', join(root, "swap"), join(outside, "other"));
        await compareAll(same, ["outsider_marker", "swapped_marker"]);
        assert.equal(await grepOf("outsider_marker"), "No matches.");
        assert.equal(await grepOf("swapped_marker"), "No matches.");
        assert.ok(!(await everything()).some((path) => path.startsWith("swap/")));

        // A link swapped for a real directory is entered like any directory.
        await sh(
          'rm "$1" && mkdir "$1" && echo "alpha inside_now" > "$1/now.ts"',
          join(root, "links/out"),
        );
        await compareAll(same, ["inside_now", "outsider_marker"]);
        assert.equal(await grepOf("inside_now"), "links/out/now.ts");

        // A directory some link inside the tree points to is still watched by its own path.
        await fs.writeFile(join(root, "src/through.ts"), "alpha through_marker\n");
        await same("grep", { pattern: "through_marker" });
        const [first] = (await callTool(indexed, "glob", { pattern: "src/*.ts" })).output.split(
          "\n",
        );
        await fs.appendFile(join(root, first), "appended_marker\n");
        await same("grep", { pattern: "appended_marker", mode: "content" });
        assert.equal(await grepOf("appended_marker"), first);
      } finally {
        await cleanup();
      }
    },
  );
}
