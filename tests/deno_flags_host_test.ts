/**
 * A Deno host run the documented way — a child `deno run` under exactly the
 * flags of `denoPermissionFlags`, with nothing else set up — gets what a
 * Node host gets: the environment bash needs, the user's git excludes, no
 * permission prompt on a terminal, and the package imported by name from a
 * module outside the repository.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFile, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { createSession, finalizeToolset } from "../mod.ts";
import { DENO_DIR, sh, symlinkOnDisk, tempDir, underDeno } from "./helpers.ts";
import { denoEntry } from "./deno_host.ts";

/** A byte stream of the child, as much of Deno's `ReadableStream` as is used. */
interface ByteSource {
  getReader(): { read(): Promise<{ value?: Uint8Array; done: boolean }> };
}

interface ChildLike {
  readonly stdout: ByteSource;
  readonly stderr: ByteSource;
  readonly status: Promise<{ code: number }>;
  kill(signal?: string): void;
}

interface DenoLike {
  execPath(): string;
  Command: new (
    program: string,
    options: {
      args: string[];
      cwd?: string;
      env?: Record<string, string>;
      clearEnv?: boolean;
      stdin: "null";
      stdout: "piped";
      stderr: "piped";
    },
  ) => { spawn(): ChildLike };
}

const skip = !underDeno && "runs a Deno host as a child process";

/** A fixture's path. */
function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

/** The whole text of a byte stream; `watch` sees the text so far after each chunk. */
async function textOf(stream: ByteSource, watch?: (text: string) => void): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    watch?.(text);
  }
  return text + decoder.decode();
}

/** What a child printed and how it ended. */
interface Ended {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Whether Deno asked for a permission (the child was then ended). */
  readonly prompted: boolean;
}

/** Without terminal colours and carriage returns. */
function plain(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, "").replace(/\r/g, "");
}

/** A word for a POSIX shell, quoted. */
function quoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Runs `deno <args>` and waits for it to end. On a terminal (`script` from
 * util-linux gives it one, so Deno could ask there), a permission prompt
 * ends the child at once: it would wait for an answer forever.
 */
async function runDeno(
  args: readonly string[],
  options: {
    env?: Record<string, string>;
    cwd?: string;
    terminal?: boolean;
    /** A file the child inherits open for appending on descriptor 7, without close-on-exec. */
    descriptor7?: string;
    /** A directory the child sees bind-mounted at another, in a mount namespace of its own. */
    bind?: readonly [string, string];
  } = {},
): Promise<Ended> {
  // Deno.Command, not node:child_process: Deno's Node layer rewrites commands that start Deno.
  const { Deno: deno } = globalThis as unknown as { Deno: DenoLike };
  const command = [deno.execPath(), ...args].map(quoted).join(" ");
  // The bash that starts the child is found on this process's PATH (a child's PATH may list a
  // repository's bash first), and gives the child its own.
  const env = options.env?.PATH === undefined ? options.env : {
    ...options.env,
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    OWT_CHILD_PATH: options.env.PATH,
  };
  const restore =
    '[ -n "${OWT_CHILD_PATH+x}" ] && { PATH=$OWT_CHILD_PATH; unset OWT_CHILD_PATH; }; ';
  const child = new deno.Command("bash", {
    args: options.terminal
      ? ["-c", restore + 'exec script -qec "$1" /dev/null', "bash", command]
      : options.descriptor7 !== undefined
      ? [
        "-c",
        restore + 'exec 7>>"$1"; shift; exec "$@"',
        "bash",
        options.descriptor7,
        deno.execPath(),
        ...args,
      ]
      : options.bind !== undefined
      ? [
        "-c",
        restore + "exec unshare -m --propagation private bash -c " +
        `'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$@"`,
        "bash",
        ...options.bind,
        deno.execPath(),
        ...args,
      ]
      : ["-c", restore + 'exec "$@"', "bash", deno.execPath(), ...args],
    cwd: options.cwd,
    env,
    clearEnv: options.env !== undefined,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let prompted = false;
  const watch = (text: string) => {
    if (!prompted && plain(text).includes("Deno requests")) {
      prompted = true;
      child.kill("SIGTERM");
    }
  };
  const [stdout, stderr, { code }] = await Promise.all([
    textOf(child.stdout, watch),
    textOf(child.stderr, watch),
    child.status,
  ]);
  return { code, stdout: plain(stdout), stderr: plain(stderr), prompted };
}

/** The last line a child printed, as JSON. */
function lastLine<T>(ended: Ended): T {
  assert.equal(ended.prompted, false, `Deno asked for a permission:\n${ended.stdout}`);
  assert.equal(ended.code, 0, ended.stderr + ended.stdout);
  return JSON.parse(ended.stdout.trim().split("\n").at(-1)!) as T;
}

/** The paths a flag names. */
function flagPaths(flags: readonly string[], name: string): string[] {
  const flag = flags.find((flag) => flag.startsWith(`--allow-${name}=`)) ?? "";
  return flag.slice(`--allow-${name}=`.length).split(",");
}

/** The real path of the bwrap on this process's PATH. */
async function bwrapPath(): Promise<string> {
  return (await sh('realpath "$(command -v bwrap)"')).trim();
}

/**
 * A host's environment with a chosen HOME and LANG: the test's own, less
 * what would point git elsewhere, with Deno's cache where it is now.
 */
function hostEnvironment(home: string): Record<string, string> {
  const env: Record<string, string> = { DENO_DIR };
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("XDG_") && !name.startsWith("GIT_")) {
      env[name] = value;
    }
  }
  return { ...env, HOME: home, LANG: "C.UTF-8", TZ: "Etc/GMT-3" };
}

/**
 * A working directory in a git repository, with a file the user's
 * `core.excludesFile` names (`*.secret`) beside one it does not, and a home
 * whose `.gitconfig` is a link (as dotfiles often are) to a file that names
 * that excludes file as `~/…`.
 */
async function repositoryAndHome(path: string): Promise<{ root: string; home: string }> {
  const root = join(path, "repo");
  const home = join(path, "home");
  await mkdir(join(root, ".git"), { recursive: true });
  await mkdir(join(home, "dotfiles"), { recursive: true });
  await writeFile(join(root, "kept.txt"), "a needle\n");
  await writeFile(join(root, "hidden.secret"), "a needle\n");
  await writeFile(join(home, "dotfiles", "gitconfig"), "[core]\n\texcludesFile = ~/.gitignore\n");
  await symlinkOnDisk(join(home, "dotfiles", "gitconfig"), join(home, ".gitconfig"));
  await writeFile(join(home, ".gitignore"), "*.secret\n");
  return { root, home };
}

test(
  "Deno host under the documented flags: bash sees HOME, LANG and TZ as the host has them",
  { skip },
  async () => {
    const dir = await tempDir();
    try {
      const { root, home } = await repositoryAndHome(dir.path);
      const env = hostEnvironment(home);
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        environment: env,
      });
      const seen = lastLine<{ bash: string[] }>(
        await runDeno(["run", "--quiet", ...flags, fixture("host_agent.ts"), root], { env }),
      );
      assert.deepEqual(seen.bash, [`HOME=${home}`, "LANG=C.UTF-8", "TZ=Etc/GMT-3"]);
    } finally {
      await dir.cleanup();
    }
  },
);

for (const namespace of [true, false]) {
  test(
    namespace
      ? "Deno host under the documented flags: every bash call runs in a PID namespace of its own (--allow-run=<bash's real path>,<bwrap's real path>)"
      : "Deno host under flags that do not let it run bwrap: the session ends a call's processes by the marker sweep, and bash runs",
    {
      skip: skip ||
        (namespace && (await sh("command -v bwrap || true")).trim() === "" &&
          "bwrap is not installed"),
    },
    async () => {
      const dir = await tempDir();
      try {
        const { root, home } = await repositoryAndHome(dir.path);
        const env = hostEnvironment(home);
        const flags = (await denoEntry()).denoPermissionFlags({
          workingDirectory: root,
          environment: env,
          ...(namespace ? {} : { processNamespace: false }),
        });
        const run = namespace ? [await bashPath(), await bwrapPath()] : [await bashPath()];
        assert.deepEqual(flagPaths(flags, "run"), run);
        const seen = lastLine<{ processEnding: string; bash: string[] }>(
          await runDeno(["run", "--quiet", ...flags, fixture("host_agent.ts"), root], { env }),
        );
        assert.equal(seen.processEnding, namespace ? "pid-namespace" : "marker-sweep");
        assert.deepEqual(seen.bash, [`HOME=${home}`, "LANG=C.UTF-8", "TZ=Etc/GMT-3"]);
      } finally {
        await dir.cleanup();
      }
    },
  );
}

test(
  "Deno host under the documented flags: glob and grep hide what the user's core.excludesFile names, as an unrestricted host does",
  { skip },
  async () => {
    const dir = await tempDir();
    try {
      const { root, home } = await repositoryAndHome(dir.path);
      const env = hostEnvironment(home);
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        environment: env,
      });
      const seen = lastLine<{ glob: string[]; grep: string[] }>(
        await runDeno(["run", "--quiet", ...flags, fixture("host_agent.ts"), root], { env }),
      );
      assert.deepEqual(seen.glob, ["kept.txt"]);
      assert.deepEqual(seen.grep, ["kept.txt"]);

      // The same tree in this process, which may read everything: the same answers.
      const session = await createSession({
        workingDirectory: root,
        environment: { PATH: env.PATH ?? "/usr/bin:/bin", HOME: home },
      });
      const toolset = finalizeToolset({ session });
      const glob = await toolset.call({ name: "glob", input: { pattern: "**/*" }, callId: "g" });
      assert.ok(glob.ok, glob.output);
      assert.deepEqual([...glob.data!.paths].sort(), seen.glob);
      const grep = await toolset.call({ name: "grep", input: { pattern: "needle" }, callId: "r" });
      assert.ok(grep.ok, grep.output);
      assert.deepEqual([...grep.data!.files!].sort(), seen.grep);
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "Deno host under the documented flags with sandbox: bash runs in bubblewrap (a write outside the working directory fails with EROFS, a descriptor the host inherited is closed inside)",
  {
    skip: skip ||
      ((await sh("command -v bwrap || true")).trim() === "" && "bwrap is not installed"),
  },
  async () => {
    const dir = await tempDir();
    try {
      const { root, home } = await repositoryAndHome(dir.path);
      const env = hostEnvironment(home);
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        environment: env,
        sandbox: true,
      });
      assert.deepEqual(flagPaths(flags, "run"), [await bashPath(), await bwrapPath()]);
      // Outside the working directory, on the read-only root: the user's home (/tmp is private inside).
      const outside = join(homedir(), `owt-sbx-${crypto.randomUUID()}`);
      // A file outside that the host holds open on descriptor 7 (inherited, not close-on-exec).
      const held = join(dir.path, "held.log");
      const seen = lastLine<{ error?: string; exit_code: number; stdout: string; stderr: string }>(
        await runDeno(["run", "--quiet", ...flags, fixture("sandbox_host.ts"), root, outside], {
          env,
          descriptor7: held,
        }),
      );
      assert.equal(seen.error, undefined);
      assert.equal(seen.stdout, "inside\n");
      assert.match(seen.stderr, /Read-only file system/);
      await assert.rejects(stat(outside), { code: "ENOENT" });
      assert.equal(await readFile(held, "utf8"), "", "the inherited descriptor was closed inside");
    } finally {
      await dir.cleanup();
    }
  },
);

/**
 * A repository whose `node_modules/.bin` holds a `bwrap` that notes in
 * `ran` that it ran, then runs the command it was given unconfined, as a
 * repository's own could; with the host's environment, that directory first
 * on its `PATH` (as `npm run` puts it).
 */
async function plantedBwrap(path: string) {
  const { root, home } = await repositoryAndHome(path);
  const bin = join(root, "node_modules", ".bin");
  const ran = join(path, "ran");
  await mkdir(bin, { recursive: true });
  await writeFile(
    join(bin, "bwrap"),
    `#!/bin/bash\necho ran >> ${quoted(ran)}\n` +
      'while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done; shift; exec "$@" </dev/null\n',
    { mode: 0o755 },
  );
  const env = hostEnvironment(home);
  env.PATH = `${bin}:${env.PATH ?? "/usr/bin:/bin"}`;
  const planted = async () => await stat(ran).then(() => true, () => false);
  return { root, env, planted };
}

test(
  "Deno host under the documented flags, a bwrap in the working directory's node_modules/.bin first on PATH: the flags grant the real one by its path, the session runs calls and the sandbox with it, and the planted one never runs",
  {
    skip: skip ||
      ((await sh("command -v bwrap || true")).trim() === "" && "bwrap is not installed"),
  },
  async () => {
    const dir = await tempDir();
    const outside = join(homedir(), `owt-sbx-${crypto.randomUUID()}`);
    try {
      const { root, env, planted } = await plantedBwrap(dir.path);
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        environment: env,
        sandbox: true,
      });
      const bwrap = await bwrapPath();
      assert.deepEqual(flagPaths(flags, "run"), [await bashPath(), bwrap]);
      assert.ok(flagPaths(flags, "read").includes(bwrap), flags.join(" "));
      const agent = lastLine<{ processEnding: string }>(
        await runDeno(["run", "--quiet", ...flags, fixture("host_agent.ts"), root], { env }),
      );
      assert.equal(agent.processEnding, "pid-namespace");
      const sandboxed = lastLine<{ error?: string; stdout: string; stderr: string }>(
        await runDeno(["run", "--quiet", ...flags, fixture("sandbox_host.ts"), root, outside], {
          env,
        }),
      );
      assert.equal(sandboxed.error, undefined);
      assert.equal(sandboxed.stdout, "inside\n");
      assert.match(sandboxed.stderr, /Read-only file system/);
      await assert.rejects(stat(outside), { code: "ENOENT" });
      assert.equal(await planted(), false, "the planted bwrap ran");
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "Deno host under flags that grant bwrap by name, a bwrap in the working directory's node_modules/.bin first on PATH: the sandbox is refused, calls take the marker sweep, and the planted one never runs",
  {
    skip: skip ||
      ((await sh("command -v bwrap || true")).trim() === "" && "bwrap is not installed"),
  },
  async () => {
    const dir = await tempDir();
    const outside = join(homedir(), `owt-sbx-${crypto.randomUUID()}`);
    try {
      const { root, env, planted } = await plantedBwrap(dir.path);
      const bwrap = await bwrapPath();
      // Flags written by hand, as they were once documented: bwrap by name, its directory unread.
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        environment: env,
        sandbox: true,
      }).map((flag) =>
        flag.startsWith("--allow-run=")
          ? "--allow-run=bash,bwrap"
          : flag.startsWith("--allow-read=")
          ? `--allow-read=${flagPaths([flag], "read").filter((path) => path !== bwrap).join(",")}`
          : flag
      );
      const agent = lastLine<{ processEnding: string }>(
        await runDeno(["run", "--quiet", ...flags, fixture("host_agent.ts"), root], { env }),
      );
      assert.equal(agent.processEnding, "marker-sweep");
      const sandboxed = lastLine<{ error?: string }>(
        await runDeno(["run", "--quiet", ...flags, fixture("sandbox_host.ts"), root, outside], {
          env,
        }),
      );
      assert.match(sandboxed.error ?? "", /sandbox needs bubblewrap/);
      await assert.rejects(stat(outside), { code: "ENOENT" });
      assert.equal(await planted(), false, "the planted bwrap ran");
    } finally {
      await dir.cleanup();
    }
  },
);

/** The real path of the bash on this process's PATH. */
async function bashPath(): Promise<string> {
  return (await sh('realpath "$(command -v bash)"')).trim();
}

/**
 * A repository whose `node_modules/.bin` holds a `bash` that notes in `ran`
 * (outside the repository) that it ran, then runs the real one, as a
 * repository's own could; with the host's environment, that directory first
 * on its `PATH` (as `npm run` puts it).
 */
async function plantedBash(path: string) {
  const { root, home } = await repositoryAndHome(path);
  const bin = join(root, "node_modules", ".bin");
  const ran = join(path, "ran");
  await mkdir(bin, { recursive: true });
  await writeFile(
    join(bin, "bash"),
    `#!/bin/sh\necho ran >> ${quoted(ran)}\nexec ${quoted(await bashPath())} "$@"\n`,
    { mode: 0o755 },
  );
  const env = hostEnvironment(home);
  env.PATH = `${bin}:${env.PATH ?? "/usr/bin:/bin"}`;
  const planted = async () => await stat(ran).then(() => true, () => false);
  return { root, env, planted };
}

/** A flag as flags written by hand were once documented: bash by name, read unscoped. */
function byName(flag: string): string {
  if (flag.startsWith("--allow-run=")) return "--allow-run=bash";
  return flag.startsWith("--allow-read=") ? "--allow-read" : flag;
}

/** What `planted_bash_agent.ts` prints. */
interface PlantedBashSeen {
  readonly processEnding?: string;
  readonly asked: string[];
  readonly read?: string;
  readonly write?: string;
  readonly error?: string;
}

for (const namespace of [true, false]) {
  test(
    "Deno host under the documented flags, a bash in the working directory's node_modules/.bin first on PATH: the flags grant the real one by its path, the session runs a read-only call and a writing one with it " +
      (namespace ? "(in a PID namespace)" : "(marker sweep)") + ", and the planted one never runs",
    {
      skip: skip ||
        (namespace && (await sh("command -v bwrap || true")).trim() === "" &&
          "bwrap is not installed"),
    },
    async () => {
      const dir = await tempDir();
      try {
        const { root, env, planted } = await plantedBash(dir.path);
        const flags = (await denoEntry()).denoPermissionFlags({
          workingDirectory: root,
          environment: env,
          processNamespace: namespace,
        });
        const bash = await bashPath();
        assert.deepEqual(
          flagPaths(flags, "run"),
          namespace ? [bash, await bwrapPath()] : [bash],
        );
        assert.ok(flagPaths(flags, "read").includes(bash), flags.join(" "));
        const seen = lastLine<PlantedBashSeen>(
          await runDeno([
            "run",
            "--quiet",
            ...flags,
            fixture("planted_bash_agent.ts"),
            root,
            namespace ? "namespace" : "sweep",
          ], { env }),
        );
        assert.equal(seen.error, undefined);
        assert.equal(seen.processEnding, namespace ? "pid-namespace" : "marker-sweep");
        // Asked both: a PATH that lists a directory inside the working directory proves no command.
        assert.deepEqual(seen.asked, ["read", "write", "after"]);
        assert.equal(seen.read, "a needle\n");
        assert.equal(seen.write, "made\n");
        assert.equal(await planted(), false, "the planted bash ran");
      } finally {
        await dir.cleanup();
      }
    },
  );
}

test(
  "Deno host under flags that grant bash by name and read everywhere, a bash in the working directory's node_modules/.bin first on PATH: Deno's grant is the planted one, createSession refuses, naming the fix, and it never runs",
  { skip },
  async () => {
    const dir = await tempDir();
    try {
      const { root, env, planted } = await plantedBash(dir.path);
      // Flags written by hand, as they were once documented: bash by name, read unscoped.
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        environment: env,
        processNamespace: false,
      }).map(byName);
      const seen = lastLine<PlantedBashSeen>(
        await runDeno(["run", "--quiet", ...flags, fixture("planted_bash_agent.ts"), root], {
          env,
        }),
      );
      assert.match(seen.error ?? "", /^createSession: Deno was granted to run bash by name/);
      assert.deepEqual(seen.asked, []);
      assert.equal(await planted(), false, "the planted bash ran");
    } finally {
      await dir.cleanup();
    }
  },
);

for (const through of [false, true]) {
  test(
    "Deno host under flags that grant bash by name and read everywhere, a PATH entry " +
      (through
        ? "written through a link to the working directory, "
        : "in the working directory ") +
      "that links to the system's bash directory first: bash is not run through it, so a command that puts its own bash there never gets it run",
    { skip },
    async () => {
      const dir = await tempDir();
      try {
        const { root, home } = await repositoryAndHome(dir.path);
        const system = dirname(await bashPath());
        await symlinkOnDisk(system, join(root, "tools"));
        const ran = join(dir.path, "ran");
        const env = hostEnvironment(home);
        // Written through a link outside to the working directory (a shell's logical $PWD), or not.
        const project = join(dir.path, "project");
        await symlinkOnDisk(root, project);
        const entry = join(through ? project : root, "tools");
        env.PATH = `${entry}:${env.PATH ?? "/usr/bin:/bin"}`;
        const flags = (await denoEntry()).denoPermissionFlags({
          workingDirectory: root,
          environment: env,
          processNamespace: false,
        }).map(byName);
        // The link replaced by a directory with a bash of the command's own.
        const swap = `rm tools && mkdir tools && printf '#!/bin/sh\\necho ran >> ${ran}\\n` +
          `exec ${system}/bash "$@"\\n' > tools/bash && chmod +x tools/bash && echo swapped`;
        const seen = lastLine<PlantedBashSeen>(
          await runDeno([
            "run",
            "--quiet",
            ...flags,
            fixture("planted_bash_agent.ts"),
            root,
            "sweep",
            swap,
          ], { env }),
        );
        // Deno's grant by name is the link's bash: the session refuses rather than run it.
        assert.match(seen.error ?? "", /^createSession: Deno was granted to run bash by name/);
        assert.equal(
          await stat(ran).then(() => true, () => false),
          false,
          "the swapped-in bash ran",
        );
      } finally {
        await dir.cleanup();
      }
    },
  );
}

/** Whether this process may make a mount namespace of its own and bind mounts in it. */
const bindMounts = underDeno &&
  (await sh(
      "unshare -m --propagation private mount --bind /tmp /mnt 2>/dev/null && echo yes || true",
    ))
      .trim() === "yes";

test(
  "Deno host (-A) whose PATH lists the working directory's bin through a bind mount of it: the bash and the bwrap there never run (the mount table names the view)",
  {
    skip: skip || (!bindMounts && "no mount namespace or bind mount here") ||
      ((await sh("command -v bwrap || true")).trim() === "" && "bwrap is not installed"),
  },
  async () => {
    const dir = await tempDir();
    try {
      const { root } = await repositoryAndHome(dir.path);
      const ran = join(dir.path, "ran");
      const real = await bashPath();
      for (const name of ["bash", "bwrap"]) {
        const target = name === "bash" ? real : (await sh('realpath "$(command -v bwrap)"')).trim();
        await mkdir(join(root, "bin"), { recursive: true });
        await writeFile(
          join(root, "bin", name),
          `#!/bin/sh\necho ${name} >> ${quoted(ran)}\nexec ${quoted(target)} "$@"\n`,
          { mode: 0o755 },
        );
      }
      const view = join(dir.path, "view");
      await mkdir(view);
      const env = { ...process.env as Record<string, string>, PATH: `${view}/bin:/usr/bin:/bin` };
      const seen = lastLine<PlantedBashSeen>(
        await runDeno(
          ["run", "-A", "--quiet", fixture("planted_bash_agent.ts"), root, "namespace"],
          {
            env,
            bind: [root, view],
          },
        ),
      );
      assert.equal(seen.error, undefined);
      assert.equal(seen.processEnding, "pid-namespace");
      assert.equal(await stat(ran).then(() => true, () => false), false, "a planted program ran");
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "denoPermissionFlags: a git config that names a directory as core.excludesFile (/, ~), or a dotfile that links to a directory, grants no read of it",
  { skip },
  async () => {
    const dir = await tempDir();
    try {
      const root = join(dir.path, "repo");
      await mkdir(root);
      const flagsFor = async (environment: Record<string, string>) =>
        flagPaths(
          (await denoEntry()).denoPermissionFlags({
            workingDirectory: root,
            descriptorLink: join(dir.path, "link"),
            environment,
          }),
          "read",
        );

      const rooted = join(dir.path, "rooted");
      await mkdir(rooted);
      await writeFile(join(rooted, ".gitconfig"), "[core]\n\texcludesFile = /\n");
      const read = await flagsFor({ HOME: rooted });
      assert.ok(!read.includes("/"), read.join(" "));
      assert.ok(read.includes(join(rooted, ".gitconfig")), read.join(" "));

      // The XDG config (here in the repository) names the home.
      const tilde = join(dir.path, "tilde");
      await mkdir(join(root, "config", "git"), { recursive: true });
      await mkdir(tilde);
      await writeFile(join(root, "config", "git", "config"), "[core]\n\texcludesFile = ~\n");
      const fromRepository = await flagsFor({ HOME: tilde, XDG_CONFIG_HOME: join(root, "config") });
      assert.ok(!fromRepository.includes(tilde), fromRepository.join(" "));

      // A .gitconfig that is a link to a directory: Deno would grant all below it, as written.
      const linked = join(dir.path, "linked");
      await mkdir(linked);
      await symlinkOnDisk("/", join(linked, ".gitconfig"));
      const throughLink = await flagsFor({ HOME: linked });
      assert.ok(!throughLink.includes(join(linked, ".gitconfig")), throughLink.join(" "));

      // A regular excludes file is still granted.
      const plain = join(dir.path, "plain");
      await mkdir(plain);
      await writeFile(join(plain, ".gitconfig"), "[core]\n\texcludesFile = ~/.ignore\n");
      await writeFile(join(plain, ".ignore"), "*.secret\n");
      assert.ok((await flagsFor({ HOME: plain })).includes(join(plain, ".ignore")));
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "denoPermissionFlags: a working directory, skill root or link whose path holds a comma is refused, not split into other grants",
  { skip },
  async () => {
    const dir = await tempDir();
    try {
      const { denoPermissionFlags } = await denoEntry();
      const link = join(dir.path, "link");
      const cases = [
        { workingDirectory: join(dir.path, "a,.."), descriptorLink: link },
        { workingDirectory: dir.path, skillRoot: `${dir.path}/skills,/`, descriptorLink: link },
        { workingDirectory: dir.path, descriptorLink: `${link},/etc` },
      ];
      for (const options of cases) {
        assert.throws(
          () => denoPermissionFlags({ ...options, environment: {} }),
          (error: unknown) => error instanceof TypeError && /comma/.test(error.message),
          JSON.stringify(options),
        );
      }
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "Deno host under the documented flags, on a terminal: what the flags do not grant is refused, never asked",
  { skip },
  async () => {
    const dir = await tempDir();
    try {
      const root = join(dir.path, "repo");
      const second = join(dir.path, "second");
      const outside = join(dir.path, "outside.txt");
      await mkdir(root);
      await mkdir(second);
      await writeFile(join(root, "a.txt"), "a needle\n");
      await writeFile(join(second, "secret.txt"), "secret\n");
      await writeFile(outside, "outside\n");
      // The second root is the session's, not the flags'. No cache directory: the index keeps to
      // memory, and the user's cache is left alone.
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        cacheDirectory: null,
      });
      const outcomes = lastLine<Record<string, string>>(
        await runDeno(
          ["run", "--quiet", ...flags, fixture("terminal_agent.ts"), root, second, outside],
          { terminal: true },
        ),
      );
      assert.deepEqual(outcomes, {
        read_second_root: "runtime_permission_denied",
        list_second_root: "runtime_permission_denied",
        grep: "ok",
        bash: "ok",
        read_outside: "NotCapable",
        env_unlisted: "NotCapable",
        run_unlisted: "NotCapable",
      });
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "沙箱 (Deno host on a terminal, under the flags of denoPermissionFlags with sandbox): no command can push input into the host's terminal (TIOCSTI), sandboxed or not",
  { skip },
  async () => {
    const dir = await tempDir();
    try {
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: dir.path,
        sandbox: true,
        cacheDirectory: null,
      });
      const outcomes = lastLine<Record<string, string>>(
        await runDeno(["run", "--quiet", ...flags, fixture("tty_agent.ts"), dir.path], {
          terminal: true,
        }),
      );
      // Every call starts in a session of its own: no controlling terminal to open, and standard
      // input is not a terminal.
      assert.deepEqual(outcomes, {
        host: "terminal",
        sandbox: "ENXIO ENOTTY",
        namespace: "ENXIO ENOTTY",
        sweep: "ENXIO ENOTTY",
      });
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "denoPermissionFlags in a Deno host with few permissions, on a terminal: it asks for nothing, and leaves out what it cannot tell",
  { skip },
  async () => {
    const dir = await tempDir();
    try {
      const host = fixture("flags_host.ts");
      const none = lastLine<{ error?: string }>(
        await runDeno(["run", "--quiet", host, dir.path], { terminal: true }),
      );
      assert.match(none.error ?? "", /user id.*pass descriptorLink/);

      const some = lastLine<{ flags?: string[] }>(
        await runDeno(["run", "--quiet", "--allow-sys=uid", host, dir.path], { terminal: true }),
      );
      const flags = some.flags ?? [];
      assert.ok(flags.includes("--no-prompt"), flags.join(" "));
      assert.ok(flags.some((flag) => flag.startsWith("--allow-env=PATH,HOME,")), flags.join(" "));
      // Its HOME is not granted to it: no git configuration is named.
      assert.ok(!flags.some((flag) => flag.includes(".gitconfig")), flags.join(" "));
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "a host module outside the repository imports @openwork/tools and @openwork/tools/deno from a linked checkout and runs every tool under the documented flags",
  { skip },
  async () => {
    const dir = await tempDir();
    try {
      const checkout = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
      const project = join(dir.path, "host");
      const root = join(dir.path, "repo");
      await mkdir(project);
      await mkdir(root);
      await writeFile(join(root, "old.txt"), "old\n");
      await writeFile(
        join(project, "deno.json"),
        JSON.stringify({
          imports: { "@openwork/tools": "jsr:@openwork/tools@^0.1.0" },
          links: [checkout],
        }),
      );
      await copyFile(fixture("outside_host.ts"), join(project, "host.ts"));
      // No cache directory: the index keeps to memory, and the user's cache is left alone.
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        cacheDirectory: null,
      });
      const ran = lastLine<{
        resolved: string;
        outcomes: Record<string, [boolean, string]>;
        undo: string[];
        index: string;
      }>(await runDeno(["run", "--quiet", ...flags, "host.ts", root], { cwd: project }));
      assert.equal(ran.resolved, new URL("../mod.ts", import.meta.url).href);
      for (const tool of ["write", "read", "edit", "grep", "glob", "list", "bash"]) {
        assert.equal(ran.outcomes[tool]?.[0], true, `${tool}: ${ran.outcomes[tool]?.[1]}`);
      }
      assert.match(ran.outcomes.grep[1], /new\.txt/);
      assert.match(ran.outcomes.glob[1], /new\.txt[\s\S]*old\.txt|old\.txt[\s\S]*new\.txt/);
      assert.match(ran.outcomes.bash[1], /the needle/);
      assert.deepEqual(ran.undo, ["undone", "undone"]);
      assert.equal(ran.index, "ready");
    } finally {
      await dir.cleanup();
    }
  },
);
