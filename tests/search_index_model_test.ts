/**
 * The randomized model test of the search index: on a tree of a few thousand
 * files, a seeded sequence of changes (tool writes and edits, writes by this
 * process and by a child process, renames, deletions, new directories,
 * `.gitignore` edits, a branch switch that rewrites hundreds of files at
 * once) interleaved with greps and globs in every mode, each answered by a
 * session with the index and by one without: the answers must be the same,
 * text and data, every time.
 *
 * `INDEX_MODEL_SEED` picks another sequence; a failure prints the seed and
 * every operation so far.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs/promises";
import { dirname, join } from "node:path";
import process from "node:process";
import { createSession, type FinalizedToolset, finalizeToolset } from "../mod.ts";
import { sh, tempDir } from "./helpers.ts";
import {
  addDirsOf,
  assertSameAnswer,
  callTool,
  dropFromModel,
  EXTENSIONS,
  fileName,
  layOutTree,
  linkedIndexBackends,
  moveInModel,
  put,
  Random,
  RARE,
  runningAsRoot,
  textContent,
  textLine,
  type TreeModel,
  WORDS,
} from "./search_index_tree.ts";

const backends = await linkedIndexBackends();

const DEFAULT_SEED = 1919;
const SEED = process.env.INDEX_MODEL_SEED === undefined
  ? DEFAULT_SEED
  : Number(process.env.INDEX_MODEL_SEED);
/** Text files in the tree at the start. */
const FILES = 2500;
/** Changes made to the tree in one run. */
const OPERATIONS = 200;
/** Random searches after each group of changes (besides those for what the group wrote). */
const GREPS_PER_CHECK = 2;
const GLOBS_PER_CHECK = 1;

const INNER_NAMES = ["core", "util", "net", "fs", "io", "api", "ui", "gen", "misc"];
const GREP_GLOBS = ["*.ts", "*.{md,txt}", "src/**/*.ts", "!*.txt", "**/core/**", "*.c", "*.log"];
const GLOB_PATTERNS = [
  "**/*.ts",
  "src/**",
  "*",
  "**/*.{ts,md}",
  "**/{core,util}/*",
  "**/*",
  "docs/*.md",
  "**/keep*",
  "*/*/*.c",
  "**/.gitignore",
  "links/**",
  "**/{alpha,bravo}*.{c,h}",
];

/** Escapes a literal for RE2. */
function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}

/** The state an operation works on. */
interface World {
  readonly root: string;
  readonly scratch: string;
  readonly outside: string;
  readonly random: Random;
  readonly model: TreeModel;
  readonly indexed: FinalizedToolset;
  /** How many operations ran before this one; its markers carry this number. */
  step: number;
  /** The markers written by the operations of the current group. */
  readonly markers: string[];
  /** Links and other names made at random, for unique names. */
  made: number;
}

function pickFile(world: World): string | null {
  if (world.model.files.size === 0) return null;
  return world.random.pick([...world.model.files]);
}

function pickDir(world: World): string {
  const dirs = [...world.model.dirs];
  return dirs.length === 0 || world.random.chance(0.1) ? "" : world.random.pick(dirs);
}

function within(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

/** A path for a new file that does not exist in the model. */
function newFilePath(world: World): string {
  for (;;) {
    const path = within(pickDir(world), fileName(world.random));
    if (!world.model.files.has(path)) return path;
  }
}

/** Text with a marker only this operation writes, so that a search can ask for it. */
function markedContent(world: World): string {
  const marker = `marker_${world.step}_${world.markers.length}`;
  world.markers.push(marker);
  const lines = textContent(world.random).split("\n");
  lines.splice(world.random.int(lines.length), 0, `${textLine(world.random)} ${marker}`);
  return lines.join("\n");
}

async function exists(path: string): Promise<boolean> {
  return await fs.lstat(path).then(() => true, () => false);
}

/** One change to the tree; returns what it did, or null when it did not apply. */
type Operation = (world: World) => Promise<string | null>;

const toolWrite: Operation = async (world) => {
  const existing = world.random.chance(0.6) ? pickFile(world) : null;
  const path = existing ?? newFilePath(world);
  const content = markedContent(world);
  const result = await callTool(world.indexed, "write", { path, content });
  assert.equal(result.ok, true, result.output);
  world.model.files.add(path);
  addDirsOf(world.model, path);
  return `tool write ${path}${existing ? "" : " (new)"}`;
};

const toolEdit: Operation = async (world) => {
  const path = pickFile(world);
  if (path === null) return null;
  const text = await fs.readFile(join(world.root, path), "utf8");
  const unique = text.split("\n").filter((line) =>
    line.trim().length >= 3 && text.split(line).length === 2
  );
  if (unique.length === 0) return null;
  const old = world.random.pick(unique);
  const replacement = markedContent(world).split("\n").slice(0, 3).join("\n");
  const result = await callTool(world.indexed, "edit", {
    path,
    old_text: old,
    new_text: replacement,
  });
  assert.equal(result.ok, true, result.output);
  return `tool edit ${path}: ${JSON.stringify(old)}`;
};

const externalNew: Operation = async (world) => {
  const path = newFilePath(world);
  await put(join(world.root, path), markedContent(world));
  world.model.files.add(path);
  addDirsOf(world.model, path);
  return `node:fs new file ${path}`;
};

const externalOverwrite: Operation = async (world) => {
  const path = pickFile(world);
  if (path === null) return null;
  await fs.writeFile(join(world.root, path), markedContent(world));
  return `node:fs overwrite ${path}`;
};

const externalAppend: Operation = async (world) => {
  const path = pickFile(world);
  if (path === null) return null;
  await fs.appendFile(join(world.root, path), markedContent(world));
  return `node:fs append ${path}`;
};

const childWrite: Operation = async (world) => {
  const append = world.random.chance(0.4);
  const existing = append || world.random.chance(0.5) ? pickFile(world) : null;
  const path = existing ?? newFilePath(world);
  await fs.mkdir(dirname(join(world.root, path)), { recursive: true });
  const script = append ? 'printf "%s" "$2" >> "$1"' : 'printf "%s" "$2" > "$1"';
  await sh(script, join(world.root, path), markedContent(world));
  world.model.files.add(path);
  addDirsOf(world.model, path);
  return `bash ${append ? "append to" : "write"} ${path}`;
};

const renameFile: Operation = async (world) => {
  const from = pickFile(world);
  if (from === null) return null;
  const to = world.random.chance(0.3)
    ? from.replace(/\.[a-z]+$/, `.${world.random.pick(EXTENSIONS)}`)
    : newFilePath(world);
  if (to === from || await exists(join(world.root, to))) return null;
  await fs.mkdir(dirname(join(world.root, to)), { recursive: true });
  await fs.rename(join(world.root, from), join(world.root, to));
  moveInModel(world.model, from, to);
  addDirsOf(world.model, to);
  return `rename file ${from} -> ${to}`;
};

const renameDir: Operation = async (world) => {
  const from = pickDir(world);
  if (from === "") return null;
  const parent = pickDir(world);
  if (parent === from || parent.startsWith(`${from}/`)) return null;
  const to = within(parent, `${world.random.pick(INNER_NAMES)}${world.random.int(100)}`);
  if (await exists(join(world.root, to))) return null;
  await fs.rename(join(world.root, from), join(world.root, to));
  moveInModel(world.model, from, to);
  return `rename directory ${from} -> ${to}`;
};

const deleteFile: Operation = async (world) => {
  const path = pickFile(world);
  if (path === null) return null;
  await fs.rm(join(world.root, path));
  world.model.files.delete(path);
  return `delete file ${path}`;
};

const deleteDir: Operation = async (world) => {
  const path = pickDir(world);
  if (path === "") return null;
  const below = [...world.model.files].filter((file) => file.startsWith(`${path}/`)).length;
  if (below > 150) return null;
  await fs.rm(join(world.root, path), { recursive: true });
  dropFromModel(world.model, path);
  return `delete directory ${path} (${below} files)`;
};

const newDirectory: Operation = async (world) => {
  const parent = pickDir(world);
  let dir = within(parent, `${world.random.pick(INNER_NAMES)}${world.random.int(1000)}`);
  if (world.random.chance(0.4)) dir += `/${world.random.pick(INNER_NAMES)}`;
  if (await exists(join(world.root, dir))) return null;
  const count = world.random.between(1, 8);
  for (let i = 0; i < count; i++) {
    const path = `${dir}/${fileName(world.random)}`;
    await put(join(world.root, path), markedContent(world));
    world.model.files.add(path);
  }
  addDirsOf(world.model, `${dir}/x`);
  return `new directory ${dir} with ${count} files`;
};

const IGNORE_RULES: readonly ((random: Random) => string)[] = [
  (random) => `*.${random.pick(EXTENSIONS)}`,
  (random) => `${random.pick(WORDS)}*`,
  (random) => `${random.pick(INNER_NAMES)}/`,
  (random) => `/${random.pick(INNER_NAMES)}`,
  (random) => `**/${random.pick(INNER_NAMES)}/*.${random.pick(EXTENSIONS)}`,
  (random) => `!${random.pick(WORDS)}*.${random.pick(EXTENSIONS)}`,
  (random) => `!*.${random.pick(EXTENSIONS)}`,
  (random) => `!${random.pick(INNER_NAMES)}/`,
];

const gitignoreEdit: Operation = async (world) => {
  const dir = world.random.chance(0.4) ? "" : pickDir(world);
  const path = within(dir, ".gitignore");
  const current = await fs.readFile(join(world.root, path), "utf8").catch(() => "");
  const lines = current.split("\n").filter((line) => line !== "");
  const roll = world.random.next();
  let what: string;
  if (roll < 0.55 || lines.length === 0) {
    const rule = world.random.pick(IGNORE_RULES)(world.random);
    lines.push(rule);
    what = `add ${JSON.stringify(rule)}`;
  } else if (roll < 0.9) {
    const [rule] = lines.splice(world.random.int(lines.length), 1);
    what = `remove ${JSON.stringify(rule)}`;
  } else {
    await fs.rm(join(world.root, path));
    return `delete ${path}`;
  }
  const text = lines.map((line) => `${line}\n`).join("");
  if (world.random.chance(0.3)) {
    const result = await callTool(world.indexed, "write", { path, content: text });
    assert.equal(result.ok, true, result.output);
    return `tool write ${path}: ${what}`;
  }
  await put(join(world.root, path), text);
  return `node:fs write ${path}: ${what}`;
};

/** Quotes a word for bash: our vocabulary holds no single quote. */
function quoted(text: string): string {
  assert.ok(!text.includes("'"));
  return `'${text}'`;
}

const branchSwitch: Operation = async (world) => {
  const files = [...world.model.files];
  const lines = ["set -e", `cd ${quoted(world.root)}`];
  const rewrite = new Set<string>();
  const remove = new Set<string>();
  const rewrites = Math.min(files.length, world.random.between(120, 200));
  const removes = Math.min(files.length, world.random.between(30, 80));
  for (let i = 0; i < rewrites; i++) rewrite.add(world.random.pick(files));
  for (let i = 0; i < removes; i++) {
    const path = world.random.pick(files);
    if (!rewrite.has(path)) remove.add(path);
  }
  for (const path of rewrite) {
    lines.push(`printf '%s' ${quoted(markedContent(world))} > ${quoted(path)}`);
  }
  for (const path of remove) {
    lines.push(`rm -f ${quoted(path)}`);
    world.model.files.delete(path);
  }
  const created: string[] = [];
  const newDirs = Array.from(
    { length: world.random.between(1, 3) },
    () => within(pickDir(world), `branch${world.step}_${world.random.int(1000)}`),
  );
  const creates = world.random.between(40, 100);
  for (let i = 0; i < creates; i++) {
    const dir = world.random.chance(0.5) ? world.random.pick(newDirs) : pickDir(world);
    const path = within(dir, fileName(world.random));
    if (world.model.files.has(path)) continue;
    lines.push(`mkdir -p ${quoted(dir === "" ? "." : dir)}`);
    lines.push(`printf '%s' ${quoted(markedContent(world))} > ${quoted(path)}`);
    created.push(path);
  }
  if (world.random.chance(0.5)) {
    lines.push(
      `printf '%s\\n' ${quoted(world.random.pick(IGNORE_RULES)(world.random))} >> .gitignore`,
    );
  }
  const script = join(world.scratch, `switch_${world.step}.sh`);
  await fs.writeFile(script, lines.join("\n") + "\n");
  await sh('bash "$1"', script);
  for (const path of created) {
    world.model.files.add(path);
    addDirsOf(world.model, path);
  }
  return `branch switch: ${rewrite.size} rewritten, ${remove.size} deleted, ${created.length} created`;
};

const binaryWrite: Operation = async (world) => {
  const existing = world.random.chance(0.5) ? pickFile(world) : null;
  const path = existing ?? newFilePath(world);
  const text = new TextEncoder().encode(markedContent(world));
  const data = new Uint8Array(text.length + 1);
  data.set(text, 1);
  await put(join(world.root, path), data);
  // A binary file is never edited as text again: it leaves the model.
  world.model.files.delete(path);
  addDirsOf(world.model, path);
  return `node:fs binary ${path}${existing ? "" : " (new)"}`;
};

const newLink: Operation = async (world) => {
  const dir = pickDir(world);
  const path = within(dir, `link${world.made++}`);
  const target = world.random.pick([
    world.outside,
    join(world.outside, "outside_only.txt"),
    join(world.root, "src"),
    "..",
    "missing_target",
  ]);
  await sh('ln -s "$1" "$2"', target, join(world.root, path));
  return `symlink ${path} -> ${target}`;
};

const lockFile: Operation = async (world) => {
  // Mode 000 stops no one running as root.
  if (runningAsRoot) return null;
  const path = pickFile(world);
  if (path === null) return null;
  await fs.chmod(join(world.root, path), 0o000);
  world.model.files.delete(path);
  return `chmod 000 ${path}`;
};

const OPERATIONS_BY_WEIGHT: readonly [number, Operation][] = [
  [12, toolWrite],
  [12, toolEdit],
  [8, externalNew],
  [8, externalOverwrite],
  [8, externalAppend],
  [8, childWrite],
  [6, renameFile],
  [3, renameDir],
  [6, deleteFile],
  [2, deleteDir],
  [4, newDirectory],
  [8, gitignoreEdit],
  [1, branchSwitch],
  [3, binaryWrite],
  [2, newLink],
  [2, lockFile],
];
const TOTAL_WEIGHT = OPERATIONS_BY_WEIGHT.reduce((sum, [weight]) => sum + weight, 0);

function pickOperation(random: Random): Operation {
  let roll = random.int(TOTAL_WEIGHT);
  for (const [weight, operation] of OPERATIONS_BY_WEIGHT) {
    if (roll < weight) return operation;
    roll -= weight;
  }
  throw new Error("unreachable");
}

/** A grep pattern, and whether it holds a literal of 3 or more ASCII bytes the index can use. */
function grepPattern(random: Random): { pattern: string; literal: boolean } {
  const roll = random.next();
  const word = random.pick(WORDS);
  if (roll < 0.3) {
    return { pattern: random.chance(0.2) ? word.toUpperCase() : word, literal: true };
  }
  if (roll < 0.45) {
    const rare = random.pick(RARE);
    return {
      pattern: escapeRegExp(rare),
      literal: [...rare].every((char) => char.charCodeAt(0) < 0x80),
    };
  }
  if (roll < 0.65) {
    const other = random.pick(WORDS);
    return {
      pattern: random.pick([
        `${word}\\s+\\w+`,
        `(${word}|${other})`,
        `${word}_?\\d+`,
        `\\b${word}\\b`,
        `spin_lock_irq(save|restore)\\(`,
        `marker_\\d+_1\\b`,
        `[Aa]lpha ${other}`,
        `^${word}`,
        `${word}$`,
      ]),
      literal: true,
    };
  }
  if (roll < 0.8) {
    return {
      pattern: random.pick(["\\d{4}", "^[a-z]{2}$", "[xyz]{2}", "^$", "\\w+_\\w+", ".", "[0-9]+$"]),
      literal: false,
    };
  }
  if (roll < 0.9) {
    return { pattern: random.pick(["straße", "übermut", "Über\\w*", "STRASSE"]), literal: false };
  }
  return {
    pattern: random.pick(["outsider_marker", "zanzibar", "after the sniff"]),
    literal: true,
  };
}

/** A random grep input, and whether the index can narrow it. */
function grepInput(world: World): { input: Record<string, unknown>; literal: boolean } {
  const { random } = world;
  const { pattern, literal } = grepPattern(random);
  const input: Record<string, unknown> = { pattern };
  const mode = random.pick([undefined, "files_with_matches", "content", "count"]);
  if (mode !== undefined) input.mode = mode;
  if (mode === "content" && random.chance(0.6)) input.context = random.int(3);
  const caseInsensitive = random.chance(0.3);
  if (caseInsensitive) input.case_insensitive = true;
  else if (random.chance(0.1)) input.case_insensitive = false;
  if (random.chance(0.25)) input.glob = random.pick(GREP_GLOBS);
  const where = random.next();
  if (where < 0.25) {
    const dir = pickDir(world);
    if (dir !== "") input.path = random.chance(0.3) ? join(world.root, dir) : dir;
  } else if (where < 0.33) {
    const file = pickFile(world);
    if (file !== null) input.path = file;
  }
  if (random.chance(0.5)) input.max_results = random.between(1, 5);
  else if (random.chance(0.15)) input.max_results = 2000;
  return { input, literal };
}

function globInput(world: World): Record<string, unknown> {
  const { random } = world;
  const input: Record<string, unknown> = { pattern: random.pick(GLOB_PATTERNS) };
  if (random.chance(0.25)) {
    const dir = pickDir(world);
    if (dir !== "") input.path = dir;
  }
  if (random.chance(0.3)) input.max_results = random.between(1, 5);
  else if (random.chance(0.15)) input.max_results = 2000;
  return input;
}

for (const backend of backends) {
  test(`search index: the indexed answer equals a fresh walk after every operation (${backend.name})`, async () => {
    const dir = await tempDir();
    const root = join(dir.path, "repo");
    const outside = join(dir.path, "outside");
    const scratch = join(dir.path, "scratch");
    await fs.mkdir(scratch);
    const random = new Random(SEED);
    const model = await layOutTree(root, outside, random, FILES);
    const indexedSession = await createSession({
      workingDirectory: root,
      filesystem: backend.create(),
      skillRoot: null,
      searchIndex: true,
    });
    const plainSession = await createSession({
      workingDirectory: root,
      filesystem: backend.create(),
      skillRoot: null,
    });
    const index = indexedSession.searchIndex;
    assert.ok(index, "a session with searchIndex: true has a searchIndex handle");
    assert.equal(plainSession.searchIndex, undefined);
    const indexed = finalizeToolset({ session: indexedSession });
    const plain = finalizeToolset({ session: plainSession });
    const log: string[] = [];
    const context = () =>
      `seed ${SEED} (run again with INDEX_MODEL_SEED=${SEED}); backend ${backend.name}; ` +
      `operations so far:\n${log.map((line, i) => `  ${i + 1}. ${line}`).join("\n")}`;
    const world: World = {
      root,
      scratch,
      outside,
      random,
      model,
      indexed,
      step: 0,
      markers: [],
      made: 0,
    };
    let literalGreps = 0;
    let searches = 0;
    const same = async (name: string, input: Record<string, unknown>) => {
      searches++;
      return await assertSameAnswer(indexed, plain, name, input, context);
    };
    const check = async () => {
      const markers = world.markers.splice(0);
      if (markers.length > 0) {
        // What the group just wrote must be found at once, wherever it went.
        literalGreps++;
        const sample = markers.length <= 12
          ? markers
          : Array.from({ length: 12 }, () => random.pick(markers));
        const pattern = sample.map((marker) => `${marker}\\b`).join("|");
        const mode = random.pick(["files_with_matches", "count", "content"]);
        await same("grep", { pattern, mode, max_results: 2000 });
      }
      for (let i = 0; i < GREPS_PER_CHECK; i++) {
        const { input, literal } = grepInput(world);
        if (literal && input.case_insensitive !== true) literalGreps++;
        await same("grep", input);
      }
      for (let i = 0; i < GLOBS_PER_CHECK; i++) await same("glob", globInput(world));
    };
    try {
      // Searches before the index is ready walk (and start the build).
      await check();
      await index.ready;
      assert.equal(index.stats().state, "ready");
      const before = index.stats().searches;
      const switches = new Set([Math.floor(OPERATIONS / 3), Math.floor((2 * OPERATIONS) / 3)]);
      while (world.step < OPERATIONS) {
        const group = random.between(1, 4);
        for (let k = 0; k < group && world.step < OPERATIONS; k++) {
          const operation = switches.has(world.step) ? branchSwitch : pickOperation(random);
          let done: string | null = null;
          try {
            done = await operation(world);
          } catch (error) {
            throw new Error(`operation ${world.step + 1} failed: ${error}\n${context()}`);
          }
          if (done === null) continue;
          log.push(done);
          world.step++;
        }
        // Once the index is answering again (a burst may have it look at the whole tree first,
        // searches walking meanwhile, as other tests check): the answers checked are its own.
        while (index.stats().state !== "ready") {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        await check();
      }
      for (const pattern of ["alpha", "zanzibar", "marker_", "outsider_marker", "\\d{4}"]) {
        for (const mode of ["files_with_matches", "content", "count"]) {
          await same("grep", { pattern, mode, max_results: 2000 });
        }
      }
      const found = await same("glob", { pattern: "**", max_results: 2000 });
      assert.equal(found.ok, true);
      const after = index.stats();
      assert.equal(after.state, "ready");
      const answered = after.searches.indexed - before.indexed;
      // Most searches with a literal are answered from the index, not walked.
      assert.ok(
        answered * 2 >= literalGreps,
        `the index answered ${answered} searches of ${searches} ` +
          `(${literalGreps} greps with a literal); walked ${after.searches.walked - before.walked}`,
      );
      if (process.env.INDEX_MODEL_VERBOSE) {
        console.log(
          `${backend.name} seed ${SEED}: ${log.length} operations, ${searches} searches compared, ` +
            `${answered} answered by the index, ${after.searches.walked - before.walked} walked, ` +
            `${after.files} files, ${after.bytes} bytes, memory ${after.memory}`,
        );
      }
    } finally {
      await index.close();
      await dir.cleanup();
    }
    assert.equal(index.stats().state, "closed");
  });
}
