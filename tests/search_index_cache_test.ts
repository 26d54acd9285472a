/**
 * The search index's cache file under attack, and its options: a cache that
 * is cut short, has a byte changed, is of another format version, is a
 * link, is writable by others, belongs to another user, or (checksum
 * recomputed) names paths outside the tree, never yields a wrong answer and
 * never makes the index read outside the working directory; it is refused
 * (or, where only the paths are wrong, proved away) and the index built and
 * written again. `cacheDirectory: null` writes nothing to disk.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { createSession, finalizeToolset } from "../mod.ts";
import type { AsyncFileSystem, SearchIndexOptions } from "../mod.ts";
import type { IndexWorkers } from "../src/backends/filesystem.ts";
import { privacyProblem, readCacheFile } from "../src/index/cache_directory.ts";
import { cacheFileName } from "../src/search/index/cache_location.ts";
import { CACHE_FORMAT_VERSION, decodeCache, encodeCache } from "../src/index/cache_format.ts";
import type { CachedIndex } from "../src/index/cache_format.ts";
import { SegmentBuilder } from "../src/search/index/segment.ts";
import { STAMP_FIELDS } from "../src/search/index/stamps.ts";
import { walkOrder } from "../src/search/walk.ts";
import { packPaths, unpackPaths } from "../src/search/index/packed_paths.ts";
import { sh, tempDir } from "./helpers.ts";
import {
  assertSameAnswer,
  type IndexBackend,
  linkedIndexBackends,
  put,
  runningAsRoot,
} from "./search_index_tree.ts";

const backends: IndexBackend[] = await linkedIndexBackends();

/** Why a sandboxed session cannot be made here (no bwrap, or namespaces blocked), or `false`. */
async function sandboxUnavailable(): Promise<string | false> {
  if (process.platform !== "linux") return "the sandbox is Linux-only";
  const dir = await tempDir();
  try {
    await createSession({ workingDirectory: dir.path, sandbox: true });
    return false;
  } catch (error) {
    return `no sandbox here: ${(error as Error).message}`;
  } finally {
    await dir.cleanup();
  }
}

const noSandbox = await sandboxUnavailable();

const OUTSIDE_TEXT = "alpha outsider_marker secret\n";

/** A filesystem whose index workers note every file they are asked to read or stat, and every tree to list. */
function recording(filesystem: AsyncFileSystem, files: string[]): AsyncFileSystem {
  const workers = filesystem.indexWorkers!;
  const noted: IndexWorkers = {
    buildSegment: (job) => (files.push(...job.files), workers.buildSegment(job)),
    scanFiles: (job) => (files.push(...job.files), workers.scanFiles(job)),
    ...(workers.stampFiles === undefined ? {} : {
      stampFiles: (job) => (files.push(...job.files), workers.stampFiles!(job)),
    }),
    ...(workers.listTree === undefined ? {} : {
      // A listing reads the ignore files it meets.
      listTree: async (job) => {
        const answer = await workers.listTree!(job);
        files.push(...answer.ignoreFiles.map((display) => `${job.real}/${display}`));
        return answer;
      },
    }),
  };
  return { ...filesystem, indexWorkers: noted };
}

/** A tree with a link to a directory outside it, a cache directory, and sessions on them. */
async function fixture(backend: IndexBackend) {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  const outside = join(dir.path, "outside");
  const cacheDirectory = join(dir.path, "cache");
  await put(join(root, "src/a.ts"), "alpha one\nconst bravo = 1;\n");
  await put(join(root, "src/b.ts"), "bravo two\n");
  await put(join(root, "docs/c.md"), "# alpha charlie\n");
  await put(join(root, ".gitignore"), "*.log\n");
  await put(join(root, "noise.log"), "alpha ignored\n");
  await put(join(outside, "secret.txt"), OUTSIDE_TEXT);
  await sh('ln -s "$1" "$2"', outside, join(root, "link"));
  const plain = finalizeToolset({
    session: await createSession({
      workingDirectory: root,
      filesystem: backend.create(),
      skillRoot: null,
    }),
  });
  const file = join(cacheDirectory, cacheFileName(root));
  /** Every file the index workers were asked about, over every session. */
  const touched: string[] = [];
  /**
   * A session with the index on this cache directory, ready; its answers
   * are checked against the walk's, and nothing it read may be outside.
   */
  const session = async (options: SearchIndexOptions = { cacheDirectory }) => {
    const made = await createSession({
      workingDirectory: root,
      filesystem: recording(backend.create(), touched),
      skillRoot: null,
      searchIndex: options,
    });
    const index = made.searchIndex!;
    await index.ready;
    const indexed = finalizeToolset({ session: made });
    const context = () => JSON.stringify(index.stats());
    const check = async () => {
      for (const pattern of ["alpha", "bravo", "outsider_marker", "secret"]) {
        for (const mode of ["files_with_matches", "content"]) {
          await assertSameAnswer(indexed, plain, "grep", { pattern, mode }, context);
        }
      }
      await assertSameAnswer(indexed, plain, "glob", { pattern: "**" }, context);
      assert.ok(index.stats().searches.indexed > 0, "the index answered");
      // The working directory itself is stamped as the listing's first directory.
      const outsideRead = touched.filter((path) => path !== root && !path.startsWith(`${root}/`));
      assert.deepEqual(outsideRead, [], "the index read nothing outside the tree");
    };
    return { index, check };
  };
  /** Builds and closes a session, so that the cache file holds the tree. */
  const written = async () => {
    const { index } = await session();
    await index.close();
    assert.equal(index.stats().cache.writes, 1, index.stats().cache.note ?? "");
    return await fs.readFile(file);
  };
  return {
    root,
    outside,
    cacheDirectory,
    file,
    plain,
    session,
    written,
    cleanup: () => dir.cleanup(),
  };
}

/**
 * After the cache file was spoilt by `spoil`: the next session refuses it
 * (its note matching `note`), builds from the tree, answers as the walk,
 * reads nothing outside, and writes a cache the session after loads.
 */
async function refusedAndRebuilt(
  backend: IndexBackend,
  spoil: (
    file: string,
    bytes: Uint8Array,
    made: Awaited<ReturnType<typeof fixture>>,
  ) => Promise<void>,
  note: RegExp,
) {
  const made = await fixture(backend);
  try {
    const bytes = await made.written();
    await spoil(made.file, bytes, made);
    const second = await made.session();
    const stats = second.index.stats();
    assert.equal(stats.cache.loads, 0, "the spoilt cache was not loaded");
    assert.match(stats.cache.note ?? "", note);
    assert.equal(stats.builds, 1);
    await second.check();
    await second.index.close();
    const again = second.index.stats();
    assert.equal(again.cache.writes, 1, `the cache was written again: ${JSON.stringify(again)}`);
    const third = await made.session();
    assert.equal(third.index.stats().cache.loads, 1, third.index.stats().cache.note ?? "");
    await third.check();
    await third.index.close();
  } finally {
    await made.cleanup();
  }
}

/**
 * The cached index with more entries: directories, and files whose content
 * is indexed in a segment of their own with the stamps given.
 */
function withEntries(
  cached: CachedIndex,
  directories: readonly string[],
  files: readonly { display: string; text: string; stamp: Float64Array }[],
): CachedIndex {
  const added = new Map<string, number>();
  for (const directory of directories) added.set(directory, -1);
  files.forEach((file, i) => added.set(file.display, i));
  const cachedEntries = unpackPaths(cached.entries);
  const entries = [...cachedEntries, ...added.keys()].sort(walkOrder);
  const kinds = new Uint8Array(entries.length);
  const oldNumber = new Map<string, number>();
  cachedEntries.forEach((display, i) => {
    if (cached.kinds[i] === 1) oldNumber.set(display, oldNumber.size);
  });
  const count = oldNumber.size + files.length;
  const fileSegments = new Int32Array(count);
  const fileLocals = new Int32Array(count);
  const fileBytes = new Int32Array(count);
  const stamps = new Float64Array(count * STAMP_FIELDS);
  const renumber = new Int32Array(oldNumber.size);
  const builder = new SegmentBuilder();
  const newIds: number[] = [];
  let number = 0;
  entries.forEach((display, i) => {
    const old = oldNumber.get(display);
    const extra = added.get(display);
    if (old === undefined && (extra === undefined || extra < 0)) return;
    kinds[i] = 1;
    if (old !== undefined) {
      renumber[old] = number;
      fileSegments[number] = cached.fileSegments[old];
      fileLocals[number] = cached.fileLocals[old];
      fileBytes[number] = cached.fileBytes[old];
      stamps.set(
        cached.stamps.subarray(old * STAMP_FIELDS, (old + 1) * STAMP_FIELDS),
        number * STAMP_FIELDS,
      );
    } else {
      const file = files[extra!];
      const bytes = new TextEncoder().encode(file.text);
      fileSegments[number] = cached.segments.length;
      fileLocals[number] = builder.add(bytes);
      fileBytes[number] = bytes.length;
      stamps.set(file.stamp, number * STAMP_FIELDS);
      newIds.push(number);
    }
    number++;
  });
  const segments = cached.segments.map(({ segment, ids }) => ({
    segment,
    ids: ids.map((id) => id < 0 ? -1 : renumber[id]),
  }));
  segments.push({ segment: builder.finish(), ids: Int32Array.from(newIds) });
  return {
    ...cached,
    entries: packPaths(entries),
    kinds,
    fileSegments,
    fileLocals,
    fileBytes,
    stamps,
    segments,
  };
}

/** A file's stamp now, as the index takes it. */
async function stampOf(path: string): Promise<Float64Array> {
  const stats = await fs.lstat(path);
  const seconds = (ms: number) => Math.floor(ms / 1000);
  return Float64Array.of(
    stats.dev,
    stats.ino,
    stats.size,
    seconds(stats.mtimeMs),
    seconds(stats.ctimeMs),
  );
}

/** Writes a cache file with a checksum made afresh, as anyone who can write it can. */
async function rewrite(file: string, cached: CachedIndex): Promise<void> {
  const chunks = await encodeCache(cached);
  const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  chunks.reduce((at, chunk) => (bytes.set(chunk, at), at + chunk.length), 0);
  await fs.writeFile(file, bytes);
}

for (const backend of backends) {
  const name = (what: string) => `search index cache: ${what} (${backend.name})`;

  test(name("a session loads the cache the last one wrote, and it is private"), async () => {
    const made = await fixture(backend);
    try {
      await made.written();
      const mode = (await fs.stat(made.file)).mode & 0o777;
      assert.equal(mode, 0o600);
      assert.equal((await fs.stat(made.cacheDirectory)).mode & 0o777, 0o700);
      const next = await made.session();
      assert.equal(next.index.stats().cache.loads, 1, next.index.stats().cache.note ?? "");
      assert.equal(next.index.stats().cache.file, made.file);
      await next.check();
      await next.index.close();
    } finally {
      await made.cleanup();
    }
  });

  test(name("a cache file cut short is refused and built again"), async () => {
    await refusedAndRebuilt(
      backend,
      (file, bytes) => fs.writeFile(file, bytes.subarray(0, bytes.length >> 1)),
      /cut short|checksum|do not fill/,
    );
  });

  test(name("a cache file with a byte changed is refused and built again"), async () => {
    await refusedAndRebuilt(backend, async (file, bytes) => {
      const flipped = new Uint8Array(bytes);
      flipped[flipped.length >> 1] ^= 0x20;
      await fs.writeFile(file, flipped);
    }, /checksum/);
  });

  test(name("a cache file of an older format version is refused and built again"), async () => {
    await refusedAndRebuilt(backend, async (file, bytes) => {
      const older = new Uint8Array(bytes);
      new DataView(older.buffer).setUint32(8, CACHE_FORMAT_VERSION - 1, true);
      await fs.writeFile(file, older);
    }, new RegExp(`format version ${CACHE_FORMAT_VERSION - 1}`));
  });

  test(name("a cache file that is a symbolic link is refused and built again"), async () => {
    await refusedAndRebuilt(backend, async (file) => {
      await fs.rename(file, `${file}.elsewhere`);
      await sh('ln -s "$1" "$2"', `${file}.elsewhere`, file);
    }, /symbolic link/);
  });

  test(name("a cache file others may write is refused and built again"), async () => {
    await refusedAndRebuilt(backend, (file) => fs.chmod(file, 0o666), /others may read or write/);
  });

  test(name("a cache file of another user is refused and built again"), async () => {
    if (runningAsRoot) {
      await refusedAndRebuilt(
        backend,
        (file) => fs.chown(file, 4242, 4242),
        /belongs to user 4242/,
      );
      return;
    }
    // Without the right to give a file away, the same check, through its seam: this user is
    // taken for another.
    const made = await fixture(backend);
    try {
      await made.written();
      const uid = process.getuid!();
      const refused = await readCacheFile(made.cacheDirectory, cacheFileName(made.root), uid + 1);
      assert.equal(typeof refused, "string");
      assert.match(refused as string, new RegExp(`belongs to user ${uid}, not ${uid + 1}`));
    } finally {
      await made.cleanup();
    }
  });

  test(
    name("a cache directory others may enter is refused: the index keeps to memory"),
    async () => {
      const made = await fixture(backend);
      try {
        await fs.mkdir(made.cacheDirectory, { mode: 0o755 });
        await fs.chmod(made.cacheDirectory, 0o755);
        const { index, check } = await made.session();
        assert.equal(index.stats().cache.file, null);
        assert.match(index.stats().cache.note ?? "", /not private: others may read or write/);
        await check();
        await index.close();
        assert.deepEqual(await fs.readdir(made.cacheDirectory), []);
      } finally {
        await made.cleanup();
      }
    },
  );

  test(
    name("a cache naming a path out of the tree, checksum made afresh, is refused"),
    async () => {
      await refusedAndRebuilt(backend, async (file, bytes, made) => {
        const cached = await decodeCache(new Uint8Array(bytes), made.root);
        assert.notEqual(typeof cached, "string");
        const stamp = await stampOf(join(made.outside, "secret.txt"));
        await rewrite(
          file,
          withEntries(cached as CachedIndex, [], [
            { display: "../outside/secret.txt", text: OUTSIDE_TEXT, stamp },
          ]),
        );
      }, /not plain names/);
    },
  );

  test(
    name(
      "a cache naming a file through a link to outside, checksum made afresh, reads nothing there",
    ),
    async () => {
      const made = await fixture(backend);
      try {
        const bytes = await made.written();
        const cached = await decodeCache(new Uint8Array(bytes), made.root);
        assert.notEqual(typeof cached, "string");
        // The link taken for a directory, and the file outside given its real stamp: only the
        // walk, which does not follow the link, can drop it.
        const stamp = await stampOf(join(made.outside, "secret.txt"));
        await rewrite(
          made.file,
          withEntries(cached as CachedIndex, ["link"], [
            { display: "link/secret.txt", text: OUTSIDE_TEXT, stamp },
          ]),
        );
        const next = await made.session();
        assert.equal(next.index.stats().cache.loads, 1, next.index.stats().cache.note ?? "");
        await next.check();
        await next.index.close();
      } finally {
        await made.cleanup();
      }
    },
  );

  test(
    name("a cache directory inside the working directory is refused, and not made"),
    async () => {
      const made = await fixture(backend);
      try {
        const inside = join(made.root, "src", "cache");
        const { index, check } = await made.session({ cacheDirectory: inside });
        assert.equal(index.stats().cache.file, null);
        assert.match(index.stats().cache.note ?? "", /inside the working directory/);
        await check();
        await index.close();
        assert.equal(await fs.lstat(inside).then(() => true, () => false), false);
      } finally {
        await made.cleanup();
      }
    },
  );

  test(
    name(
      "a cache directory reached through a link into the working directory is refused, and not made",
    ),
    async () => {
      const made = await fixture(backend);
      try {
        const link = join(made.cacheDirectory, "..", "into-tree");
        await sh('ln -s "$1" "$2"', join(made.root, "docs"), link);
        const { index, check } = await made.session({ cacheDirectory: join(link, "cache") });
        assert.equal(index.stats().cache.file, null);
        assert.match(index.stats().cache.note ?? "", /inside the working directory/);
        await check();
        await index.close();
        assert.equal(await fs.lstat(join(made.root, "docs", "cache")).then(() => 1, () => 0), 0);
      } finally {
        await made.cleanup();
      }
    },
  );

  test(
    name(
      "a cache directory below a directory others may write in is refused, and nothing is made in it",
    ),
    async () => {
      const made = await fixture(backend);
      try {
        const shared = join(made.cacheDirectory, "..", "shared");
        await fs.mkdir(shared);
        await fs.chmod(shared, 0o777);
        const { index, check } = await made.session({
          cacheDirectory: join(shared, "cache", "index"),
        });
        assert.equal(index.stats().cache.file, null);
        assert.match(index.stats().cache.note ?? "", /others may write in .*shared, above it/);
        await check();
        await index.close();
        assert.deepEqual(await fs.readdir(shared), []);
      } finally {
        await made.cleanup();
      }
    },
  );

  test(
    name(
      "a cache directory inside a directory the sandbox lets commands write is refused, as given or through a link, and not made",
    ),
    { skip: noSandbox },
    async () => {
      const made = await fixture(backend);
      try {
        // Where a host lets sandboxed builds keep their caches: a command could rewrite the index's.
        const writable = join(made.cacheDirectory, "..", "build-cache");
        const link = join(made.cacheDirectory, "..", "to-build-cache");
        await fs.mkdir(writable, { mode: 0o700 });
        await sh('ln -s "$1" "$2"', writable, link);
        for (const cacheDirectory of [join(writable, "index"), join(link, "index")]) {
          const session = await createSession({
            workingDirectory: made.root,
            filesystem: backend.create(),
            skillRoot: null,
            sandbox: { writable: [writable] },
            searchIndex: { cacheDirectory },
          });
          const index = session.searchIndex!;
          await index.ready;
          await index.close();
          assert.equal(index.stats().cache.file, null, cacheDirectory);
          assert.match(index.stats().cache.note ?? "", /which the sandbox lets commands write/);
          assert.equal(index.stats().cache.writes, 0);
          await session.processes.shutdown();
        }
        assert.deepEqual(await fs.readdir(writable), []);
      } finally {
        await made.cleanup();
      }
    },
  );

  test(
    name("a cache file larger than the index's memory limit is refused unread, and built again"),
    async () => {
      const made = await fixture(backend);
      try {
        await made.written();
        // Sparse: no disk taken, but a read of it would take 64 MiB.
        await sh('truncate -s 64M "$1"', made.file);
        const { index, check } = await made.session({
          cacheDirectory: made.cacheDirectory,
          memoryLimit: 32 * 1024 * 1024,
        });
        assert.equal(index.stats().cache.loads, 0);
        assert.match(index.stats().cache.note ?? "", /more than the index's memory limit/);
        await check();
        await index.close();
      } finally {
        await made.cleanup();
      }
    },
  );

  test(
    name("a cache whose files' stamps cannot be taken is not trusted: every file is read"),
    async () => {
      const made = await fixture(backend);
      try {
        await made.written();
        // The content cached for src/a.ts no longer holds: only a read shows it.
        await fs.writeFile(join(made.root, "src/a.ts"), "zulu changed\n");
        const filesystem = backend.create();
        const workers = filesystem.indexWorkers!;
        const session = await createSession({
          workingDirectory: made.root,
          filesystem: {
            ...filesystem,
            indexWorkers: {
              ...workers,
              stampFiles: () =>
                Promise.resolve({ id: 0, stamps: new Float64Array(0), error: "no" }),
            },
          },
          skillRoot: null,
          searchIndex: { cacheDirectory: made.cacheDirectory },
        });
        const index = session.searchIndex!;
        await index.ready;
        assert.equal(index.stats().state, "ready");
        assert.equal(index.stats().cache.loads, 1);
        const toolset = finalizeToolset({ session });
        const result = await toolset.call({
          name: "grep",
          input: { pattern: "zulu", mode: "files_with_matches" },
          callId: "grep-zulu",
          approve: () => Promise.resolve(true),
        });
        assert.deepEqual((result.data as { readonly files: readonly string[] }).files, [
          "src/a.ts",
        ]);
        assert.equal(index.stats().searches.indexed, 1);
        await index.close();
      } finally {
        await made.cleanup();
      }
    },
  );

  for (
    const [what, script] of [
      [
        "two files",
        `for n in $'a\\xffb.txt' $'a\\xfeb.txt'; do printf 'alpha %s\\n' "$n" > "$n"; done`,
      ],
      [
        "a directory and a file",
        `mkdir $'a\\xffb.txt' && printf 'alpha\\n' > $'a\\xffb.txt/in.txt' && printf 'alpha\\n' > $'a\\xfeb.txt'`,
      ],
    ]
  ) {
    test(
      name(
        `${what} whose names show alike (bytes that are not UTF-8) turn the index off: searches walk, no cache is written`,
      ),
      async () => {
        const made = await fixture(backend);
        try {
          // Linux names may hold any bytes; each of these shows as "a\uFFFDb.txt".
          await sh(`cd "$1" && ${script}`, made.root);
          const session = await createSession({
            workingDirectory: made.root,
            filesystem: backend.create(),
            skillRoot: null,
            searchIndex: { cacheDirectory: made.cacheDirectory },
          });
          const index = session.searchIndex!;
          await assert.rejects(index.ready, /two entries are shown as "a\uFFFDb\.txt"/);
          const indexed = finalizeToolset({ session });
          for (const mode of ["files_with_matches", "content", "count"]) {
            await assertSameAnswer(
              indexed,
              made.plain,
              "grep",
              { pattern: "alpha", mode },
              () => mode,
            );
          }
          await assertSameAnswer(indexed, made.plain, "glob", { pattern: "**" }, () => "glob");
          assert.equal(index.stats().searches.indexed, 0);
          await index.close();
          assert.equal(index.stats().cache.writes, 0);
          await assert.rejects(fs.stat(made.file), { code: "ENOENT" });
        } finally {
          await made.cleanup();
        }
      },
    );
  }

  test(name("cacheDirectory: null writes nothing to disk"), async () => {
    const made = await fixture(backend);
    const home = await tempDir();
    try {
      const environment = { HOME: home.path, PATH: process.env.PATH ?? "/usr/bin:/bin" };
      const memory = await createSession({
        workingDirectory: made.root,
        filesystem: backend.create(),
        skillRoot: null,
        environment,
        searchIndex: { cacheDirectory: null },
      });
      await memory.searchIndex!.ready;
      await memory.searchIndex!.close();
      const stats = memory.searchIndex!.stats().cache;
      assert.deepEqual(stats, { file: null, loads: 0, reused: 0, writes: 0, note: null });
      assert.deepEqual(await fs.readdir(home.path), []);
      // The default, for the same environment: the cache under HOME.
      const cached = await createSession({
        workingDirectory: made.root,
        filesystem: backend.create(),
        skillRoot: null,
        environment,
        searchIndex: true,
      });
      await cached.searchIndex!.ready;
      await cached.searchIndex!.close();
      const file = join(home.path, ".cache/openwork-tools/search-index", cacheFileName(made.root));
      assert.equal(cached.searchIndex!.stats().cache.file, file);
      assert.equal((await fs.stat(file)).mode & 0o777, 0o600);
    } finally {
      await home.cleanup();
      await made.cleanup();
    }
  });
}

test("search index cache: createSession refuses a cacheDirectory that is not an absolute path or null", async () => {
  const dir = await tempDir();
  try {
    for (const cacheDirectory of [5, "relative/cache", ""]) {
      await assert.rejects(
        createSession({
          workingDirectory: dir.path,
          skillRoot: null,
          searchIndex: { cacheDirectory } as unknown as SearchIndexOptions,
        }),
        (error: Error) =>
          error instanceof TypeError && /searchIndex\.cacheDirectory must be/.test(error.message),
      );
    }
  } finally {
    await dir.cleanup();
  }
});

test("search index cache: a directory or file is private only as a non-link of this user that no one else may use", () => {
  const stats = (kind: "directory" | "file" | "link", uid: number, mode: number) => ({
    isDirectory: () => kind === "directory",
    isFile: () => kind === "file",
    isSymbolicLink: () => kind === "link",
    uid,
    mode,
  });
  assert.equal(privacyProblem(stats("directory", 7, 0o40700), "directory", 7), null);
  assert.equal(privacyProblem(stats("file", 7, 0o100600), "file", 7), null);
  assert.match(privacyProblem(stats("link", 7, 0o777), "file", 7)!, /symbolic link/);
  assert.match(privacyProblem(stats("file", 7, 0o100600), "directory", 7)!, /not a directory/);
  assert.match(privacyProblem(stats("file", 8, 0o100600), "file", 7)!, /belongs to user 8/);
  assert.match(privacyProblem(stats("file", 7, 0o100640), "file", 7)!, /others may read/);
  assert.match(privacyProblem(stats("directory", 7, 0o40701), "directory", 7)!, /others may/);
});
