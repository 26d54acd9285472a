// Bundled with esbuild (platform node, format esm) in a fresh project that installed the packed
// tarball, then run from the bundle's folder with no node_modules in reach of the package code.
// `node bundle.mjs workers` expects the search worker bundled beside it; `node bundle.mjs thread`
// expects none there, so searches stay on the calling thread.
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSession, finalizeToolset } from "@openwork/tools";

const expected = process.argv[2];
assert.ok(expected === "workers" || expected === "thread", "usage: bundle.mjs workers|thread");
assert.equal(existsSync(new URL("./search_worker.mjs", import.meta.url)), expected === "workers");

/** The threads of this process (Linux): search workers are threads of their own. */
const threads = () => readdirSync("/proc/self/task").length;

const dir = await realpath(await mkdtemp(join(tmpdir(), "owt-bundle-")));
try {
  // Enough files that a search goes on past the part the calling thread does first.
  for (let i = 0; i < 600; i++) {
    await mkdir(join(dir, `d${i % 12}`), { recursive: true });
    await writeFile(join(dir, `d${i % 12}`, `f${i}.txt`), i % 3 === 0 ? `needle ${i}\n` : "hay\n");
  }
  const session = await createSession({ workingDirectory: dir });
  const toolset = finalizeToolset({ session });
  const asked = [];
  const call = (name, input) =>
    toolset.call({
      name,
      input,
      callId: name,
      approve: () => (asked.push(name), Promise.resolve(true)),
    });

  // The classifier, a hand-written lexer, needs nothing beside the bundle: `ls -la` runs unasked.
  const listed = await call("bash", { command: "ls -la" });
  assert.equal(listed.ok, true, listed.output);
  assert.deepEqual(asked, [], "ls -la ran without asking");
  assert.match(listed.output, /d11/);

  const before = threads();
  const grep = await call("grep", { pattern: "needle", max_results: 1000 });
  assert.equal(grep.ok, true, grep.output);
  assert.equal(grep.data.files.length, 200);
  const glob = await call("glob", { pattern: "**/*.txt", max_results: 1000 });
  assert.equal(glob.ok, true, glob.output);
  assert.equal(glob.data.paths.length, 600);
  const started = threads() - before;
  if (expected === "workers") assert.ok(started > 0, "the search workers started");
  else assert.equal(started, 0, "no thread started for the searches");

  const bash = await call("bash", { command: "echo from-bash; exit 3" });
  assert.equal(bash.data.exit_code, 3);
  assert.match(bash.output, /from-bash/);
  assert.deepEqual(asked, ["bash"], "only the command that exits non-read-only asked");
  console.log(
    `bundle (${expected}): ls -la allowed unasked; grep and glob found 200 and 600 (${started} threads started); bash ran`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
