/**
 * The search index under the narrow Deno permission flags a host gets from
 * `denoPermissionFlags`: a session run with exactly those flags and
 * `--no-prompt` builds its index, answers from it, and sees a change made
 * outside it; it writes its cache where the flags grant, and the next
 * session loads it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { DENO_DIR, symlinkOnDisk, tempDir, underDeno } from "./helpers.ts";

/** A byte stream of the child, as much of Deno's `ReadableStream` as is used. */
interface ByteSource {
  getReader(): { read(): Promise<{ value?: Uint8Array; done: boolean }> };
}

/** The child's stdin, as much of Deno's `WritableStream` as is used. */
interface ByteSink {
  getWriter(): { write(chunk: Uint8Array): Promise<void>; close(): Promise<void> };
}

interface ChildLike {
  readonly stdin: ByteSink;
  readonly stdout: ByteSource;
  readonly stderr: ByteSource;
  readonly status: Promise<{ code: number }>;
}

interface DenoLike {
  execPath(): string;
  Command: new (
    program: string,
    options: {
      args: string[];
      env?: Record<string, string>;
      stdin: "piped";
      stdout: "piped";
      stderr: "piped";
    },
  ) => { spawn(): ChildLike };
}

/** One grep's answer as the agent prints it. */
interface Answer {
  readonly files: string[];
  readonly stats: {
    readonly state: string;
    readonly builds: number;
    readonly reason: string | null;
    readonly searches: { readonly indexed: number; readonly walked: number };
    readonly cache: {
      readonly file: string | null;
      readonly loads: number;
      readonly reused: number;
      readonly writes: number;
      readonly note: string | null;
    };
  };
}

/** The chunks of text of a byte stream, as they come. */
async function* chunksOf(stream: ByteSource): AsyncGenerator<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    yield decoder.decode(value, { stream: true });
  }
  yield decoder.decode();
}

/** The lines of a byte stream, as they come. */
async function* linesOf(stream: ByteSource): AsyncGenerator<string> {
  let pending = "";
  for await (const chunk of chunksOf(stream)) {
    pending += chunk;
    let end: number;
    while ((end = pending.indexOf("\n")) !== -1) {
      yield pending.slice(0, end);
      pending = pending.slice(end + 1);
    }
  }
  if (pending !== "") yield pending;
}

/** The whole text of a byte stream. */
async function textOf(stream: ByteSource): Promise<string> {
  let text = "";
  for await (const chunk of chunksOf(stream)) text += chunk;
  return text;
}

/**
 * The index agent (`fixtures/index_agent.ts`) run by `deno run` with exactly
 * `flags` and `--no-prompt` over `root`: its stdin, its answers one at a
 * time, its stderr once it ends, and its exit.
 */
function runAgent(flags: readonly string[], root: string, env: Record<string, string> = {}) {
  // Deno.Command, not node:child_process: Deno's Node layer rewrites commands that start Deno.
  const { Deno: deno } = globalThis as unknown as { Deno: DenoLike };
  const agent = fileURLToPath(new URL("./fixtures/index_agent.ts", import.meta.url));
  const child = new deno.Command("bash", {
    args: ["-c", '"$0" run --quiet --no-prompt "$@"', deno.execPath(), ...flags, agent, root],
    // Another cache home for the index, the same module cache for Deno.
    env: { DENO_DIR, ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const errors = textOf(child.stderr);
  const answers = linesOf(child.stdout);
  const next = async (): Promise<Answer> => {
    const { value, done } = await answers.next();
    if (done) assert.fail(`the agent ended early: ${await errors}`);
    return JSON.parse(value) as Answer;
  };
  return { writer: child.stdin.getWriter(), next, errors, status: child.status };
}

/** Loads `denoPermissionFlags` (the Deno entry point, which the npm package does not ship). */
async function flagsFor(
  workingDirectory: string,
  environment?: Record<string, string>,
): Promise<string[]> {
  const specifier = "../deno.ts";
  const { denoPermissionFlags } = await import(specifier) as {
    denoPermissionFlags(
      options: { workingDirectory: string; environment?: Record<string, string> },
    ): string[];
  };
  return denoPermissionFlags({ workingDirectory, ...(environment ? { environment } : {}) });
}

/** The index's fence home among the paths `flags` let the session write. */
function fenceHomeOf(flags: readonly string[]): string | undefined {
  return flags.find((flag) => flag.startsWith("--allow-write="))?.split(",")
    .find((path) => path.includes("/openwork-index-"));
}

test(
  "search index: under exactly denoPermissionFlags' flags and --no-prompt it builds, answers, and sees outside changes",
  { skip: !underDeno && "runs a Deno subprocess under Deno's permission flags" },
  async () => {
    const dir = await tempDir();
    const root = await realpath(dir.path).then(async (path) => {
      await mkdir(`${path}/root/src`, { recursive: true });
      return `${path}/root`;
    });
    for (let i = 0; i < 200; i++) await writeFile(`${root}/src/f${i}.txt`, `line ${i}\n`);
    await writeFile(`${root}/src/old.txt`, "a needle\n");
    // The cache goes below the test's directory, not the user's.
    const env = { XDG_CACHE_HOME: `${root.slice(0, -"/root".length)}/cache` };
    const flags = await flagsFor(root, env);
    const home = fenceHomeOf(flags);
    const { writer, next, errors, status } = runAgent(flags, root, env);
    try {
      const first = await next();
      if (first.stats.state !== "ready") {
        assert.fail(`the index is ${first.stats.state}: ${first.stats.reason}`);
      }
      assert.deepEqual(first.files, ["src/old.txt"]);
      assert.equal(first.stats.searches.indexed, 1);

      // A change from outside the session: only the watcher can tell the index.
      await writeFile(`${root}/src/new.txt`, "another needle\n");
      await writer.write(new TextEncoder().encode("again\n"));
      const second = await next();
      assert.deepEqual([...second.files].sort(), ["src/new.txt", "src/old.txt"]);
      assert.deepEqual(second.stats.searches, { indexed: 2, walked: 0 });
      assert.equal(second.stats.builds, 1, second.stats.reason ?? "");

      await writer.close();
      const { code } = await status;
      assert.equal(code, 0, await errors);
      assert.equal(await errors, "");
      // Each watcher's fence directory goes with it; the shared home stays.
      assert.ok(home !== undefined, `no fence home in ${flags.join(" ")}`);
      assert.deepEqual(await readdir(home), []);
    } finally {
      await writer.close().catch(() => {});
      await status;
      if (home !== undefined) await rm(home, { recursive: true, force: true });
      await dir.cleanup();
    }
  },
);

test(
  "search index: under the flags, a fence home that is a link or that others may write in is refused, and searches walk",
  { skip: !underDeno && "runs a Deno subprocess under Deno's permission flags" },
  async () => {
    const dir = await tempDir();
    const root = `${await realpath(dir.path)}/root`;
    await mkdir(root);
    await writeFile(`${root}/old.txt`, "a needle\n");
    const env = { XDG_CACHE_HOME: `${await realpath(dir.path)}/cache` };
    const flags = await flagsFor(root, env);
    const home = fenceHomeOf(flags)!;
    const elsewhere = `${await realpath(dir.path)}/elsewhere`;
    await mkdir(elsewhere);
    const cases: [string, () => Promise<unknown>, RegExp][] = [
      ["a link", () => symlinkOnDisk(elsewhere, home), /it is not a directory/],
      ["open to others", async () => {
        await mkdir(home);
        await chmod(home, 0o777);
      }, /others may write in it/],
    ];
    try {
      for (const [name, make, why] of cases) {
        await rm(home, { recursive: true, force: true });
        await make();
        const { writer, next, errors, status } = runAgent(flags, root, env);
        try {
          const answer = await next();
          assert.equal(answer.stats.state, "unavailable", name);
          assert.match(answer.stats.reason ?? "", why, name);
          assert.deepEqual(answer.files, ["old.txt"], `${name}: the walk answers`);
          await writer.close();
          assert.equal((await status).code, 0, await errors);
          assert.deepEqual(await readdir(elsewhere), [], `${name}: nothing was made through it`);
        } finally {
          await writer.close().catch(() => {});
          await status;
        }
      }
    } finally {
      await rm(home, { recursive: true, force: true });
      await dir.cleanup();
    }
  },
);

test(
  "search index: under exactly denoPermissionFlags' flags, a session writes its cache where they grant, and the next one loads it",
  { skip: !underDeno && "runs a Deno subprocess under Deno's permission flags" },
  async () => {
    const dir = await tempDir();
    const base = await realpath(dir.path);
    const root = `${base}/root`;
    await mkdir(`${root}/src`, { recursive: true });
    for (let i = 0; i < 50; i++) await writeFile(`${root}/src/f${i}.txt`, `line ${i}\n`);
    await writeFile(`${root}/src/old.txt`, "a needle\n");
    const env = { XDG_CACHE_HOME: `${base}/cache` };
    const flags = await flagsFor(root, env);
    const home = fenceHomeOf(flags);
    const cacheDirectory = `${base}/cache/openwork-tools/search-index`;
    assert.ok(
      flags.some((flag) => flag.startsWith("--allow-write=") && flag.includes(cacheDirectory)),
      flags.join(" "),
    );
    try {
      for (const round of [0, 1]) {
        const { writer, next, errors, status } = runAgent(flags, root, env);
        try {
          const answer = await next();
          assert.equal(answer.stats.state, "ready", answer.stats.reason ?? "");
          assert.deepEqual(answer.files, ["src/old.txt"]);
          assert.equal(answer.stats.cache.loads, round, answer.stats.cache.note ?? "");
          assert.equal(answer.stats.cache.note, null);
          await writer.close();
          assert.equal((await status).code, 0, await errors);
        } finally {
          await writer.close().catch(() => {});
          await status;
        }
        assert.equal((await readdir(cacheDirectory)).length, 1, "one cache file");
      }
    } finally {
      if (home !== undefined) await rm(home, { recursive: true, force: true });
      await dir.cleanup();
    }
  },
);
