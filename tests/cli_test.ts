/**
 * The `openwork-tools` command as a script or a person at a terminal uses it:
 * exit statuses, which stream carries what, JSON from stdin, `--yes`,
 * signals, help and version. The command runs as a subprocess: under Deno
 * with the flags of `deno task cli`, against the npm build as `node cli.js`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { FORGED_CARD, FORGED_CARD_SHOWN, sh, tempDir, underDeno } from "./helpers.ts";
import { cliCommand, ENV } from "./mcp_helpers.ts";

interface Run {
  /** The exit status, `null` when the command was killed by a signal. */
  readonly code: number | null;
  /** The signal that killed it, if one did. */
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
}

interface RunOptions {
  /** Written to the command's stdin, which is then closed; without it stdin is /dev/null. */
  readonly stdin?: string;
  /** Called once the command has started. */
  readonly started?: (child: ChildProcess) => void;
}

function runCli(args: readonly string[], cwd: string, options: RunOptions = {}): Promise<Run> {
  const { command, args: base } = cliCommand();
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...base, ...args], {
      cwd,
      env: ENV,
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    if (options.stdin !== undefined) child.stdin!.end(options.stdin);
    options.started?.(child);
  });
}

/**
 * Live (non-zombie) processes whose command line is exactly `args`: how a
 * test finds a call's processes, in its group or out of it, whatever pids
 * the command saw (in a PID namespace of its own, not the host's).
 */
async function liveWithArgs(args: string): Promise<number> {
  const out = await sh(
    "ps -eo stat=,args= | awk '$1 !~ /^Z/ { $1 = \"\"; print substr($0, 2) }' | " +
      'grep -cxF "$1" || true',
    args,
  );
  return Number(out.trim());
}

/** A duration no other process sleeps, to find a call's processes by. */
function uniqueNap(): string {
  return (300 + Math.random()).toFixed(6);
}

/** Polls for a pid a command wrote to `path`. */
async function pidIn(path: string): Promise<number> {
  for (let i = 0; i < 1000; i++) {
    const pid = Number((await readFile(path, "utf8").catch(() => "")).trim());
    if (pid > 0) return pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no pid in ${path}`);
}

test("CLI: call exits 0 on ok, 1 on a tool error, 2 on a usage error, and errors go only to stderr", async () => {
  const dir = await tempDir();
  try {
    await writeFile(`${dir.path}/a.txt`, "alpha\n");
    const ok = await runCli(["call", "read", '{"path":"a.txt"}'], dir.path);
    assert.deepEqual(ok, { code: 0, signal: null, stdout: "     1\talpha\n", stderr: "" });

    const missing = await runCli(["call", "read", '{"path":"missing.txt"}'], dir.path);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, "");
    assert.match(missing.stderr, /^Error \(not_found\): .*missing\.txt/);

    for (
      const [args, pattern] of [
        [["call", "read", '{"path":3}'], /^Error \(invalid_input\): .*\npath: expected string/],
        [["call", "raed", '{"path":"a.txt"}'], /^Error \(unknown_tool\): .*raed/],
        [["call", "bash", '{"command":""}'], /^Error \(invalid_input\)/],
        [["call", "read", "{bad"], /^openwork-tools: the JSON argument does not parse/],
        [["call", "read", "--bogus", "{}"], /^openwork-tools: Unknown option '--bogus'/],
        [["call"], /^openwork-tools: call takes a tool name and one JSON argument/],
        [["tools", "--yes"], /^openwork-tools: --yes is an option of call/],
        [
          ["call", "read", "--search-index", "{}"],
          /^openwork-tools: --search-index is an option of mcp/,
        ],
        [
          ["tools", "--no-search-index"],
          /^openwork-tools: --no-search-index is an option of mcp/,
        ],
        [
          ["mcp", "--search-index", "--no-search-index"],
          /^openwork-tools: --search-index and --no-search-index exclude each other/,
        ],
        [[], /^openwork-tools — .*\n\nUsage:/],
      ] as [string[], RegExp][]
    ) {
      const run = await runCli(args, dir.path);
      assert.equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
      assert.equal(run.stdout, "", args.join(" "));
      assert.match(run.stderr, pattern, args.join(" "));
    }
  } finally {
    await dir.cleanup();
  }
});

test("CLI: call bash exits with the command's status, 128+n when a signal ends it, 124 on timeout, and shows its output once", async () => {
  const dir = await tempDir();
  try {
    const three = await runCli([
      "call",
      "bash",
      '{"command":"echo out; echo err >&2; exit 3"}',
      "--yes",
    ], dir.path);
    assert.deepEqual(three, { code: 3, signal: null, stdout: "out\n", stderr: "err\n" });

    const lines = await runCli([
      "call",
      "bash",
      '{"command":"for i in 1 2 3; do echo line $i; done"}',
      "--yes",
    ], dir.path);
    assert.deepEqual(lines, {
      code: 0,
      signal: null,
      stdout: "line 1\nline 2\nline 3\n",
      stderr: "",
    });

    const killed = await runCli(["call", "bash", '{"command":"kill -KILL $$"}', "--yes"], dir.path);
    assert.deepEqual([killed.code, killed.stdout, killed.stderr], [128 + 9, "", ""]);
    const terminated = await runCli([
      "call",
      "bash",
      '{"command":"kill -TERM $$"}',
      "--yes",
    ], dir.path);
    assert.equal(terminated.code, 128 + 15);

    const nap = uniqueNap();
    const timedOut = await runCli([
      "call",
      "bash",
      `{"command":"echo before; sleep ${nap} & sleep ${nap}","timeout_ms":300}`,
      "--yes",
    ], dir.path);
    assert.equal(timedOut.code, 124, timedOut.stderr);
    assert.equal(timedOut.stdout, "before\n", "the output so far, once");
    assert.match(timedOut.stderr, /^Error \(timed_out\): The command timed out/);
    assert.equal(timedOut.stderr.trim().split("\n").length, 1);
    assert.equal(await liveWithArgs(`sleep ${nap}`), 0, "the group is gone");
  } finally {
    await dir.cleanup();
  }
});

test("CLI: --json prints only the final result on stdout; bash keeps its exit status", async () => {
  const dir = await tempDir();
  try {
    const run = await runCli([
      "call",
      "bash",
      '{"command":"echo out; echo err >&2; exit 3"}',
      "--json",
      "--yes",
    ], dir.path);
    assert.equal(run.code, 3);
    assert.equal(run.stderr, "", "nothing streamed");
    const result = JSON.parse(run.stdout);
    assert.deepEqual(
      [result.ok, result.data.exit_code, result.data.stdout, result.data.stderr],
      [true, 3, "out\n", "err\n"],
    );

    const missing = await runCli(["call", "read", '{"path":"nope"}', "--json"], dir.path);
    assert.equal(missing.code, 1);
    assert.equal(JSON.parse(missing.stdout).error.code, "not_found");
    assert.match(missing.stderr, /^Error \(not_found\)/);
  } finally {
    await dir.cleanup();
  }
});

test("CLI: call NAME - reads the JSON input from stdin; JSON that does not parse is a usage error", async () => {
  const dir = await tempDir();
  try {
    await writeFile(`${dir.path}/a.txt`, "alpha\nbeta\n");
    const read = await runCli(["call", "read", "-"], dir.path, {
      stdin: '{"path":"a.txt","offset":1}\n',
    });
    assert.deepEqual([read.code, read.stdout, read.stderr], [0, "     2\tbeta\n", ""]);

    for (const stdin of ["{bad", ""]) {
      const bad = await runCli(["call", "read", "-"], dir.path, { stdin });
      assert.equal(bad.code, 2, JSON.stringify(stdin));
      assert.equal(bad.stdout, "");
      assert.match(bad.stderr, /^openwork-tools: the JSON from stdin does not parse: /);
      assert.equal(bad.stderr.trim().split("\n").length, 1, "one line");
    }

    // Input from stdin leaves no terminal to ask on: an ask is refused, --yes approves it.
    const refused = await runCli(["call", "write", "-"], dir.path, {
      stdin: '{"path":"b.txt","content":"b\\n"}',
    });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /pass --yes to approve it/);
    const approved = await runCli(["call", "write", "-", "--yes"], dir.path, {
      stdin: '{"path":"b.txt","content":"b\\n"}',
    });
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(await readFile(`${dir.path}/b.txt`, "utf8"), "b\n");
  } finally {
    await dir.cleanup();
  }
});

test("CLI: --yes approves what the policy asks about; without it and without a terminal the call is refused and says how to approve", async () => {
  const dir = await tempDir();
  try {
    const write = ["call", "write", '{"path":"w.txt","content":"w\\n"}'];
    const refused = await runCli(write, dir.path);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, "");
    assert.match(
      refused.stderr,
      /^Error \(denied\): write: write w\.txt needs approval .* no terminal to ask; pass --yes to approve it/,
    );
    assert.equal(await readFile(`${dir.path}/w.txt`, "utf8").catch(() => null), null);
    const yes = await runCli([...write, "-y"], dir.path);
    assert.equal(yes.code, 0, yes.stderr);
    assert.equal(await readFile(`${dir.path}/w.txt`, "utf8"), "w\n");

    const touch = ["call", "bash", '{"command":"touch t.txt"}'];
    const bashRefused = await runCli(touch, dir.path);
    assert.equal(bashRefused.code, 125, "refused: the command never ran");
    assert.match(bashRefused.stderr, /^Error \(denied\): bash: run `touch t\.txt` needs approval/);
    assert.equal(await readFile(`${dir.path}/t.txt`, "utf8").catch(() => null), null);
    const bashYes = await runCli([...touch, "--yes"], dir.path);
    assert.equal(bashYes.code, 0, bashYes.stderr);
    assert.equal(await readFile(`${dir.path}/t.txt`, "utf8"), "");

    // --yes answers asks only: what the mode denies stays denied.
    const plan = await runCli([...touch, "--yes", "--mode", "plan"], dir.path);
    assert.equal(plan.code, 125);
    assert.match(
      plan.stderr,
      /^Error \(denied\): bash: run `touch t\.txt` is not allowed in plan mode/,
    );
  } finally {
    await dir.cleanup();
  }
});

for (const [signal, status] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  test(`CLI: ${signal} cancels a running bash call, ends its process group, and exits ${status}`, async () => {
    const dir = await tempDir();
    try {
      const pidFile = `${dir.path}/pid`;
      // A duration no other process sleeps: its processes are found by it, in the group or out.
      const nap = (300 + Math.random()).toFixed(6);
      const run = await runCli(
        [
          "call",
          "bash",
          `{"command":"echo started; echo $$ > ${pidFile}; sleep ${nap} & setsid sleep ${nap} & sleep ${nap}"}`,
          "--yes",
        ],
        dir.path,
        {
          started: (child) => {
            // Sent by kill(1): Deno's child.kill() reports the signal it sent as the way the child ended.
            void pidIn(pidFile).then(() =>
              sh('kill -s "$1" "$2"', signal.slice(3), String(child.pid))
            );
          },
        },
      );
      assert.deepEqual([run.code, run.signal], [status, null], run.stderr);
      assert.equal(run.stdout, "started\n");
      assert.match(run.stderr, /^Error \(cancelled\): The command was cancelled/);
      const left = await sh('ps -eo args= | grep -xF "sleep $1" || true', nap);
      assert.equal(left, "", "no sleep of this call is left, in the group or out of it");
    } finally {
      await dir.cleanup();
    }
  });
}

test("CLI: a closed stdout cancels a bash call as SIGPIPE would end the command, and ends its group", async () => {
  const dir = await tempDir();
  try {
    const nap = uniqueNap();
    let started = false;
    const run = await runCli(
      ["call", "bash", `{"command":"exec yes ${nap}"}`, "--yes"],
      dir.path,
      {
        started: (child) => {
          child.stdout!.once("data", () => {
            started = true;
            child.stdout!.destroy();
          });
        },
      },
    );
    assert.deepEqual([run.code, run.signal], [128 + 13, null], run.stderr);
    assert.ok(started, run.stderr);
    assert.equal(await liveWithArgs(`yes ${nap}`), 0, "yes is gone");
  } finally {
    await dir.cleanup();
  }
});

test("CLI: help COMMAND and COMMAND --help show that command's help; version prints the manifest's version", async () => {
  const dir = await tempDir();
  try {
    const general = await runCli(["help"], dir.path);
    assert.equal(general.code, 0);
    assert.match(general.stdout, /^openwork-tools — [^]*Exit status:/);
    assert.deepEqual(await runCli(["--help"], dir.path), general);
    for (const command of ["call", "tools", "mcp", "help", "version"]) {
      const help = await runCli(["help", command], dir.path);
      assert.equal(help.code, 0, command);
      assert.match(help.stdout, new RegExp(`^Usage: openwork-tools ${command}`), command);
      assert.notEqual(help.stdout, general.stdout);
      assert.deepEqual(await runCli([command, "--help"], dir.path), help, command);
    }
    const call = await runCli(["help", "call"], dir.path);
    for (const documented of ["124", "125", "128+N", "130", "--yes", "--json", "'-'"]) {
      assert.ok(call.stdout.includes(documented), `help call documents ${documented}`);
    }
    const unknown = await runCli(["help", "frobnicate"], dir.path);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^openwork-tools: help takes one command: call, /);

    // The manifest the build ships: deno.json under Deno, the npm build's package.json under Node.
    const manifest = new URL(underDeno ? "../deno.json" : "../package.json", import.meta.url);
    const { version } = JSON.parse(await readFile(manifest, "utf8")) as { version: string };
    assert.match(version, /^\d+\.\d+\.\d+/);
    for (const args of [["version"], ["--version"], ["-V"]]) {
      const run = await runCli(args, dir.path);
      assert.deepEqual(run, { code: 0, signal: null, stdout: `${version}\n`, stderr: "" });
    }
  } finally {
    await dir.cleanup();
  }
});

/** Whether util-linux `script` is here to give the command a terminal. */
async function hasScript(): Promise<boolean> {
  return /util-linux/.test(await sh("script --version 2>&1 || true"));
}

/**
 * Runs the command on a pseudo-terminal (util-linux `script`); `answer`
 * is given the output so far and may return what to type next.
 */
function runInTerminal(
  args: readonly string[],
  cwd: string,
  answer: (output: string) => string | null,
): Promise<{ code: number | null; output: string }> {
  const { command, args: base } = cliCommand();
  const quoted = [command, ...base, ...args].map((word) => `'${word.replaceAll("'", `'\\''`)}'`);
  return new Promise((resolve, reject) => {
    // Through bash, as the tests may run bash only.
    const child = spawn(
      "bash",
      ["-c", 'exec script -qec "$1" /dev/null', "bash", quoted.join(" ")],
      {
        cwd,
        env: ENV,
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      // Deno's own permission prompt would wait on the terminal: script ends it, and the test fails.
      if (/Deno requests/.test(output)) {
        child.kill("SIGTERM");
        return;
      }
      const typed = answer(output);
      if (typed !== null) child.stdin.write(typed);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

test("CLI: at a terminal, the approval question shows the command with its control, bidi and invisible characters escaped, and yes runs exactly that command", async (t) => {
  if (!(await hasScript())) return t.skip("needs util-linux script for a terminal");
  const dir = await tempDir();
  try {
    const asked = "(bash.not_proven_read_only) [y/N] ";
    const answer = (typed: string) => {
      let done = false;
      return (output: string) => {
        if (done || !output.includes(asked)) return null;
        done = true;
        return typed;
      };
    };
    const call = ["call", "bash", JSON.stringify({ command: FORGED_CARD })];
    const approved = await runInTerminal(call, dir.path, answer("y\r"));
    assert.equal(approved.code, 0, approved.output);
    const question = approved.output.slice(0, approved.output.indexOf(asked) + asked.length);
    assert.ok(
      question.includes(`Allow bash: run \`${FORGED_CARD_SHOWN}\`? ${asked}`),
      JSON.stringify(question),
    );
    for (
      const raw of ["\u001b[2K", "\u001b[8m", "\rAllow", "\u202e", "\u2066", "\u200b", "\u2028"]
    ) {
      assert.ok(!approved.output.includes(raw), `${JSON.stringify(raw)} reached the terminal`);
    }
    // What ran is the command as written: both lines, the reversed name included.
    assert.equal(await readFile(`${dir.path}/pwned`, "utf8"), "");
    assert.equal(await readFile(`${dir.path}/b\u202eidi`, "utf8"), "");

    // A long command is shown whole on a line of its own; the question names its length.
    const long = `true ${"x".repeat(300)} \u001b[8m; touch hidden`;
    const declined = await runInTerminal(
      ["call", "bash", JSON.stringify({ command: long })],
      dir.path,
      answer("n\r"),
    );
    assert.equal(declined.code, 125, declined.output);
    assert.match(
      declined.output,
      new RegExp(
        "bash: run this command \\(324 characters, shown in full on the next line\\):\\r?\\n" +
          `true x{300} \\\\u\\{1b\\}\\[8m; touch hidden\\r?\\n` +
          // The line editor's own cursor moves may open the line it asks on.
          "(?:\\u001b\\[\\d*[GJ])*Allow bash: run the command above \\(324 characters\\)\\? " +
          "\\(bash\\.not_proven_read_only\\) \\[y/N\\]",
      ),
    );
    assert.ok(!declined.output.includes("\u001b[8m"));
    assert.equal(await readFile(`${dir.path}/hidden`, "utf8").catch(() => null), null);
  } finally {
    await dir.cleanup();
  }
});

test("CLI: at a terminal, an ask is a y/N question; Ctrl-C at the question cancels and exits 130; no runtime permission prompt appears", async (t) => {
  if (!(await hasScript())) return t.skip("needs util-linux script for a terminal");
  const dir = await tempDir();
  try {
    const answering = (typed: string) => {
      let asked = false;
      return (output: string) => {
        if (asked || !output.includes("[y/N]")) return null;
        asked = true;
        return typed;
      };
    };
    const write = ["call", "write", '{"path":"w.txt","content":"w\\n"}'];
    const declined = await runInTerminal(write, dir.path, answering("n\r"));
    assert.equal(declined.code, 1, declined.output);
    assert.match(declined.output, /Allow write: write w\.txt\? \(.*\) \[y\/N\]/);
    assert.match(declined.output, /Error \(denied\): write: write w\.txt was declined/);
    assert.equal(await readFile(`${dir.path}/w.txt`, "utf8").catch(() => null), null);

    const interrupted = await runInTerminal(write, dir.path, answering("\x03"));
    assert.equal(interrupted.code, 130, interrupted.output);
    assert.equal(await readFile(`${dir.path}/w.txt`, "utf8").catch(() => null), null);

    const approved = await runInTerminal(write, dir.path, answering("y\r"));
    assert.equal(approved.code, 0, approved.output);
    assert.equal(await readFile(`${dir.path}/w.txt`, "utf8"), "w\n");

    // Ending a timed-out command signals its group: under Deno, with the task's flags, without a prompt.
    const nap = uniqueNap();
    const timedOut = await runInTerminal(
      [
        "call",
        "bash",
        `{"command":"sleep ${nap} & sleep ${nap}","timeout_ms":200}`,
      ],
      dir.path,
      answering("y\r"),
    );
    assert.doesNotMatch(timedOut.output, /Deno requests/);
    assert.equal(timedOut.code, 124, timedOut.output);
    assert.match(timedOut.output, /Error \(timed_out\)/);
    assert.equal(await liveWithArgs(`sleep ${nap}`), 0, "the group is gone");
  } finally {
    await dir.cleanup();
  }
});

test(
  "CLI: call --sandbox runs bash in the sandbox (a write outside the working directory fails with EROFS, exit status the command's)",
  { skip: (await sh("command -v bwrap || true")).trim() === "" && "bwrap is not installed" },
  async () => {
    const dir = await tempDir();
    const outside = join(homedir(), `owt-sbx-${crypto.randomUUID()}`);
    try {
      const run = await runCli(
        [
          "call",
          "bash",
          JSON.stringify({ command: `echo in > in.txt && echo out > ${outside}` }),
          "--sandbox",
          "--yes",
        ],
        dir.path,
      );
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /Read-only file system/);
      assert.equal(await readFile(join(dir.path, "in.txt"), "utf8"), "in\n");
      await assert.rejects(readFile(outside), { code: "ENOENT" });
      const tools = await runCli(["tools", "--sandbox"], dir.path);
      assert.equal(tools.code, 0, tools.stderr);
      assert.match(tools.stdout, /every command runs in an OS sandbox \(bubblewrap\)/);
    } finally {
      await dir.cleanup();
    }
  },
);
