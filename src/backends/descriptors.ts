/**
 * Where this process reaches its own open descriptors by path, and the one
 * check every real file operation rests on: that the object a descriptor
 * holds is the one at the checked path.
 *
 * The runtimes have no `openat`, `mkdirat`, `renameat` or `linkat`. On Linux
 * a path of the form `/proc/self/fd/N/name` stands in for them: the kernel
 * resolves `N` to exactly the directory that descriptor holds (not to a path
 * that might have been swapped since) and looks `name` up inside it. And
 * `readlink("/proc/self/fd/N")` is the kernel's own answer to where the
 * object of `N` is now. So a backend opens a file or directory by its
 * checked real path (never following a final link), asks where what it
 * opened is, and refuses on any other answer before it reads a byte or
 * writes one; directory descriptors so verified then carry every create,
 * rename, link, unlink and listing inside them.
 *
 * Deno refuses `/proc/self/fd` paths without `--allow-all`; a host that runs
 * it under narrow flags may give the backend a symbolic link to
 * `/proc/self/fd` inside the granted scope instead. Where neither works (no
 * `/proc`, or Deno without the link), the check is the best effort of
 * comparing the identity (`dev`, `ino`) of the open object with that of a
 * no-follow lookup of the path, and the path with its canonical form; a
 * second process swapping a directory on the way back and forth between
 * those lookups can still win that race.
 *
 * @module
 */
import { fstatSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { ToolError } from "../errors.ts";
import { isDeno } from "../runtime/checks.ts";

/**
 * Whether this runtime's `open` resolves a path itself before opening it:
 * Deno's does (to check it against its flags), turning a descriptor path back
 * into a plain one; its other calls keep the path given.
 */
export const OPEN_RESOLVES_ITSELF: boolean = isDeno;

/** Whether two metadata records name the same object; `null` names none. */
export function sameObject(
  a: { dev: number; ino: number },
  b: { dev: number; ino: number } | null,
): boolean {
  return b !== null && a.dev === b.dev && a.ino === b.ino;
}

/** Linux's directory of this process's descriptors by number. */
export const PROC_SELF_FD = "/proc/self/fd";

/**
 * How a backend reaches its descriptors by path: a directory that lists them
 * by number (`/proc/self/fd`, or a link to it), or `null` where there is
 * none and the checks are best effort.
 */
export type DescriptorRoute = string | null;

/** The path that names the object of descriptor `fd`, or `name` inside that directory. */
export function descriptorPath(route: string, fd: number, name?: string): string {
  return name === undefined ? `${route}/${fd}` : `${route}/${fd}/${name}`;
}

/**
 * The route of a backend: the first of its candidates through which this
 * runtime can name a descriptor, found with the first descriptor it opens
 * (Deno's permission guard refuses `/proc/self/fd` under narrow flags, and
 * what it allows to open is known only then); `null` when none works.
 */
export class Routes {
  readonly #candidates: readonly string[];
  #route: DescriptorRoute = null;
  #probed = false;

  /** Routes to try, in order. */
  constructor(candidates: readonly string[]) {
    this.#candidates = candidates;
  }

  /** The route, probed with `fd` (a descriptor just opened) the first time. */
  of(fd: number): DescriptorRoute {
    if (this.#probed) return this.#route;
    this.#probed = true;
    for (const candidate of this.#candidates) {
      try {
        readlinkSync(descriptorPath(candidate, fd));
        return (this.#route = candidate);
      } catch {
        // Not there, or refused: the next one.
      }
    }
    return null;
  }
}

/**
 * Whether the kernel's name for an open object says it is at `real`, or was
 * there until it was unlinked (replaced by another version) after the open.
 */
function names(link: string, real: string): boolean {
  return link === real || link === `${real} (deleted)`;
}

/** Whether the object of `fd` is now at `real` (best effort without a route). */
export function holdsSync(route: DescriptorRoute, fd: number, real: string): boolean {
  try {
    if (route !== null) return names(readlinkSync(descriptorPath(route, fd)), real);
    return sameObject(fstatSync(fd), lstatSync(real)) && realpathSync(real) === real;
  } catch {
    return false;
  }
}

/** Whether the object of an open file handle is now at `real` (best effort without a route). */
export async function holds(
  route: DescriptorRoute,
  handle: FileHandle,
  real: string,
): Promise<boolean> {
  try {
    // Synchronous: a readlink of /proc/self/fd answers from memory in microseconds, less than
    // a trip through the runtime's thread pool costs.
    if (route !== null) return names(readlinkSync(descriptorPath(route, handle.fd)), real);
    const [open, found, canonical] = await Promise.all([
      handle.stat(),
      lstat(real),
      realpath(real),
    ]);
    return sameObject(open, found) && canonical === real;
  } catch {
    return false;
  }
}

/** The refusal when what was opened is not at the checked path any more. */
export function changedUnderfoot(shown: string): ToolError {
  return new ToolError(
    "path_outside_root",
    `${shown} changed while it was being opened (a link or another object took its place, or ` +
      `a directory on its way was moved); nothing was read or written through it. Check the ` +
      `path and try again.`,
  );
}
