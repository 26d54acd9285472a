/**
 * `createSession`: the {@link ToolSessionContext} with its canonical roots and
 * the runtime's default backends unless others are given.
 *
 * @module
 */
import { posix } from "node:path";
import process from "node:process";
import type { PermissionProfile, ToolSessionContext } from "./contract/context.ts";
import { ToolError } from "./errors.ts";
import type { AsyncFileSystem } from "./backends/filesystem.ts";
import type { ProcessBackend } from "./backends/process.ts";
// The runtime's defaults: the package manifest maps this (deno.json for Deno and JSR, the npm
// package's package.json for Node); see `backends/defaults/deno.ts`.
import { defaultFileSystem, defaultProcessBackend } from "#default-backends";
import { hostEnvironment } from "./runtime/checks.ts";
import {
  hostPlatformFacts,
  platformProblem,
  UnsupportedPlatformError,
} from "./runtime/platform.ts";
import { resolvePath } from "./path/resolver.ts";
import type { SessionRoots } from "./path/resolver.ts";
import type { PathAccess, PathIntent } from "./path/mod.ts";
import { indexedFileSystem, SearchIndex } from "./backends/search_index.ts";
import type { SearchIndexOptions } from "./backends/search_index.ts";

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
  /** Directory names inside the working directory that refuse writes (default `[".git"]`). */
  readonly protectedNames?: readonly string[];
  /**
   * An index of the working directory that `grep` and `glob` answer from,
   * for a host that searches the same tree many times (default off). It is
   * built in the background from the first search, or from
   * `session.searchIndex.ready`; until it is ready, and whenever it cannot
   * vouch for an answer, searches walk. Answers are the walk's, exactly.
   * Close it with `session.searchIndex.close()`.
   */
  readonly searchIndex?: boolean | SearchIndexOptions;
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
 * {@link UnsupportedPlatformError} before anything runs. A host that passes
 * both `filesystem` and `processes` is not checked.
 *
 * @example
 * ```ts
 * import { createSession } from "@openwork/tools";
 * const session = await createSession({ workingDirectory: Deno.cwd() });
 * console.log(session.workingDirectory);
 * ```
 */
export async function createSession(options: SessionOptions): Promise<ToolSessionContext> {
  const environment = Object.freeze({ ...(options.environment ?? hostEnvironment()) });
  if (options.filesystem === undefined || options.processes === undefined) {
    const facts = hostPlatformFacts(environment, options.processes === undefined);
    const problem = platformProblem(facts);
    if (problem !== null) throw new UnsupportedPlatformError(facts.platform, problem);
  }
  const filesystem = options.filesystem ?? defaultFileSystem();
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
  const session = {
    workingDirectory,
    skillRoot,
    permissions: Object.freeze({ ...(options.permissions ?? { mode: "default" }) }),
    environment,
    filesystem,
    processes: options.processes ?? defaultProcessBackend(),
    resolvePath: resolve,
  };
  if (options.searchIndex === undefined || options.searchIndex === false) {
    return Object.freeze(session);
  }
  const root = await resolve(".", "read", "must_exist");
  const indexOptions = options.searchIndex === true ? {} : options.searchIndex;
  const index = new SearchIndex(filesystem, root, environment, indexOptions);
  return Object.freeze({
    ...session,
    filesystem: indexedFileSystem(filesystem, index),
    searchIndex: index.handle(),
  });
}
