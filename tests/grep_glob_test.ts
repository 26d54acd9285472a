/**
 * The spec's §11 line "grep / glob 达到上限后停止遍历而不是先收集全树" and the
 * search semantics of grep and glob, on every file-system backend.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { AsyncFileSystem, GlobOutput, GrepOutput } from "../mod.ts";
import { WALK_READ_AHEAD, walkOrder } from "../src/search/walk.ts";
import { sharedPool, treeStart } from "../src/backends/workers/pool.ts";
import type { SearchPool } from "../src/backends/workers/pool.ts";
import { workerSearches } from "../src/backends/workers/searches.ts";
import { listDirectorySync } from "../src/backends/node/list_sync.ts";
import { UnitSteps, VerifiedDirectories } from "../src/backends/workers/unit.ts";
import type { TreeSpec, UnitAnswer } from "../src/backends/workers/unit.ts";
import { Routes } from "../src/backends/descriptor_route.ts";
import { matcherFor, scanOne } from "../src/backends/workers/scan_file.ts";
import { unwrapCheckedPath } from "../src/path/checked_path.ts";
import { moduleBeside } from "../src/runtime/checks.ts";
import { compileMatcher, type LineMatcher } from "../src/search/matcher.ts";
import { SCAN_STEP, scanBytes, scanBytesPausing, ScanStopped } from "../src/search/scan.ts";
import { setImmediate } from "node:timers";
import { createMemoryFileSystem, createSession, finalizeToolset } from "../mod.ts";
import { SIMD_BUFFER_BYTES, SimdSearch } from "../src/search/simd.ts";
import { byteLiteral, findLiteral, holdsLiteral, holdsNul } from "../src/search/bytes.ts";
import { Buffer } from "node:buffer";
import { readdirSync, writeFileSync } from "node:fs";
import { backendFixtures, type Layout, tempDir, underDeno, workspace } from "./helpers.ts";
import { defaultDescriptorLink } from "../src/backends/descriptor_link.ts";
import picomatch from "picomatch";
import { parseRegex, requiredEnding } from "../src/search/glob_regex.ts";
import { globFilter, globMatcher } from "../src/search/glob_filter.ts";

const fixtures = await backendFixtures();

/** Numbers in [0, n) from a fixed seed: the same sequence on every run and runtime. */
function seededRandom(seed: number): (n: number) => number {
  return (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return (seed >>> 8) % n;
  };
}

/** Where `literal` first starts in `text` at or after `from`, byte by byte; -1 if nowhere. */
function naive(text: Uint8Array, literal: Uint8Array, from: number): number {
  outer: for (let i = from; i + literal.length <= text.length; i++) {
    for (let k = 0; k < literal.length; k++) if (text[i + k] !== literal[k]) continue outer;
    return i;
  }
  return -1;
}

/** A tree of `dirs` directories with `files` files each, every file holding `needle`. */
function tree(dirs: number, files: number): Layout {
  const layout: Layout = {};
  for (let d = 0; d < dirs; d++) {
    for (let f = 0; f < files; f++) {
      layout[`d${String(d).padStart(2, "0")}/f${String(f).padStart(2, "0")}.txt`] =
        `x\nneedle ${d} ${f}\n`;
    }
  }
  return layout;
}

/** Wraps a backend to count directory listings and file reads. */
function counting(filesystem: AsyncFileSystem): { opened: number; listed: number } {
  const counts = { opened: 0, listed: 0 };
  const readFile = filesystem.readFile.bind(filesystem);
  const readChunks = filesystem.readChunks.bind(filesystem);
  const readDir = filesystem.readDir.bind(filesystem);
  filesystem.readFile = (path, options) => {
    if (path.display.endsWith(".txt")) counts.opened++;
    return readFile(path, options);
  };
  filesystem.readChunks = (path, options) => {
    counts.opened++;
    return readChunks(path, options);
  };
  filesystem.readDir = (path) => {
    counts.listed++;
    return readDir(path);
  };
  return counts;
}

for (const fixture of fixtures) {
  const name = fixture.name;

  test(`grep (${name}): a file over 64 KiB goes to the search workers, not the calling thread, and is found in walk order`, async () => {
    // One line over 64 KiB: matched whole, it could hold the host's thread for seconds.
    const big = `${"x".repeat(100_000)} needle\n`;
    const ws = await workspace(fixture, {
      "a.txt": "needle\n",
      "b/big.txt": big,
      "b/c.txt": "needle\n",
      "big-alone.txt": big,
      "d.txt": "needle\n",
    });
    const readWhole: string[] = [];
    const filesystem = ws.filesystem;
    const readFile = filesystem.readFile;
    filesystem.readFile = async (path, options) => {
      const bytes = await readFile.call(filesystem, path, options);
      readWhole.push(path.display);
      return bytes;
    };
    try {
      const grep = await ws.call("grep", { pattern: "need+le", mode: "count" });
      assert.deepEqual(
        (grep.data as GrepOutput).counts,
        ["a.txt", "b/big.txt", "b/c.txt", "big-alone.txt", "d.txt"].map((path) => ({
          path,
          count: 1,
        })),
        grep.output,
      );
      // The large file first in its walk: the workers walk the whole directory.
      const first = await ws.call("grep", { pattern: "need+le", path: "b" });
      assert.deepEqual((first.data as GrepOutput).files, ["b/big.txt", "b/c.txt"], first.output);
      const alone = await ws.call("grep", {
        pattern: "need+le",
        path: "big-alone.txt",
        mode: "content",
      });
      assert.deepEqual(
        (alone.data as GrepOutput).lines.map((l) => [l.path, l.line]),
        [["big-alone.txt", 1]],
        alone.output.slice(0, 200),
      );
      // With search workers, the calling thread never read the large files whole.
      if (name !== "memory") {
        assert.deepEqual(readWhole.filter((path) => path.includes("big")), [], `${readWhole}`);
      }
    } finally {
      filesystem.readFile = readFile;
      await ws.cleanup();
    }
  });

  test(`grep (${name}): a counted repetition's digits are not text a file must hold`, async () => {
    const ws = await workspace(fixture, {
      "runs.txt": `${"a".repeat(1000)}\n${"1".repeat(100)}-bcd\n`,
      "hashes.txt": `${"0123456789abcdef".repeat(8)}\n`,
    });
    try {
      for (
        const [pattern, files] of [
          ["a{1000}", ["runs.txt"]],
          ["[a-f0-9]{100}", ["hashes.txt", "runs.txt"]],
          ["1{2,100}-bcd", ["runs.txt"]],
          ["(?:ab){0}1{100}-", ["runs.txt"]],
        ] as const
      ) {
        assert.doesNotMatch(compileMatcher(pattern).literalText ?? "", /\d/, pattern);
        for (const mode of ["files_with_matches", "content", "count"] as const) {
          const grep = await ws.call("grep", { pattern, mode });
          const data = grep.data as GrepOutput;
          const found = mode === "files_with_matches"
            ? data.files
            : mode === "count"
            ? data.counts.map((c) => c.path)
            : [...new Set(data.lines.map((l) => l.path))];
          assert.deepEqual(found, files, `${pattern} (${mode}): ${grep.output.slice(0, 200)}`);
        }
      }
    } finally {
      await ws.cleanup();
    }
  });

  test(`工具语义 (${name}): grep and glob stop traversal at the limit instead of collecting the tree first`, async () => {
    const ws = await workspace(fixture, tree(40, 10));
    try {
      const counts = counting(ws.filesystem);
      const grep = await ws.call("grep", { pattern: "needle", max_results: 5 });
      const data = grep.data as GrepOutput;
      assert.equal(data.files.length, 5);
      assert.equal(data.truncated, true);
      // Five results, plus at most the reads already in flight (8 at once): never the 400 files.
      assert.ok(counts.opened <= 5 + 8, `${counts.opened} files were opened`);
      assert.ok(
        counts.listed <= 2 + 2 * WALK_READ_AHEAD,
        `${counts.listed} directories were listed`,
      );
      const before = counts.listed;
      const glob = await ws.call("glob", { pattern: "**/*.txt", max_results: 3 });
      assert.deepEqual((glob.data as GlobOutput).paths, [
        "d00/f00.txt",
        "d00/f01.txt",
        "d00/f02.txt",
      ]);
      assert.equal((glob.data as GlobOutput).truncated, true);
      // The root and the first directory, plus the listings requested ahead: never all 40.
      assert.ok(
        counts.listed - before <= 2 + 2 * WALK_READ_AHEAD,
        `${counts.listed - before} listings`,
      );
      assert.equal(
        (await ws.call("grep", { pattern: "x", max_results: 0 })).error?.code,
        "invalid_input",
      );
      assert.equal(
        (await ws.call("glob", { pattern: "*", max_results: 0 })).error?.code,
        "invalid_input",
      );
      assert.equal(
        (await ws.call("glob", { pattern: "*", max_results: 2001 })).error?.code,
        "invalid_input",
      );
      const absolute = await ws.call("glob", { pattern: "/etc/*" });
      assert.equal(absolute.error?.code, "invalid_input");
      assert.match(absolute.output, /relative to `path`/);
    } finally {
      await ws.cleanup();
    }
  });

  // A backend with search workers walks through its own synchronous calls, not readDir: its
  // cancellation is tested with the workers below.
  if (fixture.name === "memory") {
    test(`grep (${name}): cancellation mid-walk returns cancelled promptly`, async () => {
      const ws = await workspace(fixture, tree(10, 10));
      try {
        const turn = new AbortController();
        const readDir = ws.filesystem.readDir.bind(ws.filesystem);
        let listings = 0;
        // Abort from inside the walk, after the third directory listing.
        ws.filesystem.readDir = async (path) => {
          if (++listings === 3) turn.abort();
          return await readDir(path);
        };
        const grepResult = await ws.call("grep", { pattern: "needle", mode: "count" }, turn.signal);
        assert.equal(grepResult.error?.code, "cancelled");
        // Listings already requested ahead may finish; no new one starts after the abort.
        assert.ok(listings <= 2 + WALK_READ_AHEAD, `${listings} listings after the abort`);
        listings = 0;
        const again = new AbortController();
        ws.filesystem.readDir = async (path) => {
          if (++listings === 2) again.abort();
          return await readDir(path);
        };
        const globResult = await ws.call("glob", { pattern: "**" }, again.signal);
        assert.equal(globResult.error?.code, "cancelled");
      } finally {
        await ws.cleanup();
      }
    });
  }

  test(`grep (${name}): a hostile pattern against a 100 KB line completes`, async () => {
    const ws = await workspace(fixture, {
      "evil.txt": "a".repeat(100_000) + "!\n",
      "ok.txt": "aaa\n",
    });
    try {
      const result = await ws.call("grep", { pattern: "(a+)+$", mode: "content" });
      assert.equal(result.ok, true, result.output);
      const data = result.data as GrepOutput;
      assert.deepEqual(data.lines.map((l) => l.path), ["ok.txt"]);
      const cut = await ws.call("grep", { pattern: "a{3}", mode: "content" });
      assert.match(cut.output, /evil\.txt:1:a{500} \[… line cut, 99501 more characters\]/);
      const invalid = await ws.call("grep", { pattern: "(unclosed" });
      assert.equal(invalid.error?.code, "invalid_input");
      assert.match(invalid.output, /missing closing \)/);
      const backref = await ws.call("grep", { pattern: "(a)\\1" });
      assert.equal(backref.error?.code, "invalid_input", "backreferences are not linear: refused");
    } finally {
      await ws.cleanup();
    }
  });

  test(`grep (${name}): skipped counts are exact`, async () => {
    const ws = await workspace(fixture, { "text.txt": "hit\n" });
    try {
      const put = async (path: string, bytes: Uint8Array) =>
        await ws.filesystem.writeFileAtomic(
          await ws.session.resolvePath(path, "write", "may_create"),
          bytes,
        );
      await put("b1.bin", new Uint8Array([104, 105, 116, 0, 1]));
      await put("b2.bin", new Uint8Array([0, 104, 105, 116]));
      await put("b3.bin", new Uint8Array([1, 2, 0]));
      const big = new Uint8Array(32 * 1024 * 1024 + 1).fill(104);
      await put("huge.txt", big);
      const result = await ws.call("grep", { pattern: "hit" });
      const data = result.data as GrepOutput;
      assert.deepEqual(data.files, ["text.txt"]);
      assert.deepEqual(data.skipped, { too_large: 1, binary: 3, unreadable: 0 });
      assert.match(result.output, /Skipped files: 1 over 32 MiB, 3 binary, 0 unreadable/);
    } finally {
      await ws.cleanup();
    }
  });

  test(`grep (${name}): modes, context, case and the glob filter`, async () => {
    const ws = await workspace(fixture, {
      "src/a.ts": "one\nTwo\nthree\nfour\nfive\nsix two\n",
      "src/deep/b.ts": "two\n",
      "docs/c.md": "two\n",
      "top.ts": "nothing\n",
    });
    try {
      const files = await ws.call("grep", { pattern: "two", case_insensitive: true });
      assert.deepEqual((files.data as GrepOutput).files, [
        "docs/c.md",
        "src/a.ts",
        "src/deep/b.ts",
      ]);
      const count = await ws.call("grep", {
        pattern: "two",
        mode: "count",
        case_insensitive: true,
      });
      assert.equal(count.output, "docs/c.md:1\nsrc/a.ts:2\nsrc/deep/b.ts:1");
      const content = await ws.call("grep", {
        pattern: "^Two$",
        mode: "content",
        context: 1,
        path: "src",
      });
      assert.equal(content.output, "src/a.ts-1-one\nsrc/a.ts:2:Two\nsrc/a.ts-3-three");
      const byName = await ws.call("grep", { pattern: "two", glob: "*.ts" });
      assert.deepEqual((byName.data as GrepOutput).files, ["src/a.ts", "src/deep/b.ts"]);
      const byPath = await ws.call("grep", { pattern: "two", glob: "src/*.ts" });
      assert.deepEqual((byPath.data as GrepOutput).files, ["src/a.ts"]);
      const excluded = await ws.call("grep", { pattern: "two", glob: "!*.md" });
      assert.deepEqual((excluded.data as GrepOutput).files, ["src/a.ts", "src/deep/b.ts"]);
      const single = await ws.call("grep", {
        pattern: "two",
        path: "src/deep/b.ts",
        mode: "content",
      });
      assert.equal(single.output, "src/deep/b.ts:1:two");
      const limited = await ws.call("grep", { pattern: "e", mode: "content", max_results: 2 });
      assert.equal((limited.data as GrepOutput).lines.filter((l) => !l.context).length, 2);
    } finally {
      await ws.cleanup();
    }
  });

  test(`glob (${name}): output order is sorted and stable`, async () => {
    const ws = await workspace(fixture, {
      "b/z.ts": "",
      "a-c.ts": "",
      "a/b.ts": "",
      "A.ts": "",
      ".hidden/x.ts": "",
      "a/.dot.ts": "",
      "c.md": "",
    });
    try {
      const first = await ws.call("glob", { pattern: "**/*.ts" });
      const paths = (first.data as GlobOutput).paths;
      assert.deepEqual(paths, [".hidden/x.ts", "A.ts", "a/.dot.ts", "a/b.ts", "a-c.ts", "b/z.ts"]);
      const second = await ws.call("glob", { pattern: "**/*.ts" });
      assert.deepEqual((second.data as GlobOutput).paths, paths);
      assert.deepEqual((await ws.call("glob", { pattern: "*.ts" })).data, {
        paths: ["A.ts", "a-c.ts"],
        truncated: false,
      });
      assert.deepEqual((await ws.call("glob", { pattern: "{a,b}/*.ts" })).data, {
        paths: ["a/.dot.ts", "a/b.ts", "b/z.ts"],
        truncated: false,
      });
      assert.deepEqual((await ws.call("glob", { pattern: "*.ts", path: "a" })).data, {
        paths: ["a/.dot.ts", "a/b.ts"],
        truncated: false,
      });
      assert.deepEqual((await ws.call("glob", { pattern: "!(*.ts)" })).data, {
        paths: [".hidden", "a", "b", "c.md"],
        truncated: false,
      });
    } finally {
      await ws.cleanup();
    }
  });

  test(`grep and glob (${name}): .gitignore rules apply, nested ones too, and .git is never entered`, async () => {
    const ws = await workspace(fixture, {
      ".gitignore": "build/\n*.log\n!keep.log\n",
      "build/out.txt": "needle\n",
      "app.log": "needle\n",
      "keep.log": "needle\n",
      "src/.gitignore": "generated.ts\n",
      "src/generated.ts": "needle\n",
      "src/main.ts": "needle\n",
      "src/sub/generated.ts": "needle\n",
      ".git/HEAD": "needle\n",
      ".env": "needle\n",
      "link.txt": { symlink: "src/main.ts" },
    });
    try {
      const grep = await ws.call("grep", { pattern: "needle" });
      assert.deepEqual((grep.data as GrepOutput).files, [".env", "keep.log", "src/main.ts"]);
      const glob = await ws.call("glob", { pattern: "**/*" });
      assert.deepEqual((glob.data as GlobOutput).paths, [
        ".env",
        ".gitignore",
        "keep.log",
        "src",
        "src/.gitignore",
        "src/main.ts",
        "src/sub",
      ]);
      // Searching inside a subdirectory still honours the root's .gitignore.
      const sub = await ws.call("grep", { pattern: "needle", path: "src" });
      assert.deepEqual((sub.data as GrepOutput).files, ["src/main.ts"]);
      const ignoredDir = await ws.call("glob", { pattern: "**", path: "build" });
      assert.deepEqual((ignoredDir.data as GlobOutput).paths, []);
    } finally {
      await ws.cleanup();
    }
  });

  test(`grep and glob (${name}): outside a git repository .gitignore files do not apply, as in ripgrep`, async () => {
    const ws = await workspace(fixture, {
      ".gitignore": "/*\n",
      "a.txt": "needle\n",
      "sub/.git/HEAD": "x\n",
      "sub/.gitignore": "skip.txt\n",
      "sub/skip.txt": "needle\n",
      "sub/keep.txt": "needle\n",
    });
    try {
      const grep = await ws.call("grep", { pattern: "needle" });
      // The root is no repository: its "/*" does not apply. sub/ is one: its rules do.
      assert.deepEqual((grep.data as GrepOutput).files, ["a.txt", "sub/keep.txt"]);
    } finally {
      await ws.cleanup();
    }
  });
}

/** A tree for comparing a backend's search workers with the search on the calling thread. */
function searchLayout(): Layout {
  const layout: Layout = {};
  for (let i = 0; i < 600; i++) {
    const body = i % 7 === 0 ? `alpha\nneedle ${i}\nomega\nneedle again\n` : `nothing ${i}\n`;
    layout[`d${i % 13}/f${String(i).padStart(3, "0")}.txt`] = body;
  }
  Object.assign(layout, {
    "bin/blob.dat": "needle\0binary",
    "repo/.git/config": "needle\n",
    "repo/.gitignore": "*.log\nbuild/\n!keep.log\n",
    "repo/a.log": "needle\n",
    "repo/keep.log": "needle\n",
    "repo/build/out.txt": "needle\n",
    "repo/src/.gitignore": "gen.ts\n",
    "repo/src/gen.ts": "needle\n",
    "repo/src/main.ts": "needle\n",
    "repo/.hidden/h.ts": "needle\n",
    "z/a-c.txt": "needle\n",
    "z/a/b.txt": "needle\n",
    "z/link.txt": { symlink: "a/b.txt" },
  });
  // Nested directories in a repository, so the workers hand directories to each other with
  // the .gitignore layers above them (build/ from the repository's root, skip.txt from pkg*/).
  for (let p = 0; p < 12; p++) {
    layout[`repo/pkg${p}/.gitignore`] = "skip.txt\n";
    layout[`repo/pkg${p}/build/out.txt`] = "needle\n";
    for (let q = 0; q < 6; q++) {
      const dir = `repo/pkg${p}/sub${q}`;
      layout[`${dir}/keep.txt`] = `needle ${p} ${q}\n`;
      layout[`${dir}/skip.txt`] = "needle\n";
      layout[`${dir}/deeper/more.ts`] = q % 2 === 0 ? "needle\n" : "none\n";
    }
  }
  // Files larger than a search worker's 64 KiB read chunk: a literal across the first chunk
  // boundary, one deep in a later chunk, none at all, and a NUL in the first 8 KiB.
  const filler = (bytes: number) => "filler line\n".repeat(Math.ceil(bytes / 12)).slice(0, bytes);
  Object.assign(layout, {
    "zz/big-boundary.txt": `${filler(65536 - 4)}\nneedle 1 across\n${filler(1000)}`,
    "zz/big-deep.txt": `${filler(300_000)}\nneedle 2 deep\n${filler(70_000)}\nneedle 3 last`,
    "zz/big-none.txt": filler(200_000),
    "zz/big-binary.dat": `${filler(100)}\0${filler(100_000)}\nneedle 4\n`,
  });
  return layout;
}

const searchInputs = [
  { pattern: "needle", max_results: 2000 },
  { pattern: "needle", mode: "count", max_results: 2000 },
  { pattern: "^needle \\d+$", mode: "content", context: 1, max_results: 2000 },
  { pattern: "NEEDLE", case_insensitive: true, mode: "content", max_results: 150 },
  { pattern: "needle", glob: "*.ts", max_results: 2000 },
  { pattern: "needle", glob: "!d1*/**", max_results: 2000 },
  { pattern: "needle", max_results: 70 },
  { pattern: "needle (1|2)\\d", mode: "count", path: "d3", max_results: 2000 },
];

const byName = Object.fromEntries(fixtures.map((f) => [f.name, f]));

/** The process's pool of search workers for a backend's worker module. */
function poolOf(name: string): SearchPool {
  return sharedPool(moduleBeside(import.meta.url, `../src/backends/${name}/search_worker`));
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

/** A worker module whose workers exit as they start. */
const EXITING_WORKER = moduleBeside(import.meta.url, "fixtures/exiting_search_worker");

for (const name of ["node", "deno"].filter((n) => n in byName)) {
  test(`grep (${name}): the backend's search workers give exactly the results of the search on the calling thread`, async () => {
    const fast = await workspace(byName[name], searchLayout());
    const plain = await workspace(byName.memory, searchLayout());
    const workers = countJobs(poolOf(name));
    try {
      for (const input of searchInputs) {
        const a = await fast.call("grep", input);
        const b = await plain.call("grep", input);
        assert.equal(a.output, b.output, JSON.stringify(input));
        assert.deepEqual(a.data, b.data);
      }
      assert.ok(workers.jobs > 0, "the workers searched");
      // Workers that cannot start leave the rest of the search to the calling thread.
      Object.assign(
        fast.filesystem,
        workerSearches(
          fast.filesystem,
          EXITING_WORKER,
          () => Promise.resolve(null),
          listDirectorySync,
        ),
      );
      for (const input of searchInputs) {
        const a = await fast.call("grep", input);
        const b = await plain.call("grep", input);
        assert.deepEqual(a.data, b.data, JSON.stringify(input));
      }
    } finally {
      workers.restore();
      await fast.cleanup();
      await plain.cleanup();
    }
  });

  test(`glob (${name}): the backend's search workers give exactly the paths of the walk on the calling thread`, async () => {
    const fast = await workspace(byName[name], searchLayout());
    const plain = await workspace(byName.memory, searchLayout());
    const pool = poolOf(name);
    // A listing starts no worker: it goes to those a search started, once ready.
    assert.equal((await fast.call("grep", { pattern: "needle" })).ok, true);
    await pool.whenReady();
    const workers = countJobs(pool);
    try {
      const inputs = [
        { pattern: "**", max_results: 2000 },
        { pattern: "**/*.txt", max_results: 2000 },
        { pattern: "**/*.{ts,log}", max_results: 2000 },
        { pattern: "d1*/**", max_results: 2000 },
        { pattern: "**/f5??.txt", max_results: 30 },
        { pattern: "**", max_results: 300 },
        { pattern: "*", path: "d4", max_results: 2000 },
      ];
      for (const input of inputs) {
        const a = await fast.call("glob", input);
        const b = await plain.call("glob", input);
        assert.deepEqual(a.data, b.data, JSON.stringify(input));
      }
      assert.ok(workers.jobs > 0, "the workers walked");
      // Going on after a directory: what it holds comes next (glob meets directories, so the
      // walk on the calling thread can stop at one).
      const everything = (await plain.call("glob", { pattern: "**", max_results: 2000 }))
        .data as GlobOutput;
      // The route the backend found: /proc/self/fd itself where the runtime allows it, else the
      // link to it (Deno under the tests' flags).
      const route = underDeno ? defaultDescriptorLink()! : "/proc/self/fd";
      const start = treeStart(await fast.session.resolvePath(".", "read", "must_exist"), [route]);
      const ignore = { inRepository: false, sources: [], userExcludes: null };
      for (const after of ["d1", "repo/pkg0/sub0", "repo/pkg0/sub0/deeper", "bin"]) {
        assert.ok(everything.paths.includes(after));
        const walked: string[] = [];
        for await (const paths of pool.globTree(start, { ignore, pattern: "**" }, after)) {
          walked.push(...paths);
        }
        const expected = everything.paths.filter((path) => walkOrder(path, after) > 0);
        assert.deepEqual(walked, expected, `after ${after}`);
      }
      const turn = new AbortController();
      const globTree = fast.filesystem.globTree.bind(fast.filesystem);
      fast.filesystem.globTree = async function* (start, glob, signal) {
        for await (const paths of globTree(start, glob, signal)) {
          yield paths;
          turn.abort();
        }
      };
      const cancelled = await fast.call("glob", { pattern: "**", max_results: 2000 }, turn.signal);
      assert.equal(cancelled.error?.code, "cancelled");
      // Workers that cannot start leave the rest of the walk to the calling thread.
      Object.assign(
        fast.filesystem,
        workerSearches(
          fast.filesystem,
          EXITING_WORKER,
          () => Promise.resolve(null),
          listDirectorySync,
        ),
      );
      const input = { pattern: "**/*.txt", max_results: 2000 };
      assert.deepEqual(
        (await fast.call("glob", input)).data,
        (await plain.call("glob", input)).data,
      );
    } finally {
      workers.restore();
      await fast.cleanup();
      await plain.cleanup();
    }
  });

  test(`grep and glob (${name}): a tree job walked on the calling thread in steps, then by the workers after the last entry walked there, gives exactly the results of one walk`, async () => {
    const ws = await workspace(byName[name], {
      ...searchLayout(),
      // Larger than a chunk, and matched line by line (in count mode): the calling thread leaves
      // it to the workers.
      "d5/large.txt": "needle\n".repeat(12_000),
    });
    const pool = poolOf(name);
    try {
      await pool.whenReady();
      const start = await ws.session.resolvePath(".", "read", "must_exist");
      const route = underDeno ? defaultDescriptorLink()! : "/proc/self/fd";
      const begun = treeStart(start, [route]);
      const ignore = { inRepository: false, sources: [], userExcludes: null };
      const request = {
        pattern: "needle",
        caseInsensitive: false,
        mode: "count" as const,
        maxBytes: 1 << 24,
        context: 0,
      };
      const cases = [
        {
          select: { matching: "**" },
          all: () => pool.globTree(begun, { ignore, pattern: "**" }, undefined),
        },
        {
          select: { search: request, files: undefined },
          all: () => pool.searchTree(begun, { ignore, request }, undefined),
        },
      ];
      for (const { select, all } of cases) {
        const whole: string[] = [];
        for await (const batch of all()) {
          whole.push(...batch.map((item) => typeof item === "string" ? item : item.display));
        }
        assert.ok(whole.length > 100, `${whole.length} results`);
        for (const stepsHere of [1, 3, 1000]) {
          const spec: TreeSpec = {
            id: 0,
            start: ".",
            select,
            limit: Number.MAX_SAFE_INTEGER,
            flags: new SharedArrayBuffer(8),
            routes: [route],
          };
          const steps = new UnitSteps(
            spec,
            { real: unwrapCheckedPath(start), display: ".", ignore },
            new Routes([route]),
            listDirectorySync,
            (directories, real, request, stopped, leaveLarge) =>
              scanOne(directories, real, matcherFor(request), request, stopped, leaveLarge),
          );
          const here: string[] = [];
          const take = (answers: UnitAnswer[]) => {
            for (const answer of answers) if ("displays" in answer) here.push(...answer.displays);
          };
          let state = "paused";
          let left = false;
          // A step whose time is up at once stops after a few entries.
          for (let n = 0; n < stepsHere && state === "paused"; n++) {
            const step = steps.step(0, true);
            take(step.answers);
            state = step.state;
            left ||= state === "left";
          }
          if (state === "left") assert.equal(steps.through! < "d5/large.txt", true);
          const rest: string[] = [];
          if (state !== "done") {
            const after = steps.through;
            const more = "matching" in select
              ? pool.globTree(begun, { ignore, pattern: "**" }, after)
              : pool.searchTree(begun, { ignore, request }, after);
            for await (const batch of more) {
              rest.push(...batch.map((item) => typeof item === "string" ? item : item.display));
            }
          }
          assert.notEqual(steps.through, undefined, "the calling thread walked");
          assert.deepEqual([...here, ...rest], whole, `${JSON.stringify(select)}, ${stepsHere}`);
          if ("search" in select && stepsHere === 1000) {
            assert.ok(left, "the large file was left to the workers");
          }
        }
        // A stopped job's steps stop, and send nothing more.
        const flags = new SharedArrayBuffer(8);
        const stopped = new UnitSteps(
          { id: 0, start: ".", select, limit: Number.MAX_SAFE_INTEGER, flags, routes: [route] },
          { real: unwrapCheckedPath(start), display: ".", ignore },
          new Routes([route]),
          listDirectorySync,
          (directories, real, request, stopped, leaveLarge) =>
            scanOne(directories, real, matcherFor(request), request, stopped, leaveLarge),
        );
        assert.equal(stopped.step(0, true).state, "paused");
        Atomics.store(new Int32Array(flags), 0, 1);
        assert.deepEqual(stopped.step(Number.POSITIVE_INFINITY, true), {
          answers: [],
          state: "stopped",
        });
      }
    } finally {
      await ws.cleanup();
    }
  });

  test(`glob (${name}): a listing goes to the search workers once one is ready, and gives the same paths`, async () => {
    const fast = await workspace(byName[name], searchLayout());
    const plain = await workspace(byName.memory, searchLayout());
    const workers = countJobs(poolOf(name));
    try {
      await poolOf(name).whenReady();
      const before = workers.jobs;
      const input = { pattern: "**/*.txt", max_results: 2000 };
      const walked = await fast.call("glob", input);
      assert.deepEqual(walked.data, (await plain.call("glob", input)).data);
      assert.equal(workers.jobs, before + 1, "the listing went to the workers");
    } finally {
      workers.restore();
      await fast.cleanup();
      await plain.cleanup();
    }
  });

  test(`grep (${name}): every backend of a process shares one pool of search workers`, async (t) => {
    const threads = () => readdirSync("/proc/self/task").length;
    try {
      threads();
    } catch {
      // Deno grants /proc/self only with --allow-all; Node runs this test on the same pool code.
      t.skip("the thread count cannot be read here");
      return;
    }
    const first = await workspace(byName[name], searchLayout());
    const others = await Promise.all([1, 2, 3].map(() => workspace(byName[name], searchLayout())));
    try {
      // The first tree search starts the pool's workers (and the runtime's own helpers).
      assert.equal((await first.call("grep", { pattern: "needle" })).ok, true);
      const before = threads();
      for (const ws of others) {
        let searched = false;
        const searchTree = ws.filesystem.searchTree.bind(ws.filesystem);
        ws.filesystem.searchTree = (start, search, signal) => {
          searched = true;
          return searchTree(start, search, signal);
        };
        assert.equal((await ws.call("grep", { pattern: "needle" })).ok, true);
        assert.ok(searched, "the tree search ran");
      }
      // Three more backends, three more tree searches: no new worker threads.
      assert.ok(threads() - before < 2, `${before} threads, then ${threads()}`);
    } finally {
      await first.cleanup();
      for (const ws of others) await ws.cleanup();
    }
  });

  test(`grep (${name}): cancelling during the tree search returns cancelled and stops it`, async () => {
    const ws = await workspace(byName[name], searchLayout());
    try {
      const searchTree = ws.filesystem.searchTree.bind(ws.filesystem);
      const turn = new AbortController();
      let after = 0;
      ws.filesystem.searchTree = async function* (start, search, signal) {
        for await (const hits of searchTree(start, search, signal)) {
          if (turn.signal.aborted) after++;
          yield hits;
          turn.abort();
        }
      };
      const result = await ws.call("grep", { pattern: "needle", max_results: 2000 }, turn.signal);
      assert.equal(result.error?.code, "cancelled");
      assert.equal(after, 0, "no batch came after the abort");
      // The workers are free for the next search.
      const again = await ws.call("grep", { pattern: "needle", mode: "count", max_results: 2000 });
      assert.equal(again.ok, true);
    } finally {
      await ws.cleanup();
    }
  });
}

test("grep: the byte search finds NUL bytes and literals, non-ASCII ones too, within a view only", () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  const literal = byteLiteral(encode("naïve ✓"));
  const bytes = encode("xx naïve ✓ yy");
  assert.equal(holdsLiteral(bytes, literal), true);
  assert.equal(holdsLiteral(encode("naïve ✗"), literal), false);
  // Bytes outside the view are not searched, at either end.
  const around = encode("naïve ✓|plain text|naïve ✓");
  const inner = around.subarray(
    encode("naïve ✓|").length,
    around.length - encode("|naïve ✓").length,
  );
  assert.equal(new TextDecoder().decode(inner), "plain text");
  assert.equal(holdsLiteral(inner, literal), false);
  assert.equal(holdsNul(inner), false);
  const withNul = encode("ab\0cd");
  assert.equal(holdsNul(withNul), true);
  assert.equal(holdsNul(withNul.subarray(3)), false);
  // Every byte value stands for itself: no decoding merges or splits bytes.
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  assert.equal(holdsLiteral(all, byteLiteral(all.slice(200, 210))), true);
  assert.equal(holdsLiteral(all, byteLiteral(Uint8Array.of(201, 200))), false);
});

test("grep and glob: walkOrder is segment-by-segment code-unit order, a directory before what it holds", () => {
  // The definition, spelled out: split into segments and compare them in turn.
  const bySegments = (a: string, b: string) => {
    const left = a.split("/");
    const right = b.split("/");
    for (let i = 0; i < Math.min(left.length, right.length); i++) {
      if (left[i] !== right[i]) return left[i] < right[i] ? -1 : 1;
    }
    return left.length - right.length;
  };
  // Units below, at and above "/" (0x2f), and a non-ASCII one.
  const alphabet = ["a", "b", "-", ".", " ", "0", "é", "_"];
  const random = seededRandom(7);
  const path = () =>
    Array.from(
      { length: 1 + random(3) },
      () => Array.from({ length: 1 + random(3) }, () => alphabet[random(alphabet.length)]).join(""),
    )
      .join("/");
  for (let i = 0; i < 20000; i++) {
    const a = path();
    const b = random(4) === 0 ? `${a}/${path()}` : path();
    assert.equal(Math.sign(walkOrder(a, b)), Math.sign(bySegments(a, b)), `${a} vs ${b}`);
    assert.equal(Math.sign(walkOrder(b, a)), Math.sign(bySegments(b, a)), `${b} vs ${a}`);
  }
  assert.ok(walkOrder("a/b.ts", "a-c.ts") < 0);
  assert.ok(walkOrder("a", "a/b") < 0);
  assert.equal(walkOrder("x/y", "x/y"), 0);
});

test("grep: the literal search by rare byte finds exactly what a plain search finds, where that byte is rare or common", () => {
  const random = seededRandom(11);
  // Small alphabets make the rare byte common (the switch to the whole-literal search),
  // large ones keep it rare; literals are planted at the edges and across the text.
  let found = 0;
  for (let round = 0; round < 3000; round++) {
    const alphabet = 2 + random(round % 2 === 0 ? 3 : 60);
    const text = Uint8Array.from({ length: random(600) }, () => 97 + random(alphabet));
    const literal = Uint8Array.from({ length: 1 + random(6) }, () => 97 + random(alphabet));
    if (random(3) === 0 && text.length >= literal.length) {
      const at = [0, text.length - literal.length, random(text.length - literal.length + 1)][
        random(3)
      ];
      text.set(literal, at);
    }
    const from = random(3) === 0 ? random(text.length + 1) : 0;
    const expected = naive(text, literal, from);
    if (expected !== -1) found++;
    const prepared = byteLiteral(literal);
    const message = `${new TextDecoder().decode(literal)} in ${
      new TextDecoder().decode(text)
    } from ${from}`;
    // Both ways of searching, whichever this runtime uses for holdsLiteral.
    assert.equal(findLiteral(Buffer.from(text), prepared, from), expected, message);
    assert.equal(
      findLiteral(Buffer.from(text).toString("latin1"), prepared, from),
      expected,
      message,
    );
  }
  // The switch to the whole-literal search happens at a failed candidate; a match starting
  // just after it is still found.
  const switching = `${"bx".repeat(16)}bbab`;
  const bab = byteLiteral(new TextEncoder().encode("bab"));
  assert.equal(bab.rare, 0);
  assert.equal(findLiteral(Buffer.from(switching, "latin1"), bab, 0), 33);
  assert.equal(findLiteral(switching, bab, 0), 33);
  // Both outcomes are well represented.
  assert.ok(found > 600 && found < 2400, `${found} of 3000 held the literal`);
  assert.equal(holdsLiteral(new TextEncoder().encode(switching), bab), true);
});

test("grep: count and files_with_matches agree with testing every line, for literal and regular patterns", () => {
  const random = seededRandom(5);
  const words = [
    "needle",
    "neeedle",
    "nee",
    "dle",
    "spin_lock_irqsave(",
    "spin_lock_irq(",
    "x",
    " ",
  ];
  const separators = ["\n", "\r\n", "", " "];
  const patterns = ["needle", "nee+dle", "spin_lock_irq(save|restore)\\(", "ne{2,}dle$"];
  for (let round = 0; round < 400; round++) {
    let text = "";
    for (let i = random(40); i > 0; i--) {
      text += words[random(words.length)] + separators[random(separators.length)];
    }
    const bytes = new TextEncoder().encode(text);
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    for (const pattern of patterns) {
      const matcher = compileMatcher(pattern);
      const expected = lines.filter((line) => new RegExp(pattern).test(line)).length;
      const request = { pattern, caseInsensitive: false, context: 0, maxBytes: 1 << 20 };
      const count = scanBytes(bytes, matcher, { ...request, mode: "count" });
      assert.equal(count.matches, expected, `${pattern} in ${JSON.stringify(text)}`);
      const files = scanBytes(bytes, matcher, { ...request, mode: "files_with_matches" });
      assert.equal(files.matches, Math.min(expected, 1), `${pattern} in ${JSON.stringify(text)}`);
      const content = scanBytes(bytes, matcher, { ...request, mode: "content" });
      assert.equal(content.matches, expected, `${pattern} in ${JSON.stringify(text)}`);
    }
  }
  // The pattern that is its own literal (escaped punctuation included) needs no regular
  // expression; one with more does.
  assert.equal(compileMatcher("EXPORT_SYMBOL_GPL").exact, true);
  assert.equal(compileMatcher("EXPORT_SYMBOL_GPL\\(").exact, true);
  assert.equal(compileMatcher("EXPORT_SYMBOL_GPL\\(\\w").exact, false);
  assert.equal(compileMatcher("EXPORT_SYMBOL_GPL(_NS)?").exact, false);
  assert.equal(compileMatcher("EXPORT_SYMBOL_GPL", { caseInsensitive: true }).exact, false);
});

test("grep: a file scanned where it lies gives what its bytes scanned whole give, in every mode", async () => {
  const random = seededRandom(11);
  const words = [
    "spin_lock_irqsave(",
    "spin_lock_irqrestore(&l, f);",
    "spin_lock_irq(",
    "spin_lock_irqsave",
    "needle",
    "needle\nneedle",
    "é",
    "x",
  ];
  const separators = ["\n", "\r\n", "", " ", "\n\n"];
  const patterns = [
    "spin_lock_irq(save|restore)\\(",
    "spin_lock_irq",
    "spin_lock_irqsave\\(",
    "spin_lock_irq(save|restore)\\(&?[a-z]",
    "needle$",
    "^needle",
    "n(ee|é)dle",
  ];
  const dir = await tempDir();
  try {
    const files: { path: string; bytes: Uint8Array }[] = [];
    for (let i = 0; i < 120; i++) {
      // Some larger than a chunk (64 KiB), most within one.
      const count = i % 10 === 0 ? 6000 + random(6000) : random(60);
      let text = "";
      for (let w = 0; w < count; w++) {
        text += words[random(words.length)] + separators[random(separators.length)];
      }
      const bytes = new TextEncoder().encode(text);
      // Invalid UTF-8 in some: a lone continuation byte, and a lead byte cut short.
      const raw = i % 3 === 0
        ? new Uint8Array([...bytes.subarray(0, 50), 0x80, 0xe2, ...bytes.subarray(50)])
        : bytes;
      const path = `${dir.path}/f${i}.txt`;
      writeFileSync(path, raw);
      files.push({ path, bytes: raw });
    }
    const route = underDeno ? defaultDescriptorLink()! : "/proc/self/fd";
    const directories = new VerifiedDirectories(new Routes([route]));
    let matched = 0;
    try {
      for (const pattern of patterns) {
        for (const mode of ["count", "files_with_matches", "content"] as const) {
          const request = { pattern, caseInsensitive: false, mode, context: 0, maxBytes: 1 << 24 };
          const matcher = matcherFor(request);
          for (const { path, bytes } of files) {
            const whole = scanBytes(bytes, compileMatcher(pattern), request);
            for (const candidate of [false, true]) {
              const here = scanOne(
                directories,
                path,
                matcher,
                request,
                () => false,
                false,
                candidate,
              );
              assert.equal(here.matches, whole.matches, `${pattern} ${mode} ${path} ${candidate}`);
              assert.deepEqual(here.lines, whole.lines, `${pattern} ${mode} ${path} ${candidate}`);
            }
            if (whole.matches > 0) matched++;
          }
        }
      }
    } finally {
      directories.release();
    }
    assert.ok(matched > 500, `${matched} files matched`);
  } finally {
    await dir.cleanup();
  }
});

test("grep: a larger file counted read by read gives what its bytes scanned whole give, across reads and past a line longer than a read", async () => {
  const line = (text: string, width: number) => text + " ".repeat(Math.max(0, width - text.length));
  // Matching lines placed across each boundary where a read may end (the first chunk, the
  // SIMD buffer, and the buffer less a carried line), a line longer than the buffer, and a
  // last line with no line break.
  const edges = [64 * 1024, SIMD_BUFFER_BYTES, 2 * SIMD_BUFFER_BYTES - 100, 3 * SIMD_BUFFER_BYTES];
  const build = (long: boolean): Uint8Array => {
    let text = "";
    for (const edge of edges) {
      while (text.length + 60 <= edge - 20) text += line("filler text", 59) + "\n";
      text += line("", edge - 20 - text.length - 1) + "\n";
      // Starts 20 bytes before the edge.
      text += "a spin_lock_irqsave(&l, f) across the edge\nspin_lock_irq(x) no\n";
    }
    if (long) text += `${"spin_lock_irqrestore(".repeat(2)}${"z".repeat(SIMD_BUFFER_BYTES)}\n`;
    text += "spin_lock_irqrestore(&l, f) at the end";
    return new TextEncoder().encode(text);
  };
  const dir = await tempDir();
  const route = underDeno ? defaultDescriptorLink()! : "/proc/self/fd";
  const directories = new VerifiedDirectories(new Routes([route]));
  try {
    for (const long of [false, true]) {
      const bytes = build(long);
      const path = `${dir.path}/large${long ? "-long-line" : ""}.c`;
      writeFileSync(path, bytes);
      for (
        const pattern of [
          "spin_lock_irq(save|restore)\\(",
          "spin_lock_irq",
          "irq(save|restore)\\(&l",
        ]
      ) {
        for (const mode of ["count", "files_with_matches"] as const) {
          const request = { pattern, caseInsensitive: false, mode, context: 0, maxBytes: 1 << 24 };
          const whole = scanBytes(bytes, compileMatcher(pattern), request);
          for (const candidate of [false, true]) {
            const here = scanOne(
              directories,
              path,
              matcherFor(request),
              request,
              () => false,
              false,
              candidate,
            );
            assert.deepEqual(here, whole, `${pattern} ${mode} ${path} ${candidate}`);
          }
        }
      }
      // One matching line at each edge and one at the end, and the long one; a cap below the
      // file's size passes the file over.
      const count = { pattern: "spin_lock_irq(save|restore)\\(", mode: "count" as const };
      const request = { ...count, caseInsensitive: false, context: 0, maxBytes: 1 << 24 };
      assert.equal(
        scanOne(directories, path, matcherFor(request), request, () => false).matches,
        long ? 6 : 5,
      );
      const capped = { ...request, maxBytes: bytes.length - 1 };
      assert.equal(
        scanOne(directories, path, matcherFor(capped), capped, () => false).skip,
        "too_large",
      );
    }
  } finally {
    directories.release();
    await dir.cleanup();
  }
});

test("grep: the SIMD search finds exactly the bytes and literals a plain search finds", () => {
  const simd = SimdSearch.create();
  assert.ok(simd !== null, "WebAssembly SIMD is available on this runtime");
  const random = seededRandom(17);
  let found = 0;
  for (let round = 0; round < 4000; round++) {
    const alphabet = 2 + random(round % 2 === 0 ? 3 : 40);
    // Lengths around the 16-byte blocks, and up to the whole buffer.
    const length = round % 50 === 0 ? SIMD_BUFFER_BYTES - random(20) : random(90);
    const text = Uint8Array.from({ length }, () => 97 + random(alphabet));
    const literal = Uint8Array.from({ length: 1 + random(7) }, () => 97 + random(alphabet));
    if (random(2) === 0 && length >= literal.length) {
      text.set(
        literal,
        [0, length - literal.length, random(length - literal.length + 1)][random(3)],
      );
    }
    // Somewhere in the buffer, with other bytes around it that must not be searched.
    const at = random(Math.min(40, SIMD_BUFFER_BYTES - length + 1));
    simd.buffer.fill(0x61, 0, SIMD_BUFFER_BYTES);
    simd.buffer.set(text, at);
    const prepared = byteLiteral(literal);
    assert.equal(simd.setLiteral(prepared), true);
    const expected = naive(text, literal, 0);
    if (expected !== -1) found++;
    const got = simd.findLiteral(at, at + length);
    assert.equal(got === -1 ? -1 : got - at, expected, `literal ${round}`);
    const byte = 97 + random(alphabet);
    const position = simd.findByte(at, at + length, byte);
    assert.equal(position === -1 ? -1 : position - at, text.indexOf(byte), `byte ${round}`);
  }
  assert.ok(found > 1000 && found < 3500, `${found} of 4000 held the literal`);
  // A literal too long to keep is refused, for the caller to search another way.
  assert.equal(simd.setLiteral(byteLiteral(new Uint8Array(70 * 1024).fill(97))), false);
});

/** A matcher that counts the lines it tests. */
function countingMatcher(pattern: string): { matcher: LineMatcher; tested: () => number } {
  const inner = compileMatcher(pattern);
  let tested = 0;
  const matcher: LineMatcher = {
    ...inner,
    matchesLine: (line) => {
      tested++;
      return inner.matchesLine(line);
    },
  };
  return { matcher, tested: () => tested };
}

/** 40,000 lines, each holding the pattern `need+le` matches (about 720 KB). */
const MANY_LINES = new TextEncoder().encode("a needle in a line\n".repeat(40_000));

test("grep: a larger file's scan in place stops once its search stops, not at the file's end", async () => {
  // 760,000 bytes: many chunks, every line holding the literal and matching.
  const dir = await tempDir();
  const path = `${dir.path}/many.txt`;
  writeFileSync(path, MANY_LINES);
  const route = underDeno ? defaultDescriptorLink()! : "/proc/self/fd";
  const directories = new VerifiedDirectories(new Routes([route]));
  try {
    for (const mode of ["count", "files_with_matches"] as const) {
      const { matcher, tested } = countingMatcher("need+le");
      const request = {
        pattern: "need+le",
        caseInsensitive: false,
        mode,
        context: 0,
        maxBytes: 1 << 30,
      };
      // Stops after a hundred lines were matched.
      const stopped = () => tested() >= 100;
      if (mode === "count") {
        assert.throws(() => scanOne(directories, path, matcher, request, stopped), ScanStopped);
        assert.ok(tested() < 40_000 / 2, `${tested()} lines matched`);
      } else {
        // The first line decides.
        assert.equal(scanOne(directories, path, matcher, request, stopped).matches, 1);
      }
    }
  } finally {
    directories.release();
    await dir.cleanup();
  }
});

test("grep: a file's scan stops between its steps when its search stops, not at the file's end", () => {
  for (const mode of ["content", "count"] as const) {
    // With and without a literal every match holds: scanned line by line, or a step at once.
    for (const pattern of ["need+le", "e+dle in"]) {
      const { matcher, tested } = countingMatcher(pattern);
      const request = { pattern, caseInsensitive: false, mode, context: 0, maxBytes: 1 << 30 };
      let asked = 0;
      assert.throws(
        () =>
          scanBytes(MANY_LINES, matcher, request, () => {
            asked++;
            return true;
          }),
        ScanStopped,
      );
      assert.equal(asked, 1);
      // The first step is SCAN_STEP of text: its lines were tested, and no more.
      assert.ok(tested() > 0 && tested() <= SCAN_STEP / 10, `${pattern} ${mode}: ${tested()}`);
      // Not stopped, it finds every line.
      const whole = scanBytes(MANY_LINES, compileMatcher(pattern), request);
      assert.equal(whole.matches, 40_000);
    }
  }
});

test("grep: a file scanned on the host's thread lets the event loop turn between steps, and a cancel there ends it", async () => {
  const { matcher, tested } = countingMatcher("need+le");
  const request = {
    pattern: "need+le",
    caseInsensitive: false,
    mode: "content" as const,
    context: 0,
    maxBytes: 1 << 30,
  };
  const turn = new AbortController();
  // Due at the event loop's next turn: the scan reaches it only by letting the loop turn.
  setImmediate(() => turn.abort());
  await assert.rejects(
    scanBytesPausing(MANY_LINES, matcher, request, turn.signal),
    (error: Error) => error.name === "AbortError",
  );
  assert.ok(tested() > 0 && tested() <= SCAN_STEP / 10, `${tested()} lines tested`);

  // Through the tool, on the in-memory backend (whose reads never leave the microtask queue):
  // the cancel that comes while the file is scanned ends the call.
  const memory = createMemoryFileSystem();
  memory.mkdirp("/repo");
  memory.writeFile("/repo/big.txt", MANY_LINES);
  const call = new AbortController();
  const readFile = memory.readFile.bind(memory);
  memory.readFile = (path, options) => {
    if (path.display === "big.txt") setImmediate(() => call.abort());
    return readFile(path, options);
  };
  const session = await createSession({ workingDirectory: "/repo", filesystem: memory });
  const result = await finalizeToolset({ session }).call({
    name: "grep",
    input: { pattern: "need+le", mode: "content", max_results: 2000 },
    callId: "big",
    signal: call.signal,
  });
  assert.equal(result.error?.code, "cancelled", result.output.slice(0, 200));
});

test("glob: a path without the ending every match of the pattern has is turned down, as picomatch turns it down", () => {
  const ending = (pattern: string, options: { dot: true; basename?: boolean }) =>
    requiredEnding(parseRegex(picomatch.makeRe(pattern, options).source));
  // The literal a match ends with, where the expression tells it (after picomatch's optional `/`).
  assert.equal(ending("**/*.c", { dot: true }), ".c");
  assert.equal(ending("*.md", { dot: true }), ".md");
  assert.equal(ending("**/Kconfig", { dot: true }), "Kconfig");
  assert.equal(ending("{a,b}.c", { dot: true }), ".c");
  assert.equal(ending("?(a).js", { dot: true }), ".js");
  assert.equal(ending("*/", { dot: true }), "/");
  assert.equal(ending("src/**", { dot: true }), "");
  assert.equal(ending("**/*.{ts,tsx}", { dot: true }), "");
  assert.equal(ending("*.[ch]", { dot: true }), "");
  // An expression whose end is not anchored requires no ending.
  assert.equal(requiredEnding(parseRegex("a\\.c")), "");
  assert.equal(requiredEnding(parseRegex("^a\\.c$")), "a.c");
  const patterns = [
    "**/*.c",
    "*.md",
    "**/Kconfig",
    "{a,b}.c",
    "?(a).js",
    "*/",
    "**/",
    "foo/",
    "a/b",
    "src/**",
    "**/*.{ts,tsx}",
    "*.[ch]",
    "!(*.d).ts",
    "+(a|b).ts",
    "**/.*",
    "*.😀",
    "\\*.md",
    "a\\47*",
  ];
  const paths = [
    "a.c",
    "x/a.c",
    "x/a.c/",
    ".c",
    "a.h",
    "x/a.cc",
    "a.md",
    "a.md/",
    "README.md",
    "Kconfig",
    "arch/Kconfig",
    "arch/Kconfig.debug",
    "b.c",
    "c.c",
    "a.js",
    ".js",
    "x.js",
    "dir/",
    "dir",
    "foo/",
    "foo",
    "a/b",
    "a/b/",
    "src/x",
    "src",
    "x.ts",
    "x.tsx",
    "x.d.ts",
    "a.ts",
    "ab.ts",
    "x/.hidden",
    "a.😀",
    "*.md",
    "a'x",
    "",
  ];
  for (const pattern of patterns) {
    for (const options of [{ dot: true as const }, { dot: true as const, basename: true }]) {
      const regex = picomatch.makeRe(pattern, options);
      const required = requiredEnding(parseRegex(regex.source));
      for (const path of paths) {
        if (regex.test(path) && !path.endsWith("/")) {
          assert.ok(path.endsWith(required), `${pattern} matches ${JSON.stringify(path)}`);
        }
      }
    }
    // The tools' matchers, which test the ending first, answer as picomatch does.
    const reference = picomatch(pattern, { dot: true, strictBrackets: true });
    const matcher = globMatcher(pattern);
    // grep's glob: ripgrep's `-g` convention, a leading `!` excluding.
    const negated = pattern.startsWith("!");
    const kept = negated ? pattern.slice(1) : pattern;
    const included = picomatch(kept, { dot: true, basename: !kept.includes("/") });
    const filter = globFilter(pattern);
    for (const path of paths) {
      assert.equal(matcher(path), reference(path), `glob ${pattern} on ${JSON.stringify(path)}`);
      const expected = (path !== "" && included(path)) !== negated;
      assert.equal(filter(path), expected, `grep's glob ${pattern} on ${JSON.stringify(path)}`);
    }
  }
});
