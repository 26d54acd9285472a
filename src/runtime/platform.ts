/**
 * Whether this machine can run the package's local backends, decided once
 * when a session is created rather than found out halfway through a call.
 * The decision ({@link platformProblem}) is a pure function of what was
 * found; {@link hostPlatformFacts} finds it.
 *
 * @module
 */
import process from "node:process";
import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { posix } from "node:path";
import { permissionState } from "./checks.ts";
import { mountViewsHere } from "./mount_views.ts";

/** What the platform check looks at. */
export interface PlatformFacts {
  /** The operating system, as `process.platform` names it (`linux`, `darwin`, `win32`, …). */
  readonly platform: string;
  /**
   * Whether `bash` is on the `PATH` the session's processes run with:
   * `unknown` where the runtime would not let the directories be read, and
   * `unused` when the host brings its own process backend.
   */
  readonly bash: "found" | "missing" | "unknown" | "unused";
}

/**
 * Why the local backends cannot work here, or `null` when they can.
 * Windows is refused whatever shell it has: the process backends end a
 * call by signalling its process group (`setsid`, `kill` of a negative pid),
 * which neither Node nor Deno offers there, and the path boundary is POSIX.
 * Under WSL the platform is `linux`, which works.
 */
export function platformProblem(facts: PlatformFacts): string | null {
  if (facts.platform === "win32") {
    return "Windows is not supported: bash calls run in process groups that are ended as a " +
      "whole with POSIX signals, and paths are POSIX paths. Run the host under WSL (Linux) instead.";
  }
  if (facts.bash === "missing") {
    return "bash was not found on the PATH the session's processes run with; the bash tool " +
      "and the ending of its processes need it. Install bash, or pass an environment whose " +
      "PATH holds it.";
  }
  return null;
}

/**
 * The error {@link createSession} throws on a machine whose local backends
 * cannot work; nothing has run when it is thrown.
 *
 * @example
 * ```ts
 * import { createSession, UnsupportedPlatformError } from "@openwork/tools";
 * try {
 *   await createSession({ workingDirectory: "." });
 * } catch (error) {
 *   if (error instanceof UnsupportedPlatformError) console.error(error.message);
 *   else throw error;
 * }
 * ```
 */
export class UnsupportedPlatformError extends Error {
  /** The platform that was refused, as `process.platform` names it. */
  readonly platform: string;

  /** Makes the error for `platform` with the reason it cannot work. */
  constructor(platform: string, reason: string) {
    super(`createSession: ${reason}`);
    this.name = "UnsupportedPlatformError";
    this.platform = platform;
  }
}

/** The directories processes search for a program: the `PATH` entries, or the system default. */
function searchPath(environment: Readonly<Record<string, string>>): string[] {
  // Without a PATH, Node and Deno look where execvp does.
  return (environment.PATH ?? "/usr/bin:/bin").split(":");
}

/** A program found on `PATH` by {@link findProgram}. */
export interface FoundProgram {
  /** Its path: with `shunned`, its real path (every link followed). */
  readonly path: string;
  /**
   * With `shunned`, its path as `PATH` names it (its directory joined with
   * the name), where no directory or link on the way to it is in `shunned`.
   */
  readonly written?: string;
}

/**
 * Where `name` is on `PATH`: its path when it is an executable in one of
 * the absolute directories, `unknown` when a directory could not be read
 * (or is relative), else `missing`.
 *
 * With `shunned` (canonical directories), a program in one of them or in a
 * view of one that the mount table shows elsewhere (a bind mount; see
 * `mount_views.ts`) (as `PATH` writes its directory, by its real path, or by
 * any directory or link met on the way from one to the other), or in a directory written
 * with `.` or `..`, is passed over (a process that may write there could
 * have put it there, or replace a link on the way later), and the program
 * found is given by its real path, so that a link changed later leads
 * nowhere else; its path as written too only where the whole way to it
 * could be followed.
 */
export function findProgram(
  environment: Readonly<Record<string, string>>,
  name: string,
  shunned?: readonly string[],
): FoundProgram | "missing" | "unknown" {
  // A bind mount of a shunned directory (or of part of it) is the same tree under another name.
  const inside = insideAny(shunned ?? []);
  let unreadable = false;
  for (const directory of searchPath(environment)) {
    if (!directory.startsWith("/")) {
      unreadable = true; // a relative entry depends on the directory a process starts in
      continue;
    }
    // A directory that is, as written, in a shunned one is passed over whatever it leads to: a
    // process that may write there can replace a link on the way after it was looked at. So is
    // one written with `.` or `..`, which the kernel resolves after the links before it.
    if (shunned !== undefined && (dotted(directory) || inside(posix.resolve(directory)))) continue;
    const path = posix.join(directory, name);
    const state = permissionState({ name: "read", path });
    if (state !== null && state !== "granted") {
      unreadable = true; // Deno refuses to look there, or would ask on a terminal
      continue;
    }
    try {
      // A regular file with an execute bit (`access` would need Deno's --allow-sys for the uid).
      const info = statSync(path);
      if (!info.isFile() || (info.mode & 0o111) === 0) continue;
      if (shunned === undefined) return { path };
      const real = realpathSync(path);
      // A link met on the way that lies in a shunned directory can be replaced after this look.
      const through = passesThrough(path, inside);
      if (through === true) continue;
      if (!inside(realDirectory(directory, path, real)) && !inside(real)) {
        // Where the way cannot be followed, only the real path is given.
        return through === false ? { path: real, written: path } : { path: real };
      }
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== "ENOENT" && code !== "ENOTDIR" && code !== "EACCES") unreadable = true;
    }
  }
  return unreadable ? "unknown" : "missing";
}

/** Links followed at most on the way to a program, as the kernel does. */
const MAX_LINKS = 40;

/**
 * Whether the way to `path`, followed one name and one link at a time as
 * the kernel does, meets a directory, file or link for which `inside` holds
 * (a link there can be replaced later, and the way with it); `null` when a
 * step cannot be looked at (Deno's flags, a link loop).
 */
function passesThrough(path: string, inside: (path: string) => boolean): boolean | null {
  const pending = path.split("/").filter((name) => name !== "");
  let current = "/";
  let links = 0;
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (name === ".") continue;
    if (name === "..") {
      current = posix.dirname(current);
      continue;
    }
    const next = current === "/" ? `/${name}` : `${current}/${name}`;
    if (inside(next)) return true;
    const state = permissionState({ name: "read", path: next });
    if (state !== null && state !== "granted") return null;
    try {
      if (!lstatSync(next).isSymbolicLink()) {
        current = next;
        continue;
      }
      if (++links > MAX_LINKS) return null;
      const target = readlinkSync(next);
      if (target.startsWith("/")) current = "/";
      pending.unshift(...target.split("/").filter((part) => part !== ""));
    } catch {
      return null;
    }
  }
  return false;
}

/**
 * Whether a path is one of `shunned` (canonical directories), or a view of
 * one that the mount table shows elsewhere (a bind mount: see
 * `mount_views.ts`), or below one.
 */
function insideAny(shunned: readonly string[]): (path: string) => boolean {
  const all = shunned.length === 0 ? [] : [...shunned, ...mountViewsHere(shunned)];
  return (path) =>
    all.some((directory) =>
      path === directory || path.startsWith(directory === "/" ? "/" : `${directory}/`)
    );
}

/** Whether a path has a `.` or `..` segment. */
function dotted(path: string): boolean {
  return path.split("/").some((segment) => segment === "." || segment === "..");
}

/**
 * The real path of `directory`, where `path` (in it) is a file whose real
 * path is `real`. When the runtime lets the file be read but not the
 * directory (Deno granted read of that one program), a file whose real path
 * is the path as written proves that no link is on the way to it: the
 * directory is then its own real path.
 */
function realDirectory(directory: string, path: string, real: string): string {
  try {
    return realpathSync(directory);
  } catch (error) {
    if (real === path) return posix.dirname(path);
    throw error;
  }
}

/**
 * Whether every directory of `PATH` is absolute and outside `shunned`
 * (canonical directories), as written and, where the runtime lets it be
 * read, by its real path: then a program Deno looks up by its bare name
 * cannot come from one of them. An empty or relative entry names a
 * directory that depends on where a process starts (the working directory,
 * where bwrap's `--chdir` puts it), so it fails the test.
 */
function searchPathOutside(
  environment: Readonly<Record<string, string>>,
  shunned: readonly string[],
): boolean {
  const inside = insideAny(shunned);
  for (const directory of searchPath(environment)) {
    if (!directory.startsWith("/") || dotted(directory)) return false;
    const written = posix.resolve(directory);
    if (inside(written)) return false;
    const state = permissionState({ name: "read", path: written });
    if (state !== null && state !== "granted") continue; // as written is all that can be told
    if (passesThrough(written, inside) === true) return false;
    try {
      if (inside(realpathSync(written))) return false;
    } catch {
      // Missing: nothing runs from it.
    }
  }
  return true;
}

/**
 * The program to start as `name` on the host where a process that may write
 * in `shunned` (canonical directories) must not choose it: its real path,
 * found on `PATH` outside them (see {@link findProgram}); the bare name
 * where the directories of `PATH` cannot be read but Deno was granted to
 * run `name` alone (Deno then starts only the program it found for that
 * grant when it started, and refuses another), and only when no directory
 * of `PATH` is relative or in `shunned` (Deno made that grant on the same
 * `PATH`, so it may itself be a program from there); else `null`, which
 * means do not start it.
 */
export function trustedProgram(
  environment: Readonly<Record<string, string>>,
  name: string,
  shunned: readonly string[],
): string | null {
  const found = findProgram(environment, name, shunned);
  if (typeof found === "object") return grantedPath(found);
  if (found === "missing") return null;
  const scoped = permissionState({ name: "run", command: name }) === "granted" &&
    permissionState({ name: "run" }) !== "granted";
  return scoped && searchPathOutside(environment, shunned) ? name : null;
}

/**
 * The path to start a program found outside `shunned` by: its real path,
 * unless Deno grants running it only by the path `PATH` names it by (Deno
 * compares the paths it was granted as written: `--allow-run=bash`
 * resolved to `/bin/bash`, where `/bin` links to `/usr/bin`, does not let
 * `/usr/bin/bash` run). Either names the same file, in a directory no
 * shunned process may change.
 */
function grantedPath(found: FoundProgram): string {
  const state = permissionState({ name: "run", command: found.path });
  if (state === null || state === "granted" || found.written === undefined) return found.path;
  return permissionState({ name: "run", command: found.written }) === "granted"
    ? found.written
    : found.path;
}

/**
 * Why the session has no bash to run, where `PATH` holds none outside
 * `shunned` that it may start (see {@link trustedProgram}): a bash found
 * only inside the working directory, the skill root or the sandbox's
 * writable directories is never started, nor is one Deno was granted by
 * name where `PATH` lists one of those or a relative entry.
 */
export function untrustedBashProblem(path: string | undefined): string {
  return `bash was not found on the PATH the session's processes run with (${
    path ?? "unset: /usr/bin:/bin"
  }) outside the working directory, the skill root and the sandbox's writable directories, ` +
    "where the repository or a command could have put it; the bash tool and the ending of its " +
    "processes need it, and a bash from there would run on the host. Install bash, or pass an " +
    "environment whose PATH holds it elsewhere. Under Deno's flags, grant run and read of bash " +
    "by its absolute path (denoPermissionFlags does): a grant by name is the first bash on a " +
    "PATH that lists one of those directories or a relative entry.";
}

/**
 * The bash a session starts: the path found (see {@link sessionBash}), or
 * why none is started; `fatal` when the session cannot run bash at all
 * (with the default process backend it is then refused), else every start
 * of bash is refused with that reason while the other tools work.
 */
export type SessionBash =
  | { readonly path: string }
  | { readonly refused: string; readonly fatal: boolean };

/**
 * The bash a session whose commands may write in `shunned` (canonical
 * directories: the working directory, the sandbox's writable ones, and the
 * skill root) starts, looked up once on `PATH` (see {@link trustedProgram}).
 * Under Deno, a bash found but not granted, where the flags grant `bash` by
 * name, is refused: Deno resolved that grant when it started, on its own
 * `PATH`, to another program (the first `bash` there, a repository's when
 * `npm run` put its `node_modules/.bin` first), and would refuse this one
 * (or, for a grant made to the same file by another path, every helper of
 * the session's). Where the flags grant no bash at all and the `PATH`
 * cannot be searched, bash is refused (Deno would ask on a terminal, and
 * resolve the name on the session's `PATH`), not the session.
 */
export function sessionBash(
  environment: Readonly<Record<string, string>>,
  shunned: readonly string[],
): SessionBash {
  const path = trustedProgram(environment, "bash", shunned);
  const byName = permissionState({ name: "run", command: "bash" });
  if (path !== null) {
    const state = permissionState({ name: "run", command: path });
    if (state === null || state === "granted" || byName !== "granted") return { path };
    return {
      refused: `Deno was granted to run bash by name, and resolved that grant, on the PATH it ` +
        `started with, to another program than the bash at ${path} found on the session's ` +
        "PATH outside the working directory, the skill root and the sandbox's writable " +
        "directories (the first bash on a PATH that npm run or npx made lists the repository's " +
        "node_modules/.bin first): it is not run. Grant run and read of bash by its absolute " +
        `path, --allow-run=${path} --allow-read=…,${path} (denoPermissionFlags does).`,
      fatal: true,
    };
  }
  const granted = byName === "granted" || permissionState({ name: "run" }) === "granted";
  if (byName !== null && !granted && findProgram(environment, "bash", shunned) !== "missing") {
    return {
      refused: "Deno's flags grant no run of bash, and the session cannot tell which bash on " +
        "its PATH it may start. Grant run and read of bash by its absolute path, " +
        "--allow-run=/usr/bin/bash --allow-read=…,/usr/bin/bash (denoPermissionFlags does).",
      fatal: false,
    };
  }
  return { refused: untrustedBashProblem(environment.PATH), fatal: true };
}

/** Whether `bash` is an executable in one of the absolute directories of `PATH`. */
function findBash(environment: Readonly<Record<string, string>>): PlatformFacts["bash"] {
  const found = findProgram(environment, "bash");
  return typeof found === "object" ? "found" : found;
}

/**
 * What this machine offers: its platform, and (when `lookForBash`) whether
 * bash is on `environment`'s `PATH`.
 */
export function hostPlatformFacts(
  environment: Readonly<Record<string, string>>,
  lookForBash: boolean,
): PlatformFacts {
  const platform = process.platform;
  if (!lookForBash || platform === "win32") {
    return { platform, bash: lookForBash ? "unknown" : "unused" };
  }
  return { platform, bash: findBash(environment) };
}
