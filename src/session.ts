/**
 * `createSession`: the {@link ToolSessionContext} with its canonical roots and
 * the runtime's default backends unless others are given.
 *
 * @module
 */
import { posix } from "node:path";
import type { PermissionProfile, ToolSessionContext } from "./contract/context.ts";
import { ToolError } from "./errors.ts";
import type { AsyncFileSystem } from "./backends/filesystem.ts";
import type { ProcessBackend } from "./backends/process.ts";
// The runtime's defaults: the package manifest maps this (deno.json for Deno and JSR, the npm
// package's package.json for Node); see `backends/defaults/deno.ts`.
import { defaultFileSystem, defaultProcessBackend } from "#default-backends";
import { hostEnvironment } from "./runtime/checks.ts";
import { resolvePath } from "./path/resolver.ts";
import type { SessionRoots } from "./path/resolver.ts";
import type { PathAccess, PathIntent } from "./path/mod.ts";

/** Options of {@link createSession}. */
export interface SessionOptions {
  /** The working directory (read/write root); it is canonicalized. */
  readonly workingDirectory: string;
  /** The permission profile (default `{ mode: "default" }`). */
  readonly permissions?: PermissionProfile;
  /** The user skill root, e.g. `~/.agents/skills`, readable only; `null` or absent for none. */
  readonly skillRoot?: string | null;
  /** The environment processes run with (default: the host's). */
  readonly environment?: Readonly<Record<string, string>>;
  /** The file-system backend (default: the runtime's own). */
  readonly filesystem?: AsyncFileSystem;
  /** The process backend (default: the runtime's own). */
  readonly processes?: ProcessBackend;
  /** Directory names inside the working directory that refuse writes (default `[".git"]`). */
  readonly protectedNames?: readonly string[];
}

async function canonicalDirectory(
  filesystem: AsyncFileSystem,
  path: string,
  what: string,
): Promise<string> {
  if (!path.startsWith("/")) {
    throw new TypeError(`createSession: ${what} must be an absolute path, got ${path}.`);
  }
  let real: string;
  try {
    real = await filesystem.realPath(path);
  } catch (error) {
    // Deno's flags may hide a root the logical boundary allows: keep it as given,
    // and every access to it becomes runtime_permission_denied.
    if (error instanceof ToolError && error.code === "runtime_permission_denied") {
      return posix.resolve(path);
    }
    throw new TypeError(
      `createSession: ${what} ${path} cannot be resolved: ${(error as Error).message}`,
    );
  }
  const info = await filesystem.lstat(real);
  if (info.kind !== "directory") {
    throw new TypeError(`createSession: ${what} ${path} is not a directory.`);
  }
  return real;
}

/**
 * Creates a session: canonical roots, permission profile, environment and
 * backends, with the one path resolver bound to them.
 *
 * @example
 * ```ts
 * import { createSession } from "@openwork/tools";
 * const session = await createSession({ workingDirectory: Deno.cwd() });
 * console.log(session.workingDirectory);
 * ```
 */
export async function createSession(options: SessionOptions): Promise<ToolSessionContext> {
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
  return Object.freeze({
    workingDirectory,
    skillRoot,
    permissions: Object.freeze({ ...(options.permissions ?? { mode: "default" }) }),
    environment: Object.freeze({ ...(options.environment ?? hostEnvironment()) }),
    filesystem,
    processes: options.processes ?? defaultProcessBackend(),
    resolvePath: (input: string, access: PathAccess, intent: PathIntent) =>
      resolvePath(filesystem, roots, input, access, intent),
  });
}
