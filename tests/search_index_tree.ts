/**
 * Shared by the search index tests: the disk backends to run them on, a
 * seeded random source, a generated tree with every kind of entry the walk
 * treats apart, and the comparison of one call through two toolsets.
 */
import { after } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs/promises";
import { dirname, join } from "node:path";
import type { AsyncFileSystem, FinalizedToolset, ToolResult } from "../mod.ts";
import { createNodeFileSystem, type DiskFileSystemOptions } from "../node.ts";
import { sh, symlinkOnDisk, tempDir, underDeno } from "./helpers.ts";
import { RACY_MS } from "../src/search/index/stamps.ts";

/** Whether the tests run as root, whom mode 000 does not stop (asked of `id`: Deno's flags here refuse the uid). */
export const runningAsRoot: boolean = (await sh("id -u")).trim() === "0";

/** A disk backend the index is tested on. */
export interface IndexBackend {
  /** The backend's name, for test names. */
  readonly name: string;
  /** A new instance of the backend. */
  create(): AsyncFileSystem;
}

/**
 * The disk backends, as {@link indexBackends}, with a link to `/proc/self/fd`
 * made for them (under narrow flags the Deno backend reaches descriptors
 * through a link inside its scope), removed after the file's tests.
 */
export async function linkedIndexBackends(): Promise<IndexBackend[]> {
  const links = await tempDir();
  const descriptorLink = join(links.path, "fd");
  await sh('ln -s /proc/self/fd "$1"', descriptorLink);
  after(() => links.cleanup());
  return await indexBackends({ descriptorLink });
}

/**
 * The disk backends: Deno (under Deno only) and Node. The Deno entry point's
 * specifier is computed so that the Node build neither compiles nor resolves it.
 */
export async function indexBackends(options: DiskFileSystemOptions): Promise<IndexBackend[]> {
  const backends: IndexBackend[] = [];
  if (underDeno) {
    const specifier = "../deno.ts";
    const deno = await import(specifier) as {
      createDenoFileSystem(options?: DiskFileSystemOptions): AsyncFileSystem;
    };
    backends.push({ name: "deno", create: () => deno.createDenoFileSystem(options) });
  }
  backends.push({ name: "node", create: () => createNodeFileSystem(options) });
  return backends;
}

/** A seeded source of random choices (mulberry32): the same sequence on every run and runtime. */
export class Random {
  #state: number;

  /** Starts the sequence at `seed`. */
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [low, high]. */
  between(low: number, high: number): number {
    return low + this.int(high - low + 1);
  }

  /** Whether an event of probability `p` happens. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty list. */
  pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)];
  }
}

/** Common words: each is in many files. */
export const WORDS: readonly string[] = [
  "alpha",
  "bravo",
  "charlie",
  "delta",
  "echo",
  "foxtrot",
  "golf",
  "hotel",
  "india",
  "juliet",
  "kilo",
  "lima",
  "mike",
  "november",
  "oscar",
  "papa",
];

/** Rare words, some with upper case or non-ASCII letters: each is in a few files. */
export const RARE: readonly string[] = [
  "zanzibar",
  "quixotic",
  "xylophone",
  "Jabberwock",
  "straße",
  "ÜBERMUT",
  "fooBarBaz",
  "needle_77",
  "spin_lock_irqsave(",
  "spin_lock_irqrestore(",
];

/** File name extensions of text files. */
export const EXTENSIONS: readonly string[] = ["ts", "js", "md", "txt", "c", "h", "log", "json"];

/** One line of text from the vocabulary. */
export function textLine(random: Random): string {
  const tokens: string[] = [];
  const count = random.between(1, 8);
  for (let i = 0; i < count; i++) {
    const roll = random.next();
    if (roll < 0.015) tokens.push(random.pick(RARE));
    else if (roll < 0.1) tokens.push(String(random.int(10000)));
    else if (roll < 0.15) tokens.push(random.pick(WORDS).toUpperCase());
    else if (roll < 0.2) {
      const word = random.pick(WORDS);
      tokens.push(word[0].toUpperCase() + word.slice(1));
    } else tokens.push(random.pick(WORDS));
  }
  return (random.chance(0.1) ? "  " : "") + tokens.join(random.chance(0.2) ? "_" : " ");
}

/** A text file's content: a few lines, sometimes without a final newline, sometimes with blank lines. */
export function textContent(random: Random): string {
  const lines: string[] = [];
  const count = random.between(1, 12);
  for (let i = 0; i < count; i++) lines.push(random.chance(0.08) ? "" : textLine(random));
  return lines.join("\n") + (random.chance(0.85) ? "\n" : "");
}

/** A new file name with a text extension. */
export function fileName(random: Random): string {
  return `${random.pick(WORDS)}${random.int(1000)}.${random.pick(EXTENSIONS)}`;
}

const TOP = ["src", "lib", "docs", "test", "vendor", "build", "pkg"];
const INNER = ["core", "util", "net", "fs", "io", "api", "ui", "gen"];

/** The relative paths of a generated tree, kept up to date as it changes. */
export interface TreeModel {
  /** Regular text files the operations may rewrite, edit, move or delete. */
  readonly files: Set<string>;
  /** Directories the operations may add to, move or delete (not the root, `.git` or `links`). */
  readonly dirs: Set<string>;
}

/** Writes a file, creating its parent directories. */
export async function put(path: string, data: string | Uint8Array): Promise<void> {
  await fs.mkdir(dirname(path), { recursive: true });
  await fs.writeFile(path, data);
}

/**
 * Lays out a tree of about `fileCount` text files in nested directories at
 * `root`, with the entries the walk treats apart: binary files (a NUL in the
 * first 8 KiB, and one after it), an empty file, invalid UTF-8, an
 * unreadable file (skipped when running as root, who can read it anyway),
 * links to a file, to a directory and to `outside`, a `.git` directory
 * and nested `.gitignore` files with negations. `outside` gets a file whose
 * words are found nowhere in the tree.
 */
export async function layOutTree(
  root: string,
  outside: string,
  random: Random,
  fileCount: number,
): Promise<TreeModel> {
  const dirs = new Set<string>();
  for (const top of TOP) {
    dirs.add(top);
    for (const inner of INNER) {
      if (!random.chance(0.6)) continue;
      dirs.add(`${top}/${inner}`);
      for (const deeper of INNER) {
        if (random.chance(0.3)) dirs.add(`${top}/${inner}/${deeper}`);
      }
    }
  }
  const dirList = [...dirs];
  const files = new Set<string>();
  while (files.size < fileCount) {
    const dir = random.chance(0.02) ? "" : random.pick(dirList);
    files.add(dir === "" ? fileName(random) : `${dir}/${fileName(random)}`);
  }
  for (const dir of dirList) await fs.mkdir(join(root, dir), { recursive: true });
  const list = [...files];
  for (let i = 0; i < list.length; i += 64) {
    await Promise.all(
      list.slice(i, i + 64).map((file) => fs.writeFile(join(root, file), textContent(random))),
    );
  }
  await fs.mkdir(join(root, ".git"));
  await put(join(root, ".gitignore"), "build/\n*.log\n!keep*.log\nvendor/**/gen/\n");
  await put(join(root, "src/.gitignore"), "*.tmp.ts\n!important.tmp.ts\nutil/\n");
  await put(join(root, "docs/.gitignore"), "*.md\n!README.md\n");
  await put(join(root, "src/important.tmp.ts"), "alpha zanzibar important\n");
  await put(join(root, "src/scratch.tmp.ts"), "alpha zanzibar scratch\n");
  await put(join(root, "docs/README.md"), "# alpha\nbravo straße\n");
  await put(join(root, "keep_me.log"), "alpha kept log\n");
  await put(join(root, "special/empty.txt"), "");
  const binary = new TextEncoder().encode("alpha bravo zanzibar\n");
  const withNul = new Uint8Array(binary.length + 10);
  withNul.set(binary);
  await put(join(root, "special/blob.bin"), withNul);
  await put(
    join(root, "special/late_nul.txt"),
    "alpha bravo charlie\n".repeat(500) + "\0 zanzibar after the sniff\n",
  );
  await put(
    join(root, "special/bad_utf8.txt"),
    Uint8Array.from([
      ...new TextEncoder().encode("alpha \xff"),
      0xff,
      0xfe,
      ...new TextEncoder().encode(" bravo\nstra"),
      0xc3,
      ...new TextEncoder().encode("e zanzibar\n"),
    ]),
  );
  if (!runningAsRoot) {
    await put(join(root, "special/locked.txt"), "alpha locked zanzibar\n");
    await fs.chmod(join(root, "special/locked.txt"), 0o000);
  }
  await fs.mkdir(join(root, "links"));
  await symlinkOnDisk(`../${list[0]}`, join(root, "links/to_file.txt"));
  await symlinkOnDisk("../src", join(root, "links/to_dir"));
  await symlinkOnDisk(outside, join(root, "links/out"));
  await symlinkOnDisk(join(outside, "outside_only.txt"), join(root, "links/out_file.txt"));
  await put(join(outside, "outside_only.txt"), "alpha outsider_marker zanzibar\n");
  await put(join(outside, "deep/inner.ts"), "alpha outsider_marker bravo\n");
  for (const file of ["src/important.tmp.ts", "src/scratch.tmp.ts", "keep_me.log"]) {
    files.add(file);
  }
  return { files, dirs };
}

/** What of a result both toolsets must agree on: everything but call ids and durations. */
export function comparable(result: ToolResult): unknown {
  return { ok: result.ok, output: result.output, data: result.data, error: result.error };
}

/** Calls a tool, approving every request. */
export function callTool(
  toolset: FinalizedToolset,
  name: string,
  input: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<ToolResult> {
  return toolset.call({
    name,
    input,
    callId: `${name}-${Math.random()}`,
    approve: () => Promise.resolve(true),
    ...(signal ? { signal } : {}),
  });
}

/** Runs one call through both toolsets and asserts the results are the same, text and data. */
export async function assertSameAnswer(
  indexed: FinalizedToolset,
  plain: FinalizedToolset,
  name: string,
  input: Record<string, unknown>,
  context: () => string,
): Promise<ToolResult> {
  const [fromIndex, fromWalk] = await Promise.all([
    callTool(indexed, name, input),
    callTool(plain, name, input),
  ]);
  assert.deepStrictEqual(
    comparable(fromIndex),
    comparable(fromWalk),
    `${name} ${JSON.stringify(input)} differs from a fresh walk\n${context()}`,
  );
  return fromWalk;
}

/** Renames every model path at or below `from` to sit at `to`. */
export function moveInModel(model: TreeModel, from: string, to: string): void {
  for (const set of [model.files, model.dirs]) {
    for (const path of [...set]) {
      if (path === from || path.startsWith(`${from}/`)) {
        set.delete(path);
        set.add(to + path.slice(from.length));
      }
    }
  }
}

/** Drops every model path at or below `path`. */
export function dropFromModel(model: TreeModel, path: string): void {
  for (const set of [model.files, model.dirs]) {
    for (const entry of [...set]) {
      if (entry === path || entry.startsWith(`${path}/`)) set.delete(entry);
    }
  }
}

/** Adds every directory above `path` to the model. */
export function addDirsOf(model: TreeModel, path: string): void {
  for (let dir = dirname(path); dir !== "."; dir = dirname(dir)) model.dirs.add(dir);
}

/**
 * Waits until every change made so far is older than the stamps' racy
 * window: a stamp taken from now on is known, not racy. This waits on the
 * clock itself, the event the stamps are defined by, not on a guess.
 */
export async function pastRacyWindow(): Promise<void> {
  const until = Date.now() + RACY_MS + 50;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, until - Date.now()));
  }
}
