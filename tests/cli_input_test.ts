/**
 * The CLI's input as bytes: standard input that is not UTF-8 is a usage
 * error (never a call with replacement characters in its command or path),
 * and an empty `--root` names no directory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import { tempDir } from "./helpers.ts";
import { cliCommand, ENV } from "./mcp_helpers.ts";

function runCli(
  args: readonly string[],
  cwd: string,
  stdin: Uint8Array | null,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { command, args: base } = cliCommand();
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...base, ...args], {
      cwd,
      env: ENV,
      stdio: [stdin === null ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    if (stdin !== null) child.stdin!.end(stdin);
  });
}

test("CLI: standard input that is not UTF-8 is a usage error, and nothing runs", async () => {
  const dir = await tempDir();
  try {
    const prefix = new TextEncoder().encode('{"path":"made');
    const suffix = new TextEncoder().encode('.txt","content":"x"}');
    const bytes = new Uint8Array([...prefix, 0xff, 0xfe, ...suffix]);
    const run = await runCli(["call", "write", "-", "--yes"], dir.path, bytes);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /^openwork-tools: standard input is not valid UTF-8\n/);
    assert.deepEqual(await readdir(dir.path), []);
  } finally {
    await dir.cleanup();
  }
});

test("CLI: an empty --root is a usage error, not the current directory", async () => {
  const dir = await tempDir();
  try {
    const run = await runCli(["call", "list", "{}", "--root", ""], dir.path, null);
    assert.equal(run.code, 2, run.stdout);
    assert.match(run.stderr, /^openwork-tools: --root must not be empty\n/);
    assert.equal(run.stdout, "");
  } finally {
    await dir.cleanup();
  }
});
