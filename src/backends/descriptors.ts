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
 * Deno refuses `/proc/self/fd` paths without `--allow-all`; under narrower
 * flags the backend goes through a symbolic link to it that the flags grant,
 * checked after every use it relies on (`descriptor_link.ts`). Only where
 * there is no `/proc` (not Linux), or where the host chose it, is the check
 * the best effort of comparing the identity (`dev`, `ino`) of the open object
 * with that of a no-follow lookup of the path, and the path with its
 * canonical form; a second process swapping a directory on the way back and
 * forth between those lookups can still win that race.
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
 * How a backend reaches its descriptors by path: `/proc/self/fd`, or a
 * symbolic link to it that is checked after each use.
 */
export interface DescriptorRoute {
  /** `/proc/self/fd`, or the link. */
  readonly path: string;
  /**
   * Throws a {@link RouteChanged} unless the route is still the one verified
   * (for a link: the same link, untouched since). Called after every use whose
   * answer is relied on, and before every change made through the route.
   */
  check(): void;
}

/** The kernel's own directory: nothing can put another in its place. */
export const KERNEL_ROUTE: DescriptorRoute = Object.freeze({ path: PROC_SELF_FD, check() {} });

/** The path that names the object of descriptor `fd`, or `name` inside that directory. */
export function descriptorPath(route: string, fd: number, name?: string): string {
  return name === undefined ? `${route}/${fd}` : `${route}/${fd}/${name}`;
}

/**
 * The refusal when the link a backend names its descriptors through is not
 * the one it verified any more: replaced, moved, or moved away and back.
 */
export class RouteChanged extends ToolError {
  /** The refusal for the link at `link`. */
  constructor(link: string) {
    super(
      "backend_failure",
      `The link ${link}, through which the file backend names its open files, was replaced or ` +
        `moved while this call used it (another program changed it); the call was refused. ` +
        `What the call changed through it, if anything, may have reached where the replacement ` +
        `led. The next call verifies the link anew.`,
    );
  }
}

/**
 * Whether the object of `fd` is now at `real`, or was there until it was
 * unlinked after the open, as `route` answers: to be
 * relied on only after a check of the route that comes after it (a caller
 * that asks about many descriptors checks the route once, before it relies
 * on any of the answers; see {@link holdsSync}).
 */
export function answersAt(route: DescriptorRoute, fd: number, real: string): boolean {
  try {
    const path = descriptorPath(route.path, fd);
    const name = readlinkSync(path);
    if (name === real) return true;
    // An object unlinked after the open (replaced by another version) is named by where it was,
    // with " (deleted)" added; so is a live one whose name ends so (a link at `real` leading to
    // it is followed by an open that resolves the path itself). Only an unlinked one is taken,
    // by its name read again once it is known to be unlinked: a live one removed meanwhile is
    // then named with " (deleted)" added to its own name.
    const removed = `${real} (deleted)`;
    return name === removed && fstatSync(fd).nlink === 0 && readlinkSync(path) === removed;
  } catch {
    return false;
  }
}

/**
 * Whether the object of `fd` is now at `real` (best effort without a route).
 * Throws a {@link RouteChanged} when the route's answer cannot be relied on.
 */
export function holdsSync(route: DescriptorRoute | null, fd: number, real: string): boolean {
  if (route !== null) {
    const answer = answersAt(route, fd, real);
    route.check();
    return answer;
  }
  try {
    return sameObject(fstatSync(fd), lstatSync(real)) && realpathSync(real) === real;
  } catch {
    return false;
  }
}

/**
 * Whether the object of an open file handle is now at `real` (best effort
 * without a route). Throws a {@link RouteChanged} when the route's answer
 * cannot be relied on.
 */
export async function holds(
  route: DescriptorRoute | null,
  handle: FileHandle,
  real: string,
): Promise<boolean> {
  // Synchronous: a readlink of /proc/self/fd answers from memory in microseconds, less than a
  // trip through the runtime's thread pool costs.
  if (route !== null) return holdsSync(route, handle.fd, real);
  try {
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
