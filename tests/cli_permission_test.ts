/**
 * The CLI under the runtime's permission guard: `deno task cli` grants what
 * its documented commands need (`mcp --http` included), and a permission
 * Deno refuses is one line on stderr naming the missing flag, with exit
 * status 2 and no stack trace, in any command.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { sh, tempDir, underDeno } from "./helpers.ts";
import { cliCommand, cliPath, cliTaskFlags, ENV } from "./mcp_helpers.ts";
import { refusalLine } from "../src/cli/refusal.ts";

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Whether the MCP server said it was listening (it is then sent SIGTERM). */
  readonly served: boolean;
}

/** Runs a command; a server that reports its address is sent SIGTERM at once. */
function run(command: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let served = false;
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (!served && /MCP over HTTP at /.test(stderr)) {
        served = true;
        // By kill(1): Deno's child.kill() reports the signal it sent as the way the child ended.
        void sh('kill -s TERM "$1"', String(child.pid)).catch(reject);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr, served }));
  });
}

/** `deno run` of the CLI with the task's flags, less those that start with `without`. */
function denoCliWithout(without: string, args: readonly string[], cwd: string): Promise<Run> {
  const flags = cliTaskFlags().filter((flag) => !flag.startsWith(without));
  assert.ok(flags.includes("--no-prompt"), "a refusal must not become a prompt");
  return run("deno", ["run", "--quiet", ...flags, cliPath(), ...args], cwd);
}

/** Asserts one line on stderr, naming `flag`, with exit status 2 and nothing on stdout. */
function assertRefusal(result: Run, flag: string): void {
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stdout, "");
  const lines = result.stderr.split("\n");
  assert.equal(lines.length, 2, `one line on stderr: ${result.stderr}`);
  assert.equal(lines[1], "");
  assert.ok(lines[0].includes(flag), `names ${flag}: ${lines[0]}`);
  assert.doesNotMatch(lines[0], /Uncaught|\bat /);
}

test("CLI: mcp --http serves under the flags of `deno task cli` and ends on SIGTERM", async () => {
  const dir = await tempDir();
  try {
    const { command, args } = cliCommand();
    const result = await run(
      command,
      [...args, "mcp", "--http", "127.0.0.1:0", "--root", dir.path],
      dir.path,
    );
    assert.equal(result.served, true, result.stderr);
    assert.equal(result.code, 0, result.stderr);
  } finally {
    await dir.cleanup();
  }
});

test(
  "CLI: mcp --http without Deno's net permission exits 2 with one line naming --allow-net",
  { skip: !underDeno && "Deno's permission flags" },
  async () => {
    const dir = await tempDir();
    try {
      const result = await denoCliWithout(
        "--allow-net",
        ["mcp", "--http", "127.0.0.1:0", "--root", dir.path],
        dir.path,
      );
      assert.equal(result.served, false, "the server did not start");
      assertRefusal(result, "--allow-net");
      assert.match(result.stderr, /^openwork-tools: Deno refused net access to 127\.0\.0\.1:0: /);
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "CLI: call without the Deno permission it needs exits 2 with one line naming the flag",
  { skip: !underDeno && "Deno's permission flags" },
  async () => {
    const dir = await tempDir();
    try {
      const write = await denoCliWithout(
        "--allow-write",
        ["call", "write", '{"path":"made.txt","content":"x"}', "--yes"],
        dir.path,
      );
      assertRefusal(write, "--allow-write");
      // The file backend needs write of its link to /proc/self/fd before any call: the session
      // is refused as it starts, naming the link's flags.
      assert.match(write.stderr, /^openwork-tools: The file backend cannot verify what it opens/);
      assert.match(write.stderr, /--allow-write=\/tmp\/openwork-tools-fd-\d+/);
      const made = await stat(`${dir.path}/made.txt`).then(() => true, () => false);
      assert.equal(made, false);

      const bash = await denoCliWithout(
        "--allow-run",
        ["call", "bash", '{"command":"echo hi"}', "--yes"],
        dir.path,
      );
      assertRefusal(bash, "--allow-run");
    } finally {
      await dir.cleanup();
    }
  },
);

test("CLI: a refusal is told from other errors by the runtime's error, the flag read from its message", () => {
  const refusal = (message: string, name = "NotCapable") =>
    Object.assign(new Error(message), { name });
  const net = refusal('Requires net access to "0.0.0.0:80", run again with the --allow-net flag');
  assert.equal(
    refusalLine(net),
    "openwork-tools: Deno refused net access to 0.0.0.0:80: run with --allow-net",
  );
  // Wrapped by the code that met it, as a tool's error wraps a backend's.
  assert.equal(
    refusalLine(
      new Error("Could not start bash", {
        cause: refusal("Requires run access, run again with the --allow-run flag"),
      }),
    ),
    "openwork-tools: Deno refused run access: run with --allow-run",
  );
  // Deno before 2 named the guard's refusal PermissionDenied.
  assert.match(
    refusalLine(
      refusal(
        'Requires env access to "HOME", run again with the --allow-env flag',
        "PermissionDenied",
      ),
    ) ?? "",
    /env access to HOME: run with --allow-env$/,
  );
  assert.equal(
    refusalLine(refusal("a message in a form\nnot known")),
    "openwork-tools: Deno refused an access: a message in a form not known",
  );
  // The operating system's refusal (Deno 2's PermissionDenied, Node's EACCES) is no missing flag.
  assert.equal(refusalLine(refusal("Permission denied (os error 13)", "PermissionDenied")), null);
  assert.equal(refusalLine(Object.assign(new Error("EACCES"), { code: "EACCES" })), null);
  assert.equal(refusalLine("NotCapable"), null);
});
