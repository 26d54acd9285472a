/**
 * The spec's §11 "取消与进程" (cancellation and processes) on both process
 * backends, and the bash tool's result rules.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import {
  type BashOutput,
  type CallRequest,
  createSession,
  finalizeToolset,
  type ProcessBackend,
  type ProcessHandle,
  SandboxUnavailableError,
  type ToolProgress,
  type ToolSessionContext,
  UnsupportedPlatformError,
} from "../mod.ts";
import { createNodeFileSystem } from "../node.ts";
import { processBackends, sh, tempDir, underDeno, until } from "./helpers.ts";

/** Pids of live (non-zombie) processes among `pids`. */
async function survivors(pids: number[]): Promise<number[]> {
  if (pids.length === 0) return [];
  const out = await sh('ps -o pid=,stat= -p "$1" || true', pids.join(","));
  return out.split("\n").map((l) => l.trim().split(/\s+/)).filter(([pid, stat]) =>
    pid && !stat?.startsWith("Z")
  )
    .map(([pid]) => Number(pid));
}

/** Live processes in process group `pgid`. */
async function groupMembers(pgid: number): Promise<number[]> {
  const out = await sh("ps -eo pid=,pgid=,stat=");
  return out.split("\n").map((l) => l.trim().split(/\s+/)).filter(([, g, stat]) =>
    Number(g) === pgid && !stat?.startsWith("Z")
  )
    .map(([pid]) => Number(pid));
}

/** A backend that records terminate() calls on the handles it gives out. */
function recording(
  inner: ProcessBackend,
): ProcessBackend & { terminations: number; pids: number[]; reset(): void } {
  const wrapper = {
    terminations: 0,
    pids: [] as number[],
    reset() {
      wrapper.terminations = 0;
      wrapper.pids = [];
    },
    get owned() {
      return inner.owned;
    },
    shutdown: () => inner.shutdown(),
    async spawn(request: Parameters<ProcessBackend["spawn"]>[0]): Promise<ProcessHandle> {
      const handle = await inner.spawn(request);
      wrapper.pids.push(handle.pid);
      return {
        ...handle,
        terminate: () => {
          wrapper.terminations++;
          return handle.terminate();
        },
      };
    },
  };
  return wrapper;
}

/**
 * How a session's calls end their processes: in a PID namespace of their
 * own (the default where one can be had), by the backend's sweep alone
 * (`processNamespace: false`), or in the sandbox.
 */
type Mode = "pid namespace" | "marker sweep" | "sandbox";

/**
 * Why `mode` cannot be tested here, or `false`: only a machine that is not
 * Linux, has no bwrap, or where bwrap cannot make its namespaces skips it.
 * A runtime refused the right to run bwrap fails the tests instead.
 */
async function unavailable(mode: Mode): Promise<string | false> {
  if (mode === "marker sweep") return false;
  if (process.platform !== "linux") return "PID namespaces are Linux-only";
  const dir = await tempDir();
  try {
    await createSession({ workingDirectory: dir.path, sandbox: true });
    return false;
  } catch (error) {
    if (!(error instanceof SandboxUnavailableError)) throw error;
    if (error.problem === "start_failed" && /allow-run|run access/.test(error.message)) {
      return false;
    }
    return `bwrap cannot run on this machine: ${error.message}`;
  } finally {
    await dir.cleanup();
  }
}

/**
 * A working directory whose `node_modules/.bin` holds a `bash` that notes in
 * `ran` (a file beside it, which even a sandboxed one may write) that it
 * ran, then runs the real one, as a repository's own could; `path` lists
 * that directory first, as `npm run` does. With `writable`, that `bash` is
 * in `writable/bin` instead, a directory outside the working directory that
 * a sandbox lets commands write.
 */
async function plantedBash(inWritable = false) {
  const { path: dir, cleanup } = await tempDir();
  const work = `${dir}/work`;
  const writable = `${dir}/writable`;
  const bin = inWritable ? `${writable}/bin` : `${work}/node_modules/.bin`;
  const real = (await sh('realpath "$(command -v bash)"')).trim();
  await sh(
    'mkdir -p "$1" "$4" && printf \'#!/bin/sh\\necho ran >> "%s"\\nexec "%s" "$@"\\n\' "$2" "$3" > "$1/bash" && ' +
      'chmod +x "$1/bash" && echo "a needle" > "$4/kept.txt"',
    bin,
    `${bin}/ran`,
    real,
    work,
  );
  return {
    dir,
    work,
    writable,
    path: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    ran: () =>
      sh('[ -e "$1" ] && echo yes || echo no', `${bin}/ran`).then((out) => out === "yes\n"),
    /**
     * A read-only call and one that writes, approving every question;
     * resolves the ids of the calls that were asked about.
     */
    async calls(session: ToolSessionContext): Promise<string[]> {
      const asked: string[] = [];
      const toolset = finalizeToolset({ session, select: ["bash"] });
      const call = (callId: string, command: string) =>
        toolset.call({
          name: "bash",
          input: { command },
          callId,
          approve: () => {
            asked.push(callId);
            return Promise.resolve(true);
          },
        });
      const read = await call("read", "cat kept.txt");
      assert.equal((read.data as BashOutput).stdout, "a needle\n", read.output);
      const write = await call("write", "echo made > made.txt && cat made.txt");
      assert.equal((write.data as BashOutput).stdout, "made\n", write.output);
      return asked;
    },
    cleanup,
  };
}

test("bash (default backend): a bash in the working directory's node_modules/.bin first on the session's PATH never runs; the session, a read-only call and a writing one run the real one", async () => {
  const planted = await plantedBash();
  try {
    const session = await createSession({
      workingDirectory: planted.work,
      environment: { PATH: planted.path, HOME: planted.dir, LANG: "C.UTF-8" },
    });
    // Both asked: a PATH that lists a directory inside the working directory proves no command.
    assert.deepEqual(await planted.calls(session), ["read", "write"]);
    await session.processes.shutdown();
    assert.equal(await planted.ran(), false, "the planted bash ran");
  } finally {
    await planted.cleanup();
  }
});

test("bash (default backend): where the session's PATH has a bash only inside the working directory, createSession refuses, naming bash, and nothing runs", async () => {
  const planted = await plantedBash();
  try {
    const bin = planted.path.split(":")[0];
    await assert.rejects(
      createSession({
        workingDirectory: planted.work,
        environment: { PATH: bin, HOME: planted.dir },
      }),
      (error: unknown) =>
        error instanceof UnsupportedPlatformError &&
        /bash was not found on the PATH .* outside the working directory/.test(error.message),
    );
    assert.equal(await planted.ran(), false, "the planted bash ran");
  } finally {
    await planted.cleanup();
  }
});

const MODES: readonly { mode: Mode; skip: string | false }[] = await Promise.all(
  (["pid namespace", "marker sweep", "sandbox"] as const).map(async (mode) => ({
    mode,
    skip: await unavailable(mode),
  })),
);

async function bashWorkspace(processes: ProcessBackend, mode: Mode = "pid namespace") {
  const dir = await tempDir();
  const session = await createSession({
    workingDirectory: dir.path,
    filesystem: createNodeFileSystem(),
    processes,
    environment: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir.path, LANG: "C.UTF-8" },
    processNamespace: mode !== "marker sweep",
    ...(mode === "sandbox" ? { sandbox: true } : {}),
  });
  // Where the namespace can be had it is used, never silently the sweep.
  const expected = mode === "marker sweep" || MODES.find((m) => m.mode === mode)?.skip !== false
    ? "marker-sweep"
    : "pid-namespace";
  assert.equal(session.processEnding, expected);
  const toolset = finalizeToolset({ session, select: ["bash"] });
  return {
    dir: dir.path,
    cleanup: dir.cleanup,
    session,
    // The person approves every command: these tests are about running it, not the policy.
    toolset: {
      ...toolset,
      call: (request: CallRequest) =>
        toolset.call({ approve: () => Promise.resolve(true), ...request }),
    },
  };
}

/** Processes that leave the shell's group in every way a command can, each a `sleep 300.<tag><n>`. */
function escapes(tag: string): string[] {
  const sleep = (n: number) => `sleep 300.${tag}${n}`;
  return [
    `${sleep(1)} &`,
    `nohup ${sleep(2)} >/dev/null 2>&1 &`,
    `${sleep(3)} & disown`,
    `( ( ${sleep(4)} & ) & )`,
    `setsid ${sleep(5)} >/dev/null 2>&1 &`,
    `setsid -f ${sleep(6)} >/dev/null 2>&1`,
    // A daemon: a new session, every descriptor closed.
    `setsid -f bash -c 'exec >/dev/null 2>&1 </dev/null; ${sleep(7)}'`,
    // A new session that keeps the call's pipes open.
    `setsid ${sleep(8)} &`,
  ];
}

/** Live (non-zombie) processes whose command line starts with `sleep 300.<tag>`, as "pid args" lines. */
async function tagged(tag: string): Promise<string[]> {
  const out = await sh(
    'for pid in $(pgrep -f "^sleep 300\\.$1"); do ' +
      'ps -o stat=,pid=,args= -p "$pid" 2>/dev/null; done || true',
    tag,
  );
  return out.split("\n").map((line) => line.trim()).filter((line) => line && !line.startsWith("Z"))
    .map((line) => line.slice(line.indexOf(" ") + 1).trim());
}

/** A tag unique to a test, for the arguments of the processes it starts. */
function newTag(): string {
  return String(Math.floor(Math.random() * 1e8)).padStart(8, "0");
}

/** Ends what a failed test left behind: only the processes it tagged. */
async function endTagged(tag: string): Promise<void> {
  const pids = (await tagged(tag)).map((line) => line.split(" ")[0]);
  if (pids.length > 0) await sh('kill -9 "$@" 2>/dev/null || true', ...pids);
}

for (const { name, create } of await processBackends()) {
  for (const { mode, skip } of MODES) {
    const label = `${name}, ${mode}`;
    test(`取消与进程 (${label}): cancelling a turn cancels all active calls at once`, {
      skip,
    }, async () => {
      const backend = recording(create());
      const ws = await bashWorkspace(backend, mode);
      backend.reset(); // what the session ran to make its namespace is not a call
      try {
        const turn = new AbortController();
        const calls = [1, 2, 3].map((i) =>
          ws.toolset.call({
            name: "bash",
            input: { command: `echo started ${i}; sleep 300` },
            callId: `c${i}`,
            signal: turn.signal,
          })
        );
        await until(() => backend.pids.length === 3, "three processes started");
        await until(
          async () =>
            (await Promise.all(backend.pids.map(groupMembers))).every((m) => m.length > 0),
          "every group has members",
        );
        turn.abort();
        const results = await Promise.all(calls);
        for (const result of results) {
          assert.equal(result.error?.code, "cancelled");
          assert.equal((result.data as BashOutput).status, "cancelled");
        }
        assert.deepEqual(await survivors(backend.pids), []);
        assert.equal(backend.owned, 0);
      } finally {
        await ws.cleanup();
      }
    });

    test(`取消与进程 (${label}): timeout and user cancel end in the same termination path`, {
      skip,
    }, async () => {
      const backend = recording(create());
      const ws = await bashWorkspace(backend, mode);
      backend.reset(); // what the session ran to make its namespace is not a call
      try {
        // A shell that ignores SIGTERM: both paths must escalate to SIGKILL through the same terminate().
        const stubborn = "trap '' TERM; echo ready; while :; do sleep 0.05; done";
        const timed = await ws.toolset.call({
          name: "bash",
          input: { command: stubborn, timeout_ms: 300 },
          callId: "t",
        });
        assert.equal((timed.data as BashOutput).status, "timed_out");
        assert.equal(backend.terminations, 1);
        const turn = new AbortController();
        // Cancelled once the shell has printed: its output is kept.
        const pending = ws.toolset.call({
          name: "bash",
          input: { command: stubborn },
          callId: "c",
          signal: turn.signal,
          progress: (event) => {
            if (event.kind === "stdout" && event.chunk.includes("ready")) turn.abort();
          },
        });
        const cancelled = await pending;
        assert.equal((cancelled.data as BashOutput).status, "cancelled");
        assert.equal(backend.terminations, 2);
        assert.match((cancelled.data as BashOutput).stdout, /ready/);
        assert.deepEqual(await survivors(backend.pids), []);
      } finally {
        await ws.cleanup();
      }
    });

    test(
      `取消与进程 (${label}): bash ends the whole process group and returns the output gathered before the kill`,
      {
        skip,
      },
      async () => {
        const backend = recording(create());
        const ws = await bashWorkspace(backend, mode);
        const tag = newTag();
        try {
          // Background children and grandchildren, one of which ignores SIGTERM. Found by their
          // arguments: in a PID namespace the command sees other pids than the host.
          const command = [
            `echo before-kill`,
            `echo error-side >&2`,
            `sleep 300.${tag}1 &`,
            `(trap '' TERM; sleep 300.${tag}2 & sleep 300.${tag}3) &`,
            `bash -c 'sleep 300.${tag}4 & wait' &`,
            `wait`,
          ].join("\n");
          const turn = new AbortController();
          const pending = ws.toolset.call({
            name: "bash",
            input: { command },
            callId: "c",
            signal: turn.signal,
          });
          await until(async () => (await tagged(tag)).length === 4, "four processes run");
          turn.abort();
          const result = await pending;
          const data = result.data as BashOutput;
          assert.equal(data.status, "cancelled");
          assert.match(data.stdout, /before-kill/);
          assert.match(data.stderr, /error-side/);
          assert.deepEqual(await tagged(tag), [], "no member of the group survives");
          assert.deepEqual(await survivors(backend.pids), []);
          assert.deepEqual(await groupMembers(backend.pids[0]), []);
        } finally {
          await endTagged(tag);
          await ws.cleanup();
        }
      },
    );

    test(`取消与进程 (${label}): background children do not outlive a normal exit`, {
      skip,
    }, async () => {
      const backend = recording(create());
      const ws = await bashWorkspace(backend, mode);
      backend.reset(); // what the session ran to make its namespace is not a call
      const tag = newTag();
      try {
        const result = await ws.toolset.call({
          name: "bash",
          input: {
            command: `sleep 300.${tag}1 & until pgrep -f '^sleep 300\\.${tag}' >/dev/null; ` +
              "do sleep 0.02; done; echo done",
          },
          callId: "c",
        });
        assert.equal((result.data as BashOutput).status, "exited");
        assert.equal((result.data as BashOutput).stdout, "done\n");
        assert.deepEqual(await tagged(tag), []);
      } finally {
        await endTagged(tag);
        await ws.cleanup();
      }
    });

    for (const ending of ["a normal exit", "a timeout", "a cancel"] as const) {
      test(
        `取消与进程 (${label}): no descendant outlives ${ending}, not even one in a new session`,
        {
          skip,
        },
        async () => {
          const backend = create();
          const ws = await bashWorkspace(backend, mode);
          const tag = newTag();
          try {
            const forms = escapes(tag);
            // Every form runs before the shell ends, so what is left afterwards escaped the call.
            const waitAll = `until [ "$(pgrep -fc '^sleep 300\\.${tag}')" -ge ${forms.length} ]; ` +
              "do sleep 0.02; done; echo started";
            const command = [...forms, waitAll, ending === "a normal exit" ? "exit 0" : "sleep 300"]
              .join("\n");
            const turn = new AbortController();
            const started = Date.now();
            const pending = ws.toolset.call({
              name: "bash",
              input: { command, ...(ending === "a timeout" ? { timeout_ms: 3000 } : {}) },
              callId: "c",
              signal: turn.signal,
            });
            if (ending === "a cancel") {
              await until(
                async () => (await tagged(tag)).length === forms.length,
                "every form runs",
              );
              turn.abort();
            }
            const result = await pending;
            const elapsed = Date.now() - started;
            const data = result.data as BashOutput;
            const left = await tagged(tag);
            assert.equal(
              data.status,
              {
                "a normal exit": "exited",
                "a timeout": "timed_out",
                "a cancel": "cancelled",
              }[ending],
            );
            assert.match(data.stdout, /started/);
            assert.deepEqual(left, [], `${left.length} of ${forms.length} survived`);
            assert.ok(elapsed < 15_000, `the call took ${elapsed} ms`);
            assert.equal(backend.owned, 0);
          } finally {
            await endTagged(tag);
            await ws.cleanup();
          }
        },
      );
    }

    test(`取消与进程 (${label}): the end of a call ends only the call's own processes`, {
      skip,
    }, async () => {
      const backend = create();
      const ws = await bashWorkspace(backend, mode);
      const tag = newTag();
      const detached = (n: number) => `setsid -f sleep 300.${tag}${n} >/dev/null 2>&1`;
      // What the command itself can see: in a PID namespace, only its own call's processes.
      const running = (n: number) =>
        `until pgrep -f '^sleep 300\\.${tag}${n}' >/dev/null; do sleep 0.02; done`;
      try {
        // Not started by any call: the same user's, in a session of its own.
        await sh(detached(9));
        const turn = new AbortController();
        const other = ws.toolset.call({
          name: "bash",
          input: { command: `${detached(1)}; echo started; sleep 300` },
          callId: "a",
          signal: turn.signal,
        });
        await until(async () => (await tagged(tag)).length === 2, "both processes run");
        const ended = await ws.toolset.call({
          name: "bash",
          input: { command: `${detached(2)}; ${running(2)}` },
          callId: "b",
        });
        assert.equal((ended.data as BashOutput).status, "exited");
        const digits = async () => (await tagged(tag)).map((line) => line.at(-1)).sort();
        assert.deepEqual(
          await digits(),
          ["1", "9"],
          "the concurrent call's process and the outside one live",
        );
        turn.abort();
        assert.equal(((await other).data as BashOutput).status, "cancelled");
        assert.deepEqual(await digits(), ["9"], "the outside process lives");
      } finally {
        await endTagged(tag);
        await ws.cleanup();
      }
    });

    test(
      `取消与进程 (${label}): a descendant that cleared its environment ends once it was seen in the parent chain`,
      {
        skip,
      },
      async () => {
        const backend = create();
        const ws = await bashWorkspace(backend, mode);
        const tag = newTag();
        try {
          // No marker and a session of its own; the shell's child while the call runs.
          const command = `env -i setsid sleep 300.${tag}1 >/dev/null 2>&1 &\n` +
            `until pgrep -f '^sleep 300\\.${tag}' >/dev/null; do sleep 0.02; done; sleep 1`;
          const result = await ws.toolset.call({ name: "bash", input: { command }, callId: "c" });
          assert.equal((result.data as BashOutput).status, "exited");
          assert.deepEqual(await tagged(tag), []);
        } finally {
          await endTagged(tag);
          await ws.cleanup();
        }
      },
    );

    test(`取消与进程 (${label}): an unconfirmed kill yields outcome_unknown and leaves no orphan`, {
      skip,
    }, async () => {
      const real = create();
      // The injected backend cannot confirm the end of a call: its handles' terminate() reports
      // failure once the session (and its namespace) is made.
      let confirms = true;
      const unconfirmed: ProcessBackend = {
        get owned() {
          return real.owned;
        },
        shutdown: () => real.shutdown(),
        async spawn(request) {
          const handle = await real.spawn(request);
          return {
            ...handle,
            terminate: () => confirms ? handle.terminate() : Promise.resolve(false),
          };
        },
      };
      const ws = await bashWorkspace(unconfirmed, mode);
      confirms = false;
      const tag = newTag();
      try {
        const result = await ws.toolset.call({
          name: "bash",
          input: { command: `echo partial; sleep 300.${tag}1`, timeout_ms: 300 },
          callId: "c",
        });
        assert.equal(result.ok, false);
        assert.equal(result.error?.code, "outcome_unknown");
        assert.equal((result.data as BashOutput).status, "outcome_unknown");
        assert.match((result.data as BashOutput).stdout, /partial/);
        // The backend still owns the group: it is not an orphan, and shutdown ends it.
        assert.equal(real.owned, 1);
        assert.equal((await tagged(tag)).length, 1);
        assert.equal(await real.shutdown(), true);
        assert.equal(real.owned, 0);
        assert.deepEqual(await tagged(tag), []);
      } finally {
        await endTagged(tag);
        await ws.cleanup();
      }
    });

    test(`取消与进程 (${label}): yes cannot exhaust memory`, { skip }, async () => {
      const ws = await bashWorkspace(create(), mode);
      try {
        const before = process.memoryUsage().rss;
        // 1 GB of `yes`, however long the machine takes to pass it (a timeout would make the
        // amount drained depend on the machine's speed).
        const result = await ws.toolset.call({
          name: "bash",
          input: { command: "yes | head -c 1000000000", timeout_ms: 120_000 },
          callId: "c",
        });
        const grown = process.memoryUsage().rss - before;
        const data = result.data as BashOutput;
        assert.equal(data.status, "exited");
        assert.ok(
          data.stdout_omitted_bytes > 50 * 1024 * 1024,
          `only ${data.stdout_omitted_bytes} bytes were drained`,
        );
        assert.ok(data.stdout.length < 40 * 1024, "only a head and a tail are kept");
        assert.match(data.stdout, /^y\ny\n[\s\S]*\[… \d+ bytes omitted …\]\n[\s\S]*y\n$/);
        // Keeping the output would grow memory by at least what was drained; garbage the
        // collector has not reclaimed yet may stand for a fraction of it.
        const bound = Math.max(64 * 1024 * 1024, data.stdout_omitted_bytes / 4);
        assert.ok(
          grown < bound,
          `rss grew by ${grown} bytes while ${data.stdout_omitted_bytes} were drained`,
        );
      } finally {
        await ws.cleanup();
      }
    });

    test(`工具语义 (${label}): a non-zero exit is a normal tool result`, { skip }, async () => {
      const ws = await bashWorkspace(create(), mode);
      try {
        const result = await ws.toolset.call({
          name: "bash",
          input: { command: "echo out; echo err >&2; exit 3" },
          callId: "c",
        });
        assert.equal(result.ok, true);
        assert.equal(result.error, undefined);
        const data = result.data as BashOutput;
        assert.deepEqual([data.status, data.exit_code, data.stdout, data.stderr], [
          "exited",
          3,
          "out\n",
          "err\n",
        ]);
        assert.match(result.output, /\[exit code 3\]/);
        const killed = await ws.toolset.call({
          name: "bash",
          input: { command: "kill -9 $$" },
          callId: "k",
        });
        assert.equal(killed.ok, true);
        const { exit_code, signal } = killed.data as BashOutput;
        // In a PID namespace the shell's parent is the namespace's init, which exits with the
        // shell's status as a shell reports it: 128 plus the signal's number.
        assert.deepEqual(
          { exit_code, signal },
          mode === "marker sweep" ? { exit_code: null, signal: "SIGKILL" } : {
            exit_code: 137,
            signal: null,
          },
        );
      } finally {
        await ws.cleanup();
      }
    });
  }

  test(`结果与 Artifact (${name}): a failing or slow progress sink leaves the result unchanged`, async () => {
    const ws = await bashWorkspace(create());
    try {
      const command = "for i in $(seq 1 200); do echo line $i; echo err $i >&2; done; exit 2";
      const plain = await ws.toolset.call({ name: "bash", input: { command }, callId: "a" });
      const seen: ToolProgress[] = [];
      const throwing = await ws.toolset.call({
        name: "bash",
        input: { command },
        callId: "b",
        progress: (event) => {
          seen.push(event);
          throw new Error("sink broke");
        },
      });
      const slow = await ws.toolset.call({
        name: "bash",
        input: { command },
        callId: "c",
        progress: () => new Promise((resolve) => setTimeout(resolve, 5000)),
      });
      const rejecting = await ws.toolset.call({
        name: "bash",
        input: { command },
        callId: "d",
        progress: () => Promise.reject(new Error("async sink broke")),
      });
      const strip = (d: BashOutput) => ({ ...d, duration_ms: 0 });
      for (const other of [throwing, slow, rejecting]) {
        assert.equal(other.ok, plain.ok);
        assert.deepEqual(strip(other.data as BashOutput), strip(plain.data as BashOutput));
        assert.equal(other.output, plain.output);
      }
      assert.ok(seen.length > 0, "progress was offered");
      assert.ok(
        (slow.data as BashOutput).duration_ms < 5000,
        "a slow sink does not hold the result",
      );
    } finally {
      await ws.cleanup();
    }
  });

  for (const { mode, skip } of MODES) {
    test(
      `bash (${name}, ${mode}): a bash in the working directory's node_modules/.bin first on the session's PATH never runs; the session, a read-only call and a writing one run the real one`,
      { skip },
      async () => {
        const planted = await plantedBash();
        try {
          const session = await createSession({
            workingDirectory: planted.work,
            processes: create(),
            environment: { PATH: planted.path, HOME: planted.dir, LANG: "C.UTF-8" },
            processNamespace: mode !== "marker sweep",
            ...(mode === "sandbox" ? { sandbox: true } : {}),
          });
          assert.deepEqual(await planted.calls(session), ["read", "write"]);
          await session.processes.shutdown();
          assert.equal(await planted.ran(), false, "the planted bash ran");
        } finally {
          await planted.cleanup();
        }
      },
    );
  }

  test(
    `bash (${name}, sandbox): a bash in a writable directory of the sandbox, first on the session's PATH, never runs; a read-only call approved without a question and an approved one run the real one`,
    { skip: MODES.find((m) => m.mode === "sandbox")?.skip ?? false },
    async () => {
      const planted = await plantedBash(true);
      try {
        const session = await createSession({
          workingDirectory: planted.work,
          processes: create(),
          environment: { PATH: planted.path, HOME: planted.dir, LANG: "C.UTF-8" },
          sandbox: { writable: [planted.writable] },
        });
        // That directory is outside the roots: the read-only command is proven, and not asked.
        assert.deepEqual(await planted.calls(session), ["write"]);
        await session.processes.shutdown();
        assert.equal(await planted.ran(), false, "the planted bash ran");
      } finally {
        await planted.cleanup();
      }
    },
  );

  test(`bash (${name}): progress streams chunks while the command runs; stdin is closed`, async () => {
    const ws = await bashWorkspace(create());
    try {
      const events: ToolProgress[] = [];
      let sawBeforeEnd = false;
      const result = await ws.toolset.call({
        name: "bash",
        input: {
          command: `echo first; while [ ! -e ${ws.dir}/go ]; do sleep 0.02; done; echo second`,
        },
        callId: "c",
        progress: async (event) => {
          events.push(event);
          if (event.kind === "stdout" && event.chunk.includes("first")) {
            sawBeforeEnd = true;
            await sh('touch "$1"', `${ws.dir}/go`);
          }
        },
      });
      assert.equal(sawBeforeEnd, true);
      assert.equal((result.data as BashOutput).stdout, "first\nsecond\n");
      const interactive = await ws.toolset.call({
        name: "bash",
        input: { command: 'read x; echo "got:[$x] $?"' },
        callId: "i",
      });
      assert.equal((interactive.data as BashOutput).stdout, "got:[] 1\n");
    } finally {
      await ws.cleanup();
    }
  });

  test(`bash (${name}): output cuts never split a UTF-8 character`, async () => {
    const ws = await bashWorkspace(create());
    try {
      // 40,000 three-byte characters on one line: both cuts fall inside characters.
      const result = await ws.toolset.call({
        name: "bash",
        input: {
          command: `printf 'x'; for i in $(seq 1 400); do printf '界%.0s' $(seq 1 100); done`,
        },
        callId: "c",
      });
      const data = result.data as BashOutput;
      assert.ok(!data.stdout.includes("\uFFFD"), "no replacement character");
      const [head, tail] = data.stdout.split(/\n\[… \d+ bytes omitted …\]\n/);
      const kept = new TextEncoder().encode(head).length + new TextEncoder().encode(tail).length;
      assert.equal(kept + data.stdout_omitted_bytes, 1 + 40_000 * 3);
    } finally {
      await ws.cleanup();
    }
  });

  test(`bash (${name}): stdout and stderr are pipes that nothing else can open`, async () => {
    const ws = await bashWorkspace(create());
    try {
      const result = await ws.toolset.call({
        name: "bash",
        input: {
          command: 'for fd in 1 2; do [ -p /dev/fd/$fd ] && echo "$fd: pipe"; ' +
            'case "$(readlink /proc/self/fd/$fd)" in *:\\[*\\]|*" (deleted)") ;; *) echo "$fd: named";; esac; done',
        },
        callId: "c",
      });
      const { stdout } = result.data as BashOutput;
      assert.ok(!stdout.includes("named"), stdout);
      // Deno's Node layer connects a child through a socket pair, not a pipe.
      if (name === "deno" || !underDeno) assert.equal(stdout, "1: pipe\n2: pipe\n");
    } finally {
      await ws.cleanup();
    }
  });

  test(`bash (${name}): a reader that fails closes the pipe, and the writer ends`, async () => {
    const backend = create();
    const dir = await tempDir();
    try {
      const session = await createSession({ workingDirectory: dir.path, processes: backend });
      const cwd = await session.resolvePath(".", "read", "must_exist");
      const handle = await backend.spawn({ command: "bash", args: ["-c", "yes"], cwd, env: {} });
      const failure = new Error("reader failed");
      let chunks = 0;
      const take = () => {
        chunks++;
        throw failure;
      };
      await assert.rejects(handle.stdout.forEach(take), failure);
      assert.equal(chunks, 1);
      // With its reader gone, `yes` dies of SIGPIPE instead of blocking on a full pipe.
      assert.deepEqual(await handle.exited, { code: null, signal: "SIGPIPE" });
      assert.equal(await handle.terminate(), true);
    } finally {
      await dir.cleanup();
    }
  });

  test(`bash (${name}): a pipe has one reader, and a pipe closed before reading ends at once`, async () => {
    const backend = create();
    const dir = await tempDir();
    try {
      const session = await createSession({ workingDirectory: dir.path, processes: backend });
      const cwd = await session.resolvePath(".", "read", "must_exist");
      const handle = await backend.spawn({
        command: "bash",
        args: ["-c", "echo out; sleep 0.2; echo err >&2"],
        cwd,
        env: {},
      });
      handle.stderr.close();
      let text = "";
      const decoder = new TextDecoder();
      const reading = handle.stdout.forEach((chunk) => (text += decoder.decode(chunk)));
      await assert.rejects(handle.stdout.forEach(() => {}), /already being read/);
      await handle.stderr.forEach(() => assert.fail("a closed pipe hands on nothing"));
      await reading;
      assert.equal(text, "out\n");
      // With stderr closed, the shell's last write ends it with SIGPIPE.
      assert.deepEqual(await handle.exited, { code: null, signal: "SIGPIPE" });
      assert.equal(await handle.terminate(), true);
    } finally {
      await dir.cleanup();
    }
  });

  test(`bash (${name}): a command that cannot start is spawn_failed`, async () => {
    const backend = create();
    const dir = await tempDir();
    // This process's open descriptors, counted by a child (Deno refuses /proc/self to narrow flags).
    const openFds = async () => Number(await sh('ls "/proc/$PPID/fd" | wc -l'));
    const before = await openFds();
    try {
      const session = await createSession({
        workingDirectory: dir.path,
        filesystem: createNodeFileSystem(),
        processes: backend,
      });
      // The checked directory disappears before the spawn: the process cannot start there.
      await sh('mkdir "$1"', `${dir.path}/gone`);
      const cwd = await session.resolvePath("gone", "read", "must_exist");
      await sh('rmdir "$1"', `${dir.path}/gone`);
      await assert.rejects(backend.spawn({ command: "bash", args: ["-c", "true"], cwd, env: {} }), {
        code: "spawn_failed",
      });
      assert.equal(backend.owned, 0);
      // No end of its pipes stays open (closing is asynchronous).
      await until(async () => (await openFds()) <= before, "descriptors closed");
    } finally {
      await dir.cleanup();
    }
  });
}
