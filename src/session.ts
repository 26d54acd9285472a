/**
 * `createSession`: the {@link ToolSessionContext} with its canonical roots and
 * the runtime's default backends unless others are given.
 *
 * @module
 */
import { posix } from "node:path";
import process from "node:process";
import type { PermissionMode, PermissionProfile, ToolSessionContext } from "./contract/context.ts";
import { ToolError } from "./errors.ts";
import type { AsyncFileSystem } from "./backends/filesystem.ts";
import type { ProcessBackend } from "./backends/process.ts";
// The runtime's defaults: the package manifest maps this (deno.json for Deno and JSR, the npm
// package's package.json for Node); see `backends/defaults/deno.ts`.
import { defaultFileSystem, defaultProcessBackend, defaultWatchTree } from "#default-backends";
import { hostEnvironment } from "./runtime/checks.ts";
import {
  hostPlatformFacts,
  platformProblem,
  sessionBash,
  UnsupportedPlatformError,
} from "./runtime/platform.ts";
import { resolvePath } from "./path/resolver.ts";
import type { SessionRoots } from "./path/resolver.ts";
import type { PathAccess, PathIntent } from "./path/mod.ts";
import { SearchIndex } from "./index/search_index.ts";
import { indexedFileSystem } from "./index/indexed_filesystem.ts";
import type { SearchIndexOptions } from "./index/search_index.ts";
import {
  checkOptionBag,
  isNonNegativeNumber,
  isOptionBag,
  refuseOption,
} from "./runtime/options.ts";
import type { OptionNames } from "./runtime/options.ts";
import {
  bwrapMissingError,
  checkSandboxOption,
  sandboxArchitectureError,
  sandboxPlatformError,
  sandboxStartError,
} from "./runtime/sandbox.ts";
import type { SandboxOptions } from "./runtime/sandbox.ts";
import { findProgram, trustedProgram } from "./runtime/platform.ts";
import { sandboxedProcesses } from "./backends/sandbox/sandboxed_processes.ts";
import { bashAtPath, bashRefused } from "./backends/bash_at_path.ts";
import { probeStart } from "./backends/probe_start.ts";
import { choosePidNamespace } from "./backends/pid_namespace/choose.ts";
import type { ProcessEnding } from "./backends/pid_namespace/choose.ts";
import { sandboxStatement } from "./backends/sandbox/bwrap_arguments.ts";
import type { SandboxPlan } from "./backends/sandbox/bwrap_arguments.ts";
import { filterSupports } from "./backends/sandbox/seccomp.ts";
import type { SessionSandbox } from "./contract/context.ts";

/** Options of {@link createSession}. */
export interface SessionOptions {
  /**
   * The working directory (read/write root); it is canonicalized. A relative
   * path is taken from the process's current directory.
   */
  readonly workingDirectory: string;
  /** The permission profile (default `{ mode: "default" }`). */
  readonly permissions?: PermissionProfile;
  /**
   * The user skill root, e.g. `~/.agents/skills`, readable only; `null` or
   * absent for none. A relative path is taken from the process's current directory.
   */
  readonly skillRoot?: string | null;
  /** The environment processes run with (default: the host's). */
  readonly environment?: Readonly<Record<string, string>>;
  /** The file-system backend (default: the runtime's own). */
  readonly filesystem?: AsyncFileSystem;
  /** The process backend (default: the runtime's own). */
  readonly processes?: ProcessBackend;
  /**
   * Directory names that refuse writes (default `[".git"]`): a path inside one, also where the
   * working directory itself lies inside one.
   */
  readonly protectedNames?: readonly string[];
  /**
   * An index of the working directory that `grep` and `glob` answer from,
   * for a host that searches the same tree many times (default off). It is
   * built in the background from the first search, or from
   * `session.searchIndex.ready`; until it is ready, and whenever it cannot
   * vouch for an answer, searches walk. Answers are the walk's, exactly.
   * It is kept in a private cache directory between processes (see
   * `SearchIndexOptions.cacheDirectory`; `null` there keeps it in memory), and
   * a new session proves the cache fresh before it answers from it.
   * Close it with `session.searchIndex.close()`.
   */
  readonly searchIndex?: boolean | SearchIndexOptions;
  /**
   * Runs every `bash` call in an OS sandbox (Linux only, with bubblewrap;
   * default off): the working directory (and `writable`) writable, the rest
   * of the file system read-only, a private /tmp, no network unless
   * `network: "host"`, and every process of the call ended with it. A
   * session asked for one never runs a command without it: `createSession`
   * throws a `SandboxUnavailableError` when it cannot start one.
   */
  readonly sandbox?: boolean | SandboxOptions;
  /**
   * Runs every `bash` call in a PID namespace of its own where it can
   * (default `true`): Linux, bubblewrap on the processes' `PATH`, user
   * namespaces allowed (and, under Deno, `--allow-run=…,bwrap`), checked
   * once by running `true` in one. The kernel then ends every process a call
   * started when the call ends. Nothing else is confined: it is not the
   * sandbox. Where it cannot be had, or with `false`, the process backend's
   * sweep of the process table ends what it finds (best effort);
   * `session.processEnding` says which applies. A session with `sandbox`
   * has the sandbox's own PID namespace either way.
   */
  readonly processNamespace?: boolean;
}

const SESSION_OPTIONS: OptionNames<SessionOptions> = {
  workingDirectory: true,
  permissions: true,
  skillRoot: true,
  environment: true,
  filesystem: true,
  processes: true,
  protectedNames: true,
  searchIndex: true,
  sandbox: true,
  processNamespace: true,
};
const PERMISSION_OPTIONS: OptionNames<PermissionProfile> = { mode: true, sandboxedCommands: true };
const MODES: Readonly<Record<PermissionMode, true>> = {
  default: true,
  acceptEdits: true,
  plan: true,
};
const SEARCH_INDEX_OPTIONS: OptionNames<SearchIndexOptions> = {
  fenceDirectory: true,
  memoryLimit: true,
  watch: true,
  cacheDirectory: true,
};

/**
 * Refuses options a JavaScript caller or a cast got past the types: an
 * unknown name (a misspelt one would otherwise be ignored) or a known one of
 * the wrong type, before anything is made.
 */
function checkSessionOptions(options: unknown): asserts options is SessionOptions {
  const where = "createSession";
  checkOptionBag(where, options, SESSION_OPTIONS);
  const { workingDirectory, permissions, skillRoot, environment, searchIndex } = options;
  checkSandboxOption(where, options.sandbox);
  const namespace = options.processNamespace;
  if (namespace !== undefined && typeof namespace !== "boolean") {
    refuseOption(where, "processNamespace", "a boolean", namespace);
  }
  if (typeof workingDirectory !== "string") {
    refuseOption(where, "workingDirectory", "a string", workingDirectory);
  }
  if (permissions !== undefined) {
    if (!isOptionBag(permissions)) {
      refuseOption(where, "permissions", "an object with mode", permissions);
    }
    checkOptionBag(`${where}: permissions`, permissions, PERMISSION_OPTIONS);
    const mode = permissions.mode;
    if (typeof mode !== "string" || !Object.hasOwn(MODES, mode)) {
      refuseOption(where, "permissions.mode", `one of ${Object.keys(MODES).join(", ")}`, mode);
    }
    const commands = permissions.sandboxedCommands;
    if (commands !== undefined && commands !== "ask" && commands !== "allow") {
      refuseOption(where, "permissions.sandboxedCommands", '"ask" or "allow"', commands);
    }
    if (commands === "allow" && (options.sandbox === undefined || options.sandbox === false)) {
      throw new TypeError(
        `${where}: permissions.sandboxedCommands "allow" needs sandbox: without one, the ` +
          "commands it lets run without asking would run unconfined.",
      );
    }
  }
  if (skillRoot !== undefined && skillRoot !== null && typeof skillRoot !== "string") {
    refuseOption(where, "skillRoot", "a string or null", skillRoot);
  }
  if (environment !== undefined) {
    if (!isOptionBag(environment)) {
      refuseOption(where, "environment", "an object of strings", environment);
    }
    for (const [name, value] of Object.entries(environment)) {
      if (typeof value !== "string") refuseOption(where, `environment.${name}`, "a string", value);
    }
  }
  for (const backend of ["filesystem", "processes"] as const) {
    const value = options[backend];
    if (value !== undefined && (typeof value !== "object" || value === null)) {
      refuseOption(where, backend, "an object", value);
    }
  }
  const names = options.protectedNames;
  if (
    names !== undefined &&
    (!Array.isArray(names) || !names.every((name) => typeof name === "string"))
  ) {
    refuseOption(where, "protectedNames", "an array of strings", names);
  }
  if (searchIndex === undefined || typeof searchIndex === "boolean") return;
  if (!isOptionBag(searchIndex)) {
    refuseOption(where, "searchIndex", "a boolean or an object of options", searchIndex);
  }
  checkOptionBag(`${where}: searchIndex`, searchIndex, SEARCH_INDEX_OPTIONS);
  const { fenceDirectory, memoryLimit, watch, cacheDirectory } = searchIndex;
  if (fenceDirectory !== undefined && typeof fenceDirectory !== "string") {
    refuseOption(where, "searchIndex.fenceDirectory", "a string", fenceDirectory);
  }
  if (memoryLimit !== undefined && !isNonNegativeNumber(memoryLimit)) {
    refuseOption(where, "searchIndex.memoryLimit", "a non-negative number of bytes", memoryLimit);
  }
  if (watch !== undefined && typeof watch !== "function") {
    refuseOption(where, "searchIndex.watch", "a function", watch);
  }
  if (
    cacheDirectory !== undefined && cacheDirectory !== null &&
    (typeof cacheDirectory !== "string" || !cacheDirectory.startsWith("/"))
  ) {
    refuseOption(where, "searchIndex.cacheDirectory", "an absolute path or null", cacheDirectory);
  }
}

async function canonicalDirectory(
  filesystem: AsyncFileSystem,
  path: string,
  what: string,
): Promise<string> {
  if (path === "") {
    // An unset setting read as "" would otherwise make the current directory a root.
    throw new TypeError(`createSession: ${what} is empty; give the directory's path.`);
  }
  let absolute = path;
  if (!path.startsWith("/")) {
    let current: string;
    try {
      current = process.cwd();
    } catch (error) {
      throw new TypeError(
        `createSession: ${what} ${path} is relative, and the current directory cannot be ` +
          `read to resolve it (${(error as Error).message}); pass an absolute path.`,
      );
    }
    absolute = posix.resolve(current, path);
  }
  const shown = absolute === path ? path : `${path} (${absolute})`;
  let real: string;
  try {
    real = await filesystem.realPath(absolute);
  } catch (error) {
    // Deno's flags may hide a root the logical boundary allows: keep it as given,
    // and every access to it becomes runtime_permission_denied.
    if (error instanceof ToolError && error.code === "runtime_permission_denied") {
      return posix.resolve(absolute);
    }
    throw new TypeError(
      `createSession: ${what} ${shown} cannot be resolved: ${(error as Error).message}`,
    );
  }
  const info = await filesystem.lstat(real);
  if (info.kind !== "directory") {
    throw new TypeError(`createSession: ${what} ${shown} is not a directory.`);
  }
  return real;
}

/**
 * Creates a session: canonical roots, permission profile, environment and
 * backends, with the one path resolver bound to them.
 *
 * Where a default backend is used, the machine is checked first: on Windows
 * (use WSL), or where bash is missing from the processes' `PATH`, it throws an
 * {@link UnsupportedPlatformError} before anything runs; so it does, with
 * the default process backend, where bash is on that `PATH` only inside
 * the working directory, the skill root or the sandbox's writable
 * directories (a repository's `node_modules/.bin`, say). bash is found once,
 * here, and every `bash` the session starts (each call's, in a PID
 * namespace or the sandbox too) is that one, by its real path; a command
 * that runs `bash` itself finds what its `PATH` says. A host that passes
 * both `filesystem` and `processes` is not checked. A file backend that
 * cannot work (under Deno, one that cannot verify what it opens because the
 * flags lack what `denoPermissionFlags` grants) makes it throw an Error that
 * says what is missing. An unknown option, or a
 * known one of the wrong type, is a TypeError that names it (and lists the
 * known names), thrown before anything is made.
 *
 * @example
 * ```ts
 * import { createSession } from "@openwork/tools";
 * const session = await createSession({ workingDirectory: Deno.cwd() });
 * console.log(session.workingDirectory);
 * ```
 */
export async function createSession(options: SessionOptions): Promise<ToolSessionContext> {
  checkSessionOptions(options);
  const environment = Object.freeze({ ...(options.environment ?? hostEnvironment()) });
  if (options.filesystem === undefined || options.processes === undefined) {
    const facts = hostPlatformFacts(environment, options.processes === undefined);
    const problem = platformProblem(facts);
    if (problem !== null) throw new UnsupportedPlatformError(facts.platform, problem);
  }
  // A sandbox that cannot be had is refused before anything is made.
  const sandboxOptions = options.sandbox === true ? {} : options.sandbox || null;
  let bwrap = "bwrap";
  if (sandboxOptions !== null) {
    if (process.platform !== "linux") throw sandboxPlatformError(process.platform);
    if ((sandboxOptions.network ?? "none") === "none" && !filterSupports(process.arch)) {
      throw sandboxArchitectureError(process.arch);
    }
    // Where bwrap is not on the PATH at all, refused now; which one runs is chosen once the
    // directories it must not come from are known (below).
    if (findProgram(environment, "bwrap") === "missing") throw bwrapMissingError(environment.PATH);
  }
  const filesystem = options.filesystem ?? defaultFileSystem();
  try {
    await filesystem.ready?.();
  } catch (error) {
    // A backend that cannot work says so here, before any call is made.
    throw new Error(`createSession: ${(error as Error)?.message ?? String(error)}`, {
      cause: error,
    });
  }
  const workingDirectory = await canonicalDirectory(
    filesystem,
    options.workingDirectory,
    "workingDirectory",
  );
  const skillRoot = options.skillRoot == null
    ? null
    : await canonicalDirectory(filesystem, options.skillRoot, "skillRoot");
  const roots: SessionRoots = Object.freeze({
    workingDirectory,
    skillRoot,
    protectedNames: Object.freeze([...(options.protectedNames ?? [".git"])]),
  });
  const resolve = (input: string, access: PathAccess, intent: PathIntent) =>
    resolvePath(filesystem, roots, input, access, intent);
  let processes = options.processes ?? defaultProcessBackend();
  let processEnding: ProcessEnding = "marker-sweep";
  let sandbox: SessionSandbox | undefined;
  const writable = [workingDirectory];
  for (const path of sandboxOptions?.writable ?? []) {
    writable.push(await canonicalDirectory(filesystem, path, "sandbox.writable"));
  }
  // Programs from where a command may write or the repository brings are never started: they
  // would run on the host (or, for bash in the sandbox, as every command).
  const shunned = skillRoot === null ? writable : [...writable, skillRoot];
  if (sandboxOptions !== null) {
    // Never a bwrap that a sandboxed command could have put on the PATH (it runs on the host),
    // nor one that the skill root brings.
    const trusted = trustedProgram(environment, "bwrap", shunned);
    if (trusted === null) throw bwrapMissingError(environment.PATH, shunned);
    bwrap = trusted;
  }
  // bash by the real path found once here; the runtime's default backend runs no other, and a
  // host's own backend (its processes may run elsewhere) gets that path where one is found.
  const bash = sessionBash(environment, shunned);
  if ("refused" in bash && bash.fatal && options.processes === undefined) {
    throw new UnsupportedPlatformError(process.platform, bash.refused);
  }
  if (sandboxOptions !== null) {
    const plan: SandboxPlan = {
      bwrap,
      ...("path" in bash ? { bash: bash.path } : {}),
      writable,
      skillRoot,
      network: sandboxOptions.network ?? "none",
    };
    processes = sandboxedProcesses(processes, plan);
    const problem = await probeStart(
      processes,
      await resolve(".", "read", "must_exist"),
      environment,
      shunned,
    );
    if (problem !== null) throw sandboxStartError(problem);
    sandbox = Object.freeze({
      network: plan.network,
      writable: Object.freeze(writable),
      statement: sandboxStatement(plan),
    });
    processEnding = "pid-namespace";
  } else if (options.processNamespace !== false) {
    ({ processes, ending: processEnding } = await choosePidNamespace({
      processes,
      isDefault: options.processes === undefined,
      cwd: await resolve(".", "read", "must_exist"),
      environment,
      shunned,
    }));
  }
  if ("path" in bash) processes = bashAtPath(processes, bash.path);
  else if (options.processes === undefined) processes = bashRefused(processes, bash.refused);
  const session = {
    workingDirectory,
    skillRoot,
    permissions: Object.freeze({ ...(options.permissions ?? { mode: "default" }) }),
    environment,
    filesystem,
    processes,
    processEnding,
    resolvePath: resolve,
    ...(sandbox === undefined ? {} : { sandbox }),
  };
  if (options.searchIndex === undefined || options.searchIndex === false) {
    return Object.freeze(session);
  }
  const root = await resolve(".", "read", "must_exist");
  const indexOptions = options.searchIndex === true ? {} : options.searchIndex;
  // The index gets its watcher here: the host's, else the runtime's (shared code picks none).
  const watch = indexOptions.watch ?? defaultWatchTree;
  // A cache where a sandboxed command may write could be rewritten to hide a file: refused.
  const commandWritable = (sandbox?.writable ?? []).filter((path) => path !== workingDirectory);
  const index = new SearchIndex(
    filesystem,
    root,
    environment,
    watch,
    indexOptions,
    commandWritable,
  );
  return Object.freeze({
    ...session,
    filesystem: indexedFileSystem(filesystem, index),
    searchIndex: index.handle(),
  });
}
