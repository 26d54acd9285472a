/**
 * The search index across restarts: a session builds the index and writes
 * its cache, closes; while no session runs, the tree changes (edits that
 * keep a file's size and modification time, deletions, new files and
 * directories, renames, `.gitignore` and `.git/info/exclude` edits); a new
 * session loads the cache, proves it fresh, and every grep and glob it
 * answers equals a fresh walk's, text and data. Between a change and the
 * next load the test waits past the stamps' racy window, so that every
 * changed file has a known stamp and only the stamp's comparison (not its
 * being unknown) can tell the change.
 *
 * `INDEX_MODEL_SEED` picks another sequence; a failure prints the seed and
 * every change so far.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs/promises";
import { dirname, join } from "node:path";
import process from "node:process";
import { createSession, finalizeToolset } from "../mod.ts";
import { sh, tempDir } from "./helpers.ts";
import {
  addDirsOf,
  assertSameAnswer,
  EXTENSIONS,
  fileName,
  layOutTree,
  linkedIndexBackends,
  moveInModel,
  pastRacyWindow,
  put,
  Random,
  RARE,
  textContent,
  type TreeModel,
  WORDS,
} from "./search_index_tree.ts";

const backends = await linkedIndexBackends();

const SEED = process.env.INDEX_MODEL_SEED === undefined
  ? 2024
  : Number(process.env.INDEX_MODEL_SEED);
/** Text files in the tree at the start. */
const FILES = 600;
/** Sessions after the first, each loading the cache the one before wrote. */
const RESTARTS = 3;
/** Changes made while no session runs, between two sessions. */
const CHANGES = 24;

/** The state the offline changes work on. */
interface World {
  readonly root: string;
  readonly random: Random;
  readonly model: TreeModel;
  /** Words only the changes so far wrote, each findable by a grep. */
  readonly markers: string[];
  step: number;
}

function pickFile(world: World): string | null {
  const files = [...world.model.files].sort();
  return files.length === 0 ? null : world.random.pick(files);
}

function pickDir(world: World): string {
  const dirs = [...world.model.dirs].sort();
  return dirs.length === 0 || world.random.chance(0.15) ? "" : world.random.pick(dirs);
}

function within(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

function marker(world: World): string {
  const made = `offline${world.step}q${world.markers.length}`;
  world.markers.push(made);
  return made;
}

type Change = (world: World) => Promise<string | null>;

/** Rewrites a file with other bytes of the same size, then sets its times back exactly. */
const sameSizeSameTime: Change = async (world) => {
  const path = pickFile(world);
  if (path === null) return null;
  const full = join(world.root, path);
  const old = await fs.readFile(full);
  const word = marker(world);
  if (old.length < word.length + 1) return null;
  const text = new TextEncoder().encode(`${word} `);
  const next = new Uint8Array(old);
  next.set(text);
  // The binary check of the first bytes must not change what the file is.
  if (next.subarray(0, 8192).includes(0)) return null;
  // `touch -r` copies the times to the nanosecond: only the change time tells the write.
  await sh(
    'touch -r "$1" "$1.times" && cat "$2" > "$1" && touch -r "$1.times" "$1" && rm "$1.times"',
    full,
    await scratchFile(world, next),
  );
  return `same size and times ${path}`;
};

/** A file holding `data` outside the tree, for a shell to copy from. */
async function scratchFile(world: World, data: Uint8Array): Promise<string> {
  const path = join(dirname(world.root), `scratch_${world.step}`);
  await fs.writeFile(path, data);
  return path;
}

const overwrite: Change = async (world) => {
  const path = pickFile(world);
  if (path === null) return null;
  await fs.writeFile(join(world.root, path), `${textContent(world.random)}${marker(world)}\n`);
  return `overwrite ${path}`;
};

const deleteFile: Change = async (world) => {
  const path = pickFile(world);
  if (path === null) return null;
  await fs.rm(join(world.root, path));
  world.model.files.delete(path);
  return `delete ${path}`;
};

const newFile: Change = async (world) => {
  const path = within(pickDir(world), fileName(world.random));
  if (world.model.files.has(path)) return null;
  await put(join(world.root, path), `${marker(world)} ${textContent(world.random)}`);
  world.model.files.add(path);
  addDirsOf(world.model, path);
  return `new file ${path}`;
};

const renameFile: Change = async (world) => {
  const from = pickFile(world);
  if (from === null) return null;
  const to = world.random.chance(0.5)
    ? from.replace(/\.[a-z]+$/, `.${world.random.pick(EXTENSIONS)}`)
    : within(pickDir(world), fileName(world.random));
  if (to === from || world.model.files.has(to)) return null;
  if (await fs.lstat(join(world.root, to)).then(() => true, () => false)) return null;
  await fs.mkdir(dirname(join(world.root, to)), { recursive: true });
  await fs.rename(join(world.root, from), join(world.root, to));
  moveInModel(world.model, from, to);
  addDirsOf(world.model, to);
  return `rename ${from} -> ${to}`;
};

const renameDir: Change = async (world) => {
  const from = pickDir(world);
  if (from === "") return null;
  const to = `${from}_moved${world.step}`;
  await fs.rename(join(world.root, from), join(world.root, to));
  moveInModel(world.model, from, to);
  return `rename directory ${from} -> ${to}`;
};

const newDirectory: Change = async (world) => {
  const dir = within(pickDir(world), `fresh${world.step}`);
  for (let i = 0; i < 3; i++) {
    const path = `${dir}/${fileName(world.random)}`;
    await put(join(world.root, path), `${marker(world)} ${textContent(world.random)}`);
    world.model.files.add(path);
  }
  addDirsOf(world.model, `${dir}/x`);
  return `new directory ${dir}`;
};

const RULES: readonly ((random: Random) => string)[] = [
  (random) => `*.${random.pick(EXTENSIONS)}`,
  (random) => `${random.pick(WORDS)}*`,
  (random) => `!*.${random.pick(EXTENSIONS)}`,
  (random) => `!${random.pick(WORDS)}*`,
];

/** Adds or removes a rule of a `.gitignore`, or of `.git/info/exclude`. */
const ruleEdit: Change = async (world) => {
  const path = world.random.chance(0.3)
    ? ".git/info/exclude"
    : within(world.random.chance(0.5) ? "" : pickDir(world), ".gitignore");
  const full = join(world.root, path);
  const lines = (await fs.readFile(full, "utf8").catch(() => "")).split("\n").filter(Boolean);
  let what: string;
  if (lines.length > 0 && world.random.chance(0.4)) {
    what = `remove ${JSON.stringify(lines.splice(world.random.int(lines.length), 1)[0])}`;
  } else {
    const rule = world.random.pick(RULES)(world.random);
    lines.push(rule);
    what = `add ${JSON.stringify(rule)}`;
  }
  await put(full, lines.map((line) => `${line}\n`).join(""));
  return `${path}: ${what}`;
};

const CHANGE_KINDS: readonly Change[] = [
  sameSizeSameTime,
  sameSizeSameTime,
  sameSizeSameTime,
  overwrite,
  deleteFile,
  newFile,
  newFile,
  renameFile,
  renameDir,
  newDirectory,
  ruleEdit,
  ruleEdit,
];

for (const backend of backends) {
  test(
    `search index: a session after a restart loads the cache, proves it fresh, and answers as a fresh walk after changes made while none ran (${backend.name})`,
    { timeout: 600_000 },
    async () => {
      const dir = await tempDir();
      const root = join(dir.path, "repo");
      const outside = join(dir.path, "outside");
      const cacheDirectory = join(dir.path, "cache");
      const random = new Random(SEED);
      const model = await layOutTree(root, outside, random, FILES);
      const world: World = { root, random, model, markers: [], step: 0 };
      const log: string[] = [];
      const context = () =>
        `seed ${SEED} (run again with INDEX_MODEL_SEED=${SEED}); backend ${backend.name}; ` +
        `changes so far:\n${log.map((line, i) => `  ${i + 1}. ${line}`).join("\n")}`;
      const plainSession = await createSession({
        workingDirectory: root,
        filesystem: backend.create(),
        skillRoot: null,
      });
      const plain = finalizeToolset({ session: plainSession });
      await pastRacyWindow();
      try {
        for (let round = 0; round <= RESTARTS; round++) {
          const session = await createSession({
            workingDirectory: root,
            filesystem: backend.create(),
            skillRoot: null,
            searchIndex: { cacheDirectory },
          });
          const index = session.searchIndex!;
          const indexed = finalizeToolset({ session });
          try {
            await index.ready;
            const stats = index.stats();
            assert.equal(stats.state, "ready");
            assert.equal(stats.builds, 1);
            assert.equal(
              stats.cache.loads,
              round === 0 ? 0 : 1,
              `round ${round}: ${stats.cache.note}\n${context()}`,
            );
            // The proof keeps what did not change: a good part of the tree comes from the cache.
            if (round > 0) {
              assert.ok(
                stats.cache.reused * 4 >= stats.files,
                `${stats.cache.reused} of ${stats.files} files taken from the cache`,
              );
            }
            const same = (name: string, input: Record<string, unknown>) =>
              assertSameAnswer(indexed, plain, name, input, context);
            const before = index.stats().searches.indexed;
            if (world.markers.length > 0) {
              const pattern = world.markers.map((word) => `${word}\\b`).join("|");
              for (const mode of ["files_with_matches", "count", "content"]) {
                await same("grep", { pattern, mode, max_results: 2000 });
              }
              for (const word of world.markers.slice(-CHANGES)) {
                await same("grep", { pattern: word, mode: "files_with_matches" });
              }
            }
            for (const pattern of ["alpha", "zanzibar", "outsider_marker", ...RARE.slice(0, 3)]) {
              await same("grep", { pattern, mode: "files_with_matches", max_results: 2000 });
            }
            for (const word of WORDS.slice(0, 6)) {
              await same("grep", { pattern: word, mode: "count", max_results: 2000 });
            }
            for (const pattern of ["**", "**/*.ts", "**/.gitignore", "*/*/*.c", "**/fresh*/**"]) {
              await same("glob", { pattern, max_results: 5000 });
            }
            assert.ok(index.stats().searches.indexed > before, "the index answered");
          } finally {
            await index.close();
          }
          const written = index.stats().cache;
          assert.ok(written.writes >= 1, `the cache was written: ${written.note}`);
          if (round === RESTARTS) break;
          for (let made = 0; made < CHANGES;) {
            world.step++;
            const change = random.pick(CHANGE_KINDS);
            const done = await change(world);
            if (done === null) continue;
            log.push(`(before restart ${round + 1}) ${done}`);
            made++;
          }
          await pastRacyWindow();
        }
      } finally {
        await dir.cleanup();
      }
    },
  );
}
