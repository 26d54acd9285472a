/**
 * What a sandboxed call is confined to, and the bubblewrap command line that
 * confines it: a pure function of the resolved policy, so the mounts can be
 * read (and tested) apart from any process.
 *
 * @module
 */

/** The resolved sandbox of a session: canonical paths, nothing left to look up. */
export interface SandboxPlan {
  /** The bubblewrap program: an absolute path, or `bwrap` when the `PATH` could not be read. */
  readonly bwrap: string;
  /**
   * The bash that runs first inside the sandbox (its real path, as the
   * session found it outside the writable directories; default `bash`, as
   * the `PATH` there finds it).
   */
  readonly bash?: string;
  /** The writable directories, the working directory first; canonical. */
  readonly writable: readonly string[];
  /** The skill root, bound read-only, or `null`. */
  readonly skillRoot: string | null;
  /** `none`: a network namespace of its own (loopback only); `host`: the host's network. */
  readonly network: "none" | "host";
}

/**
 * The descriptor bubblewrap reads the seccomp filter from (see `seccomp.ts`)
 * when the plan has no network: its standard input, which it reads to the
 * end and closes before it starts the command.
 */
export const SECCOMP_DESCRIPTOR = 0;

/**
 * The bubblewrap arguments (before the command) that run a process in
 * `cwd` under `plan`, with the hooks and config of `gitDirectories` (git
 * directories inside the writable directories) made read-only again, and
 * each of those git directories mounted on itself: a mount point cannot be
 * renamed or removed, so a command cannot put another `.git`, with hooks of
 * its own, in its place. Order matters: a later mount covers an earlier one.
 */
export function bwrapArguments(
  plan: SandboxPlan,
  cwd: string,
  gitDirectories: readonly string[],
): string[] {
  const args = [
    // The whole file system read-only, with fresh /dev, /proc (of the new PID namespace) and /tmp.
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    // The kernel's settings: writable by uid 0 without any capability, and some (core_pattern,
    // modprobe) name programs the kernel runs outside the sandbox.
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind-try",
    "/proc/sysrq-trigger",
    "/proc/sysrq-trigger",
    "--tmpfs",
    "/tmp",
  ];
  for (const directory of plan.writable) args.push("--bind", directory, directory);
  // Over the writable binds; `-try`: a path gone since it was looked up is skipped, not an error.
  for (const git of gitDirectories) {
    args.push(
      "--bind",
      git,
      git,
      "--ro-bind-try",
      `${git}/hooks`,
      `${git}/hooks`,
      "--ro-bind-try",
      `${git}/config`,
      `${git}/config`,
    );
  }
  if (plan.skillRoot !== null) {
    // Inside a writable directory, each directory between it and the skill root is mounted on
    // itself: a mount point cannot be renamed, so none can be moved aside for another.
    for (const between of directoriesBetween(plan.writable, plan.skillRoot)) {
      args.push("--bind", between, between);
    }
    args.push("--ro-bind", plan.skillRoot, plan.skillRoot);
  }
  args.push(
    // Its own PID namespace: when the command's shell ends, the kernel ends every process left.
    "--unshare-pid",
    "--unshare-ipc",
    // No network: no unix-domain socket either, so none of the host's is reachable by path.
    ...(plan.network === "none" ? ["--unshare-net", "--seccomp", String(SECCOMP_DESCRIPTOR)] : []),
    // When bwrap itself is ended (the process group's SIGTERM/SIGKILL), the namespace goes too.
    "--die-with-parent",
    // A new terminal session: no TIOCSTI into the host's terminal.
    "--new-session",
    // Run as root, bwrap would otherwise keep every capability (and could remount / writable).
    "--cap-drop",
    "ALL",
    "--chdir",
    cwd,
    "--",
  );
  return args;
}

/**
 * What the sandbox enforces, in one paragraph for the description of a tool
 * that runs commands.
 */
export function sandboxStatement(plan: SandboxPlan): string {
  const [working, ...extras] = plan.writable;
  const where = extras.length === 0
    ? `the working directory (${working})`
    : `the working directory (${working}) and ${extras.join(", ")}`;
  return "In this session every command runs in an OS sandbox (bubblewrap): writes are confined " +
    `to ${where} and a private /tmp; the rest of the file system, the skill root, and the ` +
    "repository's .git/hooks and .git/config are read-only (a write there fails with " +
    "'Read-only file system'); " +
    (plan.network === "none"
      ? "there is no network (loopback only, nothing of the host's) and no unix-domain " +
        "socket can be made (stream socket pairs work); "
      : "the host's network is reachable; ") +
    "every process the command starts, detached or not, ends when the call ends.";
}

/**
 * The directories strictly between the writable directory that holds
 * `path` (the deepest, if several do) and `path`, outermost first; none
 * when no writable directory holds it.
 */
function directoriesBetween(writable: readonly string[], path: string): string[] {
  const holders = writable.filter((directory) => path.startsWith(`${directory}/`));
  if (holders.length === 0) return [];
  const holder = holders.reduce((a, b) => (b.length > a.length ? b : a));
  const between: string[] = [];
  for (let at = path.indexOf("/", holder.length + 1); at !== -1; at = path.indexOf("/", at + 1)) {
    between.push(path.slice(0, at));
  }
  return between;
}
