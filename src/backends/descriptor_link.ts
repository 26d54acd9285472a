/**
 * The symbolic link to `/proc/self/fd` through which a backend names its open
 * descriptors where the runtime refuses `/proc/self/fd` itself (Deno short of
 * `--allow-all`), and what makes a link trustworthy there.
 *
 * Deno checks its flags against a path as written, without following the
 * links on it, so a granted link leads it to the kernel's own directory of
 * this process's descriptors. A link, though, is a path that another process
 * of the same user can replace at any time. The backend relies on one only
 * as verified:
 *
 * - It is a symbolic link whose text is exactly `/proc/self/fd`, owned by
 *   this process's user. Such a link leads to the kernel's directory for
 *   whichever process follows it: nothing short of mounting over `/proc`
 *   makes it lead elsewhere.
 * - It is pinned: its device, inode and change time when verified. Every way
 *   to put another object at its path (replace, rename, rename away and
 *   back, a hard link made and removed) changes the change time of the link
 *   or takes its inode away. The backend compares the pin after each use
 *   whose answer it relies on and before each change it makes through the
 *   link, and refuses the call on any difference.
 * - The change time is what shows a link moved away and back; a runtime may
 *   report it to the second (Deno does), so a link is verified and pinned
 *   again once the second of its change time is over (a wait of at most a
 *   second, the first time a link is made), and only that pin is relied on:
 *   a change within that second, even to an object given the same inode
 *   number, has the same change time, and only the text read after it tells.
 *
 * A process that can rename a directory above the link can swap the link
 * with its directory without touching it: the default place,
 * `/tmp/openwork-tools-fd-<uid>`, sits directly in `/tmp`, which only root
 * can rename, and which is sticky, so other users can neither replace nor
 * remove the link.
 *
 * @module
 */
import { lstatSync, readlinkSync } from "node:fs";
import type { Stats } from "node:fs";
import { type DescriptorRoute, PROC_SELF_FD, RouteChanged } from "./descriptors.ts";
import { ToolError } from "../errors.ts";
import { processUid } from "../runtime/checks.ts";

/** The directory of the default link: root's, sticky, and found on every Linux system. */
const DEFAULT_LINK_DIRECTORY = "/tmp";

/**
 * Where the link of this process's user is by default:
 * `/tmp/openwork-tools-fd-<uid>`; `null` when the runtime does not tell the
 * user id (Deno without `--allow-sys=uid`).
 */
export function defaultDescriptorLink(): string | null {
  const uid = processUid();
  return uid === null ? null : `${DEFAULT_LINK_DIRECTORY}/openwork-tools-fd-${uid}`;
}

/** Why a path is not a link a backend may name its descriptors through. */
export class LinkProblem extends Error {
  /**
   * `reason`: the problem, in words that complete "the link …"; `advice`:
   * what the user can do about it.
   */
  constructor(readonly reason: string, readonly advice: string) {
    super(`${reason}; ${advice}`);
    this.name = "LinkProblem";
  }
}

/** What to do about a path that is not the link: its owner can remove it; anyone else cannot. */
function adviceFor(ownedBySelf: boolean): string {
  return ownedBySelf
    ? "remove it, and the backend makes the link anew"
    : "it cannot be removed by this user (another user's entry in a shared directory): pass " +
      "another descriptorLink, in a directory only this user may write, to denoPermissionFlags " +
      "and createDenoFileSystem";
}

/** What identifies a verified link: any change to it, or another object in its place, differs. */
interface Pin {
  readonly dev: number;
  readonly ino: number;
  readonly ctimeMs: number;
}

function pinOf(info: Stats): Pin {
  return { dev: info.dev, ino: info.ino, ctimeMs: info.ctimeMs };
}

/** A verified link, and when its pin can be relied on. */
export interface VerifiedLink {
  /** The link's path. */
  readonly path: string;
  /** Its identity when verified. */
  readonly pin: Pin;
  /**
   * The time (ms since the epoch) past which any change to the link gets
   * another change time than the pin's, even in whole seconds and on a
   * file-system clock a tick behind.
   */
  readonly settledAt: number;
}

/**
 * Verifies that `path` is a symbolic link to exactly `/proc/self/fd`, owned
 * by this process's user where the runtime tells it, and pins it. Throws a
 * {@link LinkProblem} when it is something else; what `lstat` and `readlink`
 * throw (a missing link, a refusal of the runtime) goes through as it is.
 */
export function verifyLink(path: string): VerifiedLink {
  const info = lstatSync(path);
  const uid = processUid();
  // Whose link it is must be known: another user's link could be swapped between check and use.
  if (uid === null) {
    throw new LinkProblem(
      `${path} cannot be checked as this user's: the process cannot tell its user id`,
      "run Deno with --allow-sys=uid (denoPermissionFlags grants it)",
    );
  }
  const advice = adviceFor(info.uid === uid);
  if (!info.isSymbolicLink()) {
    throw new LinkProblem(`${path} is not a symbolic link but a ${kindName(info)}`, advice);
  }
  if (info.uid !== uid) {
    throw new LinkProblem(`${path} belongs to user ${info.uid}, not to this user (${uid})`, advice);
  }
  const text = readlinkSync(path);
  if (text !== PROC_SELF_FD) {
    throw new LinkProblem(
      `${path} leads to ${JSON.stringify(text)}, not to ${PROC_SELF_FD}`,
      advice,
    );
  }
  const pin = pinOf(info);
  return { path, pin, settledAt: Math.floor(pin.ctimeMs / 1000) * 1000 + 1050 };
}

function kindName(info: Stats): string {
  if (info.isDirectory()) return "directory";
  if (info.isFile()) return "file";
  return "special file";
}

/**
 * The route through a verified link: its check compares the link with its
 * pin, and on any difference calls `changed` (to verify anew next time) and
 * throws a {@link RouteChanged}.
 */
export function linkRoute(link: VerifiedLink, changed: () => void): DescriptorRoute {
  const { path, pin } = link;
  return Object.freeze({
    path,
    check() {
      let now: Stats | null;
      try {
        now = lstatSync(path);
      } catch {
        now = null;
      }
      if (
        now === null || !now.isSymbolicLink() || now.dev !== pin.dev || now.ino !== pin.ino ||
        now.ctimeMs !== pin.ctimeMs
      ) {
        changed();
        throw new RouteChanged(path);
      }
    },
  });
}

/** Flags of Deno that a route through `link` needs, for messages. */
export function linkFlags(link: string): string {
  return `--allow-read=${link} --allow-write=${link}`;
}

/**
 * The refusal when a backend cannot verify what it opens: `reason` completes
 * "it names its open descriptors through …"; `code` is
 * `runtime_permission_denied` where a permission flag is what is missing.
 */
export function routeMissing(
  reason: string,
  code: "runtime_permission_denied" | "backend_failure",
): ToolError {
  return new ToolError(
    code,
    `The file backend cannot verify what it opens, so it opens nothing: it names its open ` +
      `files through ${PROC_SELF_FD}, which Deno refuses short of --allow-all, or through a ` +
      `symbolic link to it, and ${reason}. Run Deno with the flags denoPermissionFlags returns, ` +
      `or with --allow-all; or pass descriptorRoute: "best-effort" to the file backend to ` +
      `accept checks that a concurrent swap of a directory can beat.`,
  );
}
