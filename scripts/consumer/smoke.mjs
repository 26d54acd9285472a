// Runs in a fresh Node project that installed the packed tarball.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { createSession, finalizeToolset, undoFileChanges } from "@openwork/tools";

const dir = await mkdtemp(join(tmpdir(), "owt-smoke-"));
try {
  await writeFile(join(dir, "a.txt"), "hello\nworld\n");
  const session = await createSession({ workingDirectory: dir });
  const toolset = finalizeToolset({ session });
  assert.deepEqual(toolset.definitions.map((d) => d.name), [
    "read",
    "write",
    "edit",
    "grep",
    "glob",
    "list",
    "bash",
  ]);
  // The person approves every call here: the smoke test is about the installed package working.
  const call = (name, input) =>
    toolset.call({ name, input, callId: name, approve: () => Promise.resolve(true) });
  const read = await call("read", { path: "a.txt" });
  assert.match(read.output, /1\thello/);
  const edit = await call("edit", { path: "a.txt", old_text: "world", new_text: "there" });
  assert.equal(edit.ok, true);
  assert.equal(await readFile(join(dir, "a.txt"), "utf8"), "hello\nthere\n");
  const grep = await call("grep", { pattern: "there", mode: "content" });
  assert.equal(grep.output, "a.txt:2:there");
  const bash = await call("bash", { command: "echo from-bash; exit 4" });
  assert.equal(bash.data.exit_code, 4);
  assert.match(bash.output, /from-bash/);
  const classified = await toolset.prepare("bash", { command: "ls -la | wc -l" });
  assert.equal(classified.effects[0].classification.readOnly, true);
  const undo = await undoFileChanges(session, edit.artifacts);
  assert.equal(undo.ok, true);
  console.log("smoke: read, edit, grep, bash and undo work from the installed package");
} finally {
  await rm(dir, { recursive: true, force: true });
}

// The bin, as a user's shell runs it after installing the package (its `#!/usr/bin/env node` line
// picks the first node on PATH: the one running this script, in the build's checks).
import { execFileSync } from "node:child_process";
const listed = JSON.parse(
  execFileSync("node_modules/.bin/openwork-tools", ["tools"], { encoding: "utf8" }),
);
assert.equal(listed.length, 7);
console.log("smoke: the openwork-tools bin lists the seven tools");

// The `./mcp` entry: MCP over HTTP, with the token the server wants.
const { serveHttp } = await import("@openwork/tools/mcp");
const served = await serveHttp(
  async () => finalizeToolset({ session: await createSession({ workingDirectory: tmpdir() }) }),
  { port: 0 },
);
try {
  const refused = await fetch(served.url, { method: "POST", body: "{}" });
  assert.equal(refused.status, 401);
  const initialized = await fetch(served.url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${served.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "smoke", version: "1" },
      },
    }),
  });
  assert.equal(initialized.status, 200);
  assert.match(initialized.headers.get("mcp-session-id") ?? "", /^[0-9a-f-]{36}$/);
  await initialized.text();
} finally {
  await served.close();
}
console.log("smoke: @openwork/tools/mcp serves MCP over HTTP behind its token");
