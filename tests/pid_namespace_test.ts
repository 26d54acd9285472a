/**
 * Every process a call starts ends with the call, without the sandbox: each
 * call runs in a PID namespace of its own where one can be had (bubblewrap,
 * user namespaces allowed), and the session says whether it does or the
 * process backend's sweep applies.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdir } from "node:fs/promises";
import process from "node:process";
import {
  type BashOutput,
  createMemoryFileSystem,
  createSession,
  finalizeToolset,
  type SessionOptions,
} from "../mod.ts";
import { createNodeProcessBackend } from "../node.ts";
import { sh, tempDir } from "./helpers.ts";

/** Why the namespace cannot be had here, or `false` (a machine without bwrap skips these tests). */
async function unavailable(): Promise<string | false> {
  if (process.platform !== "linux") return "PID namespaces are Linux-only";
  if ((await sh("command -v bwrap || true")).trim() === "") return "bwrap is not installed";
  return false;
}

const skip = await unavailable();

/** A tag unique to one run, for the argument of the process it leaves behind. */
function newTag(): string {
  return String(Math.floor(Math.random() * 1e8)).padStart(8, "0");
}

/** Live (non-zombie) processes whose command line starts with `sleep 12345.<tag>`. */
async function survivors(tag: string): Promise<string[]> {
  const out = await sh(
    'for pid in $(pgrep -f "^sleep 12345\\.$1"); do ' +
      'ps -o stat=,pid=,args= -p "$pid" 2>/dev/null; done || true',
    tag,
  );
  return out.split("\n").map((line) => line.trim()).filter((line) => line && !line.startsWith("Z"));
}

/** Ends what a failed run left behind: only its tagged processes. */
async function endTagged(tag: string): Promise<void> {
  await sh('pkill -9 -f "^sleep 12345\\.$1" || true', tag);
}

/** Two busy loops, one per core of a small machine, until `stop`. */
async function cpuHogs(): Promise<{ stop(): Promise<void> }> {
  const hogs: ChildProcess[] = [1, 2].map(() =>
    spawn("bash", ["-c", "while :; do :; done"], { stdio: "ignore" })
  );
  await Promise.all(hogs.map((hog) => new Promise((resolve) => hog.once("spawn", resolve))));
  return {
    async stop() {
      await Promise.all(hogs.map((hog) =>
        new Promise<void>((resolve) => {
          if (hog.exitCode !== null || hog.signalCode !== null) return resolve();
          hog.once("exit", () => resolve());
          hog.kill("SIGKILL");
        })
      ));
    },
  };
}

/** A session over a fresh directory, its bash toolset approving every command. */
async function bashSession(options: Partial<SessionOptions> = {}) {
  const dir = await tempDir();
  const session = await createSession({ workingDirectory: dir.path, ...options });
  const workingDirectory = session.workingDirectory;
  const toolset = finalizeToolset({ session, select: ["bash"] });
  return {
    dir: workingDirectory,
    session,
    run: async (command: string) => {
      const result = await toolset.call({
        name: "bash",
        input: { command },
        callId: "c",
        approve: () => Promise.resolve(true),
      });
      assert.ok(result.data !== undefined, result.output);
      return result.data as BashOutput;
    },
    cleanup: async () => {
      await session.processes.shutdown();
      await dir.cleanup();
    },
  };
}

/** Ways a process leaves a call, each a command that starts it and ends at once. */
const ESCAPES: readonly { name: string; command: (tag: string) => string }[] = [
  { name: "setsid -f sleep", command: (tag) => `setsid -f sleep 12345.${tag} >/dev/null 2>&1` },
  {
    name: "a setsid daemon that closes its descriptors",
    command: (tag) => `setsid sh -c 'exec >/dev/null 2>&1 </dev/null; sleep 12345.${tag}' &`,
  },
  {
    name: "env -i setsid -f sleep",
    command: (tag) => `env -i setsid -f sleep 12345.${tag} >/dev/null 2>&1`,
  },
  {
    name: "a double fork",
    command: (tag) => `( ( sleep 12345.${tag} >/dev/null 2>&1 & ) & )`,
  },
  { name: "nohup … &", command: (tag) => `nohup sleep 12345.${tag} >/dev/null 2>&1 &` },
];

/** How many calls each escape is tried in. */
const RUNS = 5;

for (const escape of ESCAPES) {
  test(
    `进程 (pid namespace): ${escape.name} ends with a call that ended normally, while two CPU hogs run`,
    { skip },
    async () => {
      const bash = await bashSession();
      const hogs = await cpuHogs();
      const tags: string[] = [];
      try {
        assert.equal(bash.session.processEnding, "pid-namespace");
        for (let run = 0; run < RUNS; run++) {
          const tag = newTag();
          tags.push(tag);
          const data = await bash.run(escape.command(tag));
          assert.equal(data.status, "exited");
          assert.equal(data.exit_code, 0, data.stderr);
          const left = await survivors(tag);
          assert.deepEqual(left, [], `run ${run + 1} of ${RUNS}: ${left.join("; ")}`);
        }
      } finally {
        await hogs.stop();
        for (const tag of tags) await endTagged(tag);
        await bash.cleanup();
      }
    },
  );
}

test(
  "进程 (pid namespace): the session reports the namespace where it can be had, and a call sees only its own processes",
  { skip },
  async () => {
    const bash = await bashSession();
    try {
      assert.equal(bash.session.processEnding, "pid-namespace");
      // The namespace's init is bwrap, the shell the second process; the host's are not there.
      // Builtins only, so that the shell and the init are all there is.
      const data = await bash.run(
        'n=0; for p in /proc/[0-9]*; do n=$((n + 1)); done; echo "$$ $n"',
      );
      assert.equal(data.stdout, "2 2\n");
    } finally {
      await bash.cleanup();
    }
  },
);

test(
  "进程 (pid namespace): the command runs as it would without one: same user, directory, environment and limits; its files are the user's",
  { skip },
  async () => {
    const plain = await bashSession({ processNamespace: false });
    const inside = await bashSession({
      workingDirectory: plain.dir,
      environment: plain.session.environment,
    });
    try {
      assert.equal(inside.session.processEnding, "pid-namespace");
      const command = "id -u; id -g; pwd; env | grep -v -e '^OPENWORK_CALL=' -e '^_=' | sort; " +
        "rm -f made; touch made; stat -c '%u:%g' made; ulimit -n; umask";
      const outside = await plain.run(command);
      const namespaced = await inside.run(command);
      assert.equal(outside.stderr, "");
      assert.equal(namespaced.stdout, outside.stdout);
      assert.equal(namespaced.stderr, "");
    } finally {
      await inside.cleanup();
      await plain.cleanup();
    }
  },
);

test(
  "进程 (pid namespace): where bwrap cannot make the namespace, the session falls back to the marker sweep, and calls still run",
  { skip: process.platform !== "linux" && "PID namespaces are Linux-only" },
  async () => {
    const dir = await tempDir();
    try {
      // First on the PATH: a bwrap that fails as one does where user namespaces are blocked.
      const bin = `${dir.path}/bin`;
      await mkdir(bin);
      await sh(
        `printf '#!/bin/sh\\necho "bwrap: No permissions to create new namespace" >&2\\nexit 1\\n' > "$1/bwrap"; ` +
          'chmod +x "$1/bwrap"',
        bin,
      );
      const bash = await bashSession({
        environment: { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` },
      });
      try {
        assert.equal(bash.session.processEnding, "marker-sweep");
        const data = await bash.run("echo $(($$ > 2))");
        assert.deepEqual([data.status, data.exit_code, data.stdout], ["exited", 0, "1\n"]);
      } finally {
        await bash.cleanup();
      }
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "进程 (pid namespace): a bwrap the working directory holds on the PATH (node_modules/.bin) never runs on the host: the one outside is used",
  { skip },
  async () => {
    const dir = await tempDir();
    const marker = `${dir.path}/ran`;
    try {
      const work = `${dir.path}/work`;
      const bin = `${work}/node_modules/.bin`;
      await mkdir(bin, { recursive: true });
      await sh(
        `printf '#!/bin/sh\necho ran >> "$2"\nexec "$@"\n' > "$1/bwrap"; chmod +x "$1/bwrap"`,
        bin,
        marker,
      );
      const session = await createSession({
        workingDirectory: work,
        environment: { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` },
      });
      try {
        assert.equal(session.processEnding, "pid-namespace");
        const result = await finalizeToolset({ session, select: ["bash"] }).call({
          name: "bash",
          input: { command: "echo $$" },
          callId: "c",
          approve: () => Promise.resolve(true),
        });
        assert.equal((result.data as BashOutput).stdout, "2\n");
        assert.equal((await sh('cat "$1" 2>/dev/null || echo none', marker)).trim(), "none");
      } finally {
        await session.processes.shutdown();
      }
    } finally {
      await dir.cleanup();
    }
  },
);

for (
  const [where, path] of [
    ["first on the PATH in node_modules/.bin", (work: string) => `${work}/node_modules/.bin:`],
    ["in the working directory, by an empty PATH entry", () => ":"],
  ] as const
) {
  test(
    `进程 (pid namespace): the probe that decides the namespace never runs a \`true\` the working directory holds (${where})`,
    { skip },
    async () => {
      const dir = await tempDir();
      try {
        const work = `${dir.path}/work`;
        const bin = `${work}/node_modules/.bin`;
        await mkdir(bin, { recursive: true });
        // A `true` that says it ran, in both places: only the PATH tells which one a lookup finds.
        for (const at of [bin, work]) {
          await sh(
            `printf '#!/bin/sh\necho ran >> "%s"\n' "$2" > "$1/true"; chmod +x "$1/true"`,
            at,
            `${dir.path}/ran`,
          );
        }
        // A backend of the host's own, so that this session probes afresh.
        const session = await createSession({
          workingDirectory: work,
          processes: createNodeProcessBackend({ graceMs: 300 }),
          environment: { PATH: `${path(work)}${process.env.PATH ?? "/usr/bin:/bin"}` },
        });
        try {
          assert.equal(session.processEnding, "pid-namespace");
          assert.equal(
            (await sh('cat "$1" 2>/dev/null || echo none', `${dir.path}/ran`)).trim(),
            "none",
          );
        } finally {
          await session.processes.shutdown();
        }
      } finally {
        await dir.cleanup();
      }
    },
  );
}

test(
  "进程 (pid namespace): processNamespace: false turns it off (the marker sweep), and the sandbox has its own",
  { skip },
  async () => {
    const off = await bashSession({ processNamespace: false });
    const sandboxed = await bashSession({ sandbox: true });
    try {
      assert.equal(off.session.processEnding, "marker-sweep");
      assert.notEqual((await off.run("echo $$")).stdout, "2\n");
      assert.equal(sandboxed.session.processEnding, "pid-namespace");
      assert.equal((await sandboxed.run("echo $$")).stdout, "2\n");
    } finally {
      await sandboxed.cleanup();
      await off.cleanup();
    }
  },
);

test(
  "进程 (pid namespace): a session whose working directory is not on this disk (an in-memory file system) takes the sweep, and later sessions still get the namespace",
  { skip },
  async () => {
    const filesystem = createMemoryFileSystem();
    const nowhere = `/owt-nowhere-${newTag()}`;
    filesystem.mkdirp(nowhere);
    const inMemory = await createSession({ workingDirectory: nowhere, filesystem });
    assert.equal(inMemory.processEnding, "marker-sweep");
    const bash = await bashSession();
    try {
      assert.equal(bash.session.processEnding, "pid-namespace");
    } finally {
      await bash.cleanup();
    }
  },
);

test(
  "进程 (pid namespace): the bash tool's description tells the model what the namespace changes, only where there is one",
  { skip },
  async () => {
    const dir = await tempDir();
    try {
      const description = async (options: Partial<SessionOptions>) => {
        const session = await createSession({ workingDirectory: dir.path, ...options });
        const toolset = finalizeToolset({ session, select: ["bash"] });
        return toolset.definitions[0].description;
      };
      const namespaced = await description({});
      const plain = await description({ processNamespace: false });
      assert.match(namespaced, /PID namespace of its own/);
      assert.match(namespaced, /ps and \/proc show only this call's processes/);
      assert.ok(namespaced.startsWith(plain), "the tool's own description, then the statement");
      assert.doesNotMatch(plain, /PID namespace/);
    } finally {
      await dir.cleanup();
    }
  },
);

test("进程 (pid namespace): a processNamespace option that is not a boolean is a TypeError naming it", async () => {
  await assert.rejects(
    // @ts-expect-error: the option is a boolean
    createSession({ workingDirectory: ".", processNamespace: "yes" }),
    (error: unknown) => error instanceof TypeError && /processNamespace/.test(error.message),
  );
});
