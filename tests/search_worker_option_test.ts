/**
 * Where grep's and glob's tree searches run when the host chooses: the
 * `searchWorker` option of the Node backend (a bundled host's worker module,
 * or none at all), and the combined signal a call's deadline uses.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryFileSystem, createSession, finalizeToolset } from "../mod.ts";
import type { AsyncFileSystem, FinalizedToolset } from "../mod.ts";
import { createNodeFileSystem } from "../node.ts";
import { sharedPool } from "../src/backends/workers/pool.ts";
import type { SearchPool } from "../src/backends/workers/pool.ts";
import { moduleBeside } from "../src/runtime/checks.ts";
import { anySignal } from "../src/runtime/signals.ts";
import { tempDir } from "./helpers.ts";

/** Files enough that a search goes on past the calling thread's first part. */
function files(): Record<string, string> {
  const layout: Record<string, string> = {};
  for (let i = 0; i < 400; i++) {
    layout[`d${i % 9}/f${String(i).padStart(3, "0")}.txt`] = i % 5 === 0
      ? `alpha\nneedle ${i}\n`
      : `nothing ${i}\n`;
  }
  return layout;
}

/** Counts the jobs a pool's workers take, until `restore` is called. */
function countJobs(pool: SearchPool): { jobs: number; restore(): void } {
  const counts = { jobs: 0, restore: () => {} };
  const { searchTree, globTree } = pool;
  pool.searchTree = (...args) => (counts.jobs++, searchTree.apply(pool, args));
  pool.globTree = (...args) => (counts.jobs++, globTree.apply(pool, args));
  counts.restore = () => {
    delete (pool as Partial<SearchPool>).searchTree;
    delete (pool as Partial<SearchPool>).globTree;
  };
  return counts;
}

async function toolsetOn(root: string, filesystem: AsyncFileSystem): Promise<FinalizedToolset> {
  return finalizeToolset({ session: await createSession({ workingDirectory: root, filesystem }) });
}

const INPUTS: readonly [string, Record<string, unknown>][] = [
  ["grep", { pattern: "needle", max_results: 2000 }],
  ["grep", { pattern: "needle \\d+", mode: "content", max_results: 2000 }],
  ["glob", { pattern: "**/*.txt", max_results: 2000 }],
];

/** Every input's result data on `filesystem`, with `memory` holding the same files. */
async function compare(
  root: string,
  filesystem: AsyncFileSystem,
  layout: Record<string, string>,
): Promise<void> {
  const memory = createMemoryFileSystem();
  memory.mkdirp("/repo");
  for (const [path, text] of Object.entries(layout)) memory.writeFile(`/repo/${path}`, text);
  const disk = await toolsetOn(root, filesystem);
  const plain = await toolsetOn("/repo", memory);
  for (const [name, input] of INPUTS) {
    const call = (toolset: FinalizedToolset) =>
      toolset.call({ name, input, callId: name, approve: () => Promise.resolve(true) });
    const [a, b] = [await call(disk), await call(plain)];
    assert.equal(a.ok, true, a.output);
    assert.deepEqual(a.data, b.data, JSON.stringify(input));
  }
}

async function withFiles(body: (root: string, layout: Record<string, string>) => Promise<void>) {
  const dir = await tempDir();
  try {
    const layout = files();
    for (const [path, text] of Object.entries(layout)) {
      await mkdir(join(dir.path, path, ".."), { recursive: true });
      await writeFile(join(dir.path, path), text);
    }
    await body(dir.path, layout);
  } finally {
    await dir.cleanup();
  }
}

test("search worker option: null keeps every grep and glob on the calling thread, with the same results", async () => {
  await withFiles(async (root, layout) => {
    const workers = countJobs(
      sharedPool(moduleBeside(import.meta.url, "../src/backends/node/search_worker")),
    );
    try {
      await compare(root, createNodeFileSystem({ searchWorker: null }), layout);
      assert.equal(workers.jobs, 0, "no search went to the backend's own workers");
    } finally {
      workers.restore();
    }
  });
});

test("search worker option: a module URL the host gives runs the searches past the first files", async () => {
  await withFiles(async (root, layout) => {
    // The same worker under another URL: a pool of its own, as a bundle's worker would have.
    const moved = new URL(
      "?moved",
      moduleBeside(import.meta.url, "../src/backends/node/search_worker"),
    );
    const workers = countJobs(sharedPool(moved));
    try {
      // Once a worker is ready, a search goes on in the workers after the first step here.
      const disk = createNodeFileSystem({ searchWorker: moved });
      disk.prepareSearch?.();
      await sharedPool(moved).whenReady();
      await compare(root, disk, layout);
      assert.ok(workers.jobs > 0, "the given module's workers searched");
    } finally {
      workers.restore();
    }
  });
});

test("search worker option: a listing starts no search worker; it walks on the calling thread, and goes to the workers once a search or the host started them", async () => {
  await withFiles(async (root, layout) => {
    // A pool of its own, as in the test above.
    const url = new URL(
      "?listing",
      moduleBeside(import.meta.url, "../src/backends/node/search_worker"),
    );
    const pool = sharedPool(url);
    const workers = countJobs(pool);
    try {
      const disk = createNodeFileSystem({ searchWorker: url });
      const memory = createMemoryFileSystem();
      memory.mkdirp("/repo");
      for (const [path, text] of Object.entries(layout)) memory.writeFile(`/repo/${path}`, text);
      const [here, plain] = [await toolsetOn(root, disk), await toolsetOn("/repo", memory)];
      const glob = (toolset: FinalizedToolset) =>
        toolset.call({ name: "glob", input: { pattern: "**" }, callId: "glob" });
      assert.deepEqual((await glob(here)).data, (await glob(plain)).data);
      assert.equal(pool.available, false, "no worker started");
      assert.equal(workers.jobs, 0);
      disk.prepareSearch?.();
      await pool.whenReady();
      assert.deepEqual((await glob(here)).data, (await glob(plain)).data);
      assert.equal(workers.jobs, 1, "the listing went to the workers");
    } finally {
      workers.restore();
    }
  });
});

test("combined signal: aborts with the first source's reason, and not after it is released", () => {
  const [a, b] = [new AbortController(), new AbortController()];
  const first = anySignal([a.signal, b.signal]);
  assert.equal(first.signal.aborted, false);
  b.abort("b's reason");
  assert.equal(first.signal.aborted, true);
  assert.equal(first.signal.reason, "b's reason");
  a.abort("a's reason");
  assert.equal(first.signal.reason, "b's reason");

  const source = new AbortController();
  const released = anySignal([source.signal]);
  released.release();
  source.abort();
  assert.equal(released.signal.aborted, false);

  const already = anySignal([new AbortController().signal, AbortSignal.abort("done")]);
  assert.equal(already.signal.aborted, true);
  assert.equal(already.signal.reason, "done");
});
