/**
 * Where the search index keeps its cache files, and the checks that make
 * that place private: what a cache file says of a file whose stamp has not
 * changed is trusted, so only this user may have written it.
 *
 * - **Where.** `$XDG_CACHE_HOME/openwork-tools/search-index`, else
 *   `$HOME/.cache/openwork-tools/search-index`, from the session's
 *   environment (no `os.homedir()`: under Deno's narrow flags that needs a
 *   grant the session does not have). One file per working directory, named
 *   for a hash of its real path (see `search/index/cache_location.ts`); the
 *   full path is stored inside and compared on load.
 * - **Private.** The directory is made with mode 0700 and must be, by
 *   `lstat`, a directory (not a link) of this user that no one else may
 *   enter; a cache file must be, by `lstat` and again by `fstat` once
 *   opened (the same inode), a regular file of this user that no one else
 *   may read or write. Anything else is
 *   refused: the index then keeps to memory.
 * - **Atomic.** A file is written as a new temporary file (mode 0600,
 *   created exclusively) in the same directory, then renamed over the old:
 *   a reader sees the old file or the new one, never a part.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, open, realpath, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import process from "node:process";
import { permissionState } from "../runtime/checks.ts";

/** What {@link privacyProblem} looks at (as `lstat` and `fstat` give it). */
export interface OwnedStats {
  isDirectory(): boolean;
  isFile(): boolean;
  isSymbolicLink(): boolean;
  readonly uid: number;
  readonly mode: number;
}

/**
 * Why `stats` (of a cache directory, or of a cache file) does not make it
 * private to the user `uid`, or `null` when it does.
 *
 * @example
 * ```ts
 * import { privacyProblem } from "./cache_directory.ts";
 *
 * const stats = {
 *   isDirectory: () => true,
 *   isFile: () => false,
 *   isSymbolicLink: () => false,
 *   uid: 1000,
 *   mode: 0o40755,
 * };
 * console.log(privacyProblem(stats, "directory", 1000)); // "others may read or write it (mode 755)"
 * ```
 */
export function privacyProblem(
  stats: OwnedStats,
  kind: "directory" | "file",
  uid: number,
): string | null {
  if (stats.isSymbolicLink()) return "it is a symbolic link";
  if (kind === "directory" ? !stats.isDirectory() : !stats.isFile()) return `it is not a ${kind}`;
  if (stats.uid !== uid) return `it belongs to user ${stats.uid}, not ${uid}`;
  if ((stats.mode & 0o077) !== 0) {
    return `others may read or write it (mode ${(stats.mode & 0o777).toString(8)})`;
  }
  return null;
}

/**
 * This process's user id, or `null` when it cannot be told without asking
 * (Deno without `--allow-sys=uid`) or at all (Windows).
 */
export function currentUid(): number | null {
  const state = permissionState({ name: "sys", kind: "uid" });
  if (state !== null && state !== "granted") return null;
  try {
    return process.getuid?.() ?? null;
  } catch {
    return null;
  }
}

/** A directory a cache must not be in, and how to say why. */
export interface ForbiddenDirectory {
  /** Its real path. */
  readonly path: string;
  /** What it is, as the refusal names it ("the working directory it would index"). */
  readonly what: string;
}

/**
 * Makes the cache directory if it is missing (mode 0700) and checks that it
 * is private to `uid` and outside the tree at `root` (a real path): a cache
 * written inside the tree it indexes would be a change to that tree, and
 * written again after it, without end. It must be outside each of
 * `forbidden` too (real paths: the directories a sandbox lets commands
 * write, where a command could rewrite the cache to hide a file from
 * searches). The directories above it that exist are checked (see
 * {@link ancestorsProblem}) before anything is made, and each directory
 * made is checked as it is made. Returns why it cannot be used, or `null`
 * when it can. Under Deno, a directory the runtime does not grant reading
 * and writing is not used (asking would prompt on a terminal).
 */
export async function prepareCacheDirectory(
  directory: string,
  uid: number,
  root: string,
  forbidden: readonly ForbiddenDirectory[] = [],
): Promise<string | null> {
  for (const name of ["read", "write"] as const) {
    const state = permissionState({ name, path: directory });
    if (state !== null && state !== "granted") {
      return `the runtime does not grant ${name} of ${directory}`;
    }
  }
  const places = [{ path: root, what: "the working directory it would index" }, ...forbidden];
  const within = (path: string) => {
    const place = places.find((place) =>
      path === place.path || path.startsWith(place.path === "/" ? "/" : `${place.path}/`)
    );
    return place === undefined ? null : `the cache directory ${directory} is inside ${place.what}`;
  };
  // Asked of the path as given, and of where it leads (through links) before anything is made
  // there, and of its real path after.
  const before = within(directory) ?? within(await whereItLeads(directory));
  if (before !== null) return before;
  try {
    const made = await makeDirectory(directory, uid);
    if (made !== null) return `the cache directory ${directory} is not private: ${made}`;
    const problem = privacyProblem(await lstat(directory), "directory", uid);
    if (problem !== null) return `the cache directory ${directory} is not private: ${problem}`;
    const real = await realpath(directory);
    const after = within(real);
    if (after !== null) return after;
    const above = await ancestorsProblem(dirname(real), uid);
    return above === null ? null : `the cache directory ${directory} is not private: ${above}`;
  } catch (error) {
    return `the cache directory ${directory} cannot be used: ${(error as Error).message}`;
  }
}

/**
 * Makes `directory` and what is missing above it (mode 0700), after
 * checking the deepest directory above it that exists, and those above that
 * ({@link ancestorsProblem}): nothing is made in a directory another user
 * may change. Each directory is made alone and checked before the next is
 * made in it. Where the runtime does not let this process look at a
 * directory on the way (Deno's flags grant the cache directory only), the
 * rest is made at once, unchecked, as the checks above it were passed over.
 * Returns why a directory on the way is refused, or `null`.
 */
async function makeDirectory(directory: string, uid: number): Promise<string | null> {
  const missing: string[] = [];
  let existing = directory;
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== "ENOENT" || dirname(existing) === existing) break;
      missing.unshift(existing);
      existing = dirname(existing);
    }
  }
  if (missing.length === 0) return null;
  const visible = (path: string) =>
    (["read", "write"] as const).every((name) => {
      const state = permissionState({ name, path });
      return state === null || state === "granted";
    });
  if (!visible(existing) || !missing.every(visible)) {
    await mkdir(directory, { recursive: true, mode: 0o700 });
    return null;
  }
  const above = await ancestorsProblem(await realpath(existing), uid);
  if (above !== null) return above;
  for (const path of missing) {
    try {
      await mkdir(path, { mode: 0o700 });
    } catch (error) {
      // Made meanwhile: checked as if made here.
      if ((error as { code?: unknown }).code !== "EEXIST") throw error;
    }
    if (path === directory) return null; // checked as the cache directory by the caller
    const problem = privacyProblem(await lstat(path), "directory", uid);
    if (problem !== null) return `${path}, above it, is refused: ${problem}`;
  }
  return null;
}

/**
 * Where `path` leads: the real path of its deepest existing ancestor (itself
 * included), joined with the rest; `path` itself when none can be resolved.
 */
async function whereItLeads(path: string): Promise<string> {
  let rest = "";
  for (let at = path;; at = dirname(at)) {
    try {
      return join(await realpath(at), rest);
    } catch {
      if (dirname(at) === at) return path;
      rest = join(at.slice(dirname(at).length + 1), rest);
    }
  }
}

/**
 * Why `first` (a real path) or a directory above it lets another user
 * replace what is below it, or `null`: each must belong to this user or to
 * root, and be writable by no one else unless it is sticky (as `/tmp` is:
 * no one may then rename or remove another's entry). A directory the
 * runtime does not let this process look at (Deno's flags) is passed over.
 */
async function ancestorsProblem(first: string, uid: number): Promise<string | null> {
  for (let at = first;; at = dirname(at)) {
    const state = permissionState({ name: "read", path: at });
    if (state === null || state === "granted") {
      const stats = await lstat(at);
      if (stats.uid !== uid && stats.uid !== 0) {
        return `${at}, above it, belongs to user ${stats.uid}`;
      }
      if ((stats.mode & 0o022) !== 0 && (stats.mode & 0o1000) === 0) {
        return `others may write in ${at}, above it (mode ${(stats.mode & 0o777).toString(8)})`;
      }
    }
    if (dirname(at) === at) return null;
  }
}

/**
 * How many bytes of a file of `size` bytes to read next into a buffer of
 * their own, given the pieces read so far (from its start).
 */
export type NextPiece = (pieces: readonly Uint8Array[], size: number) => number;

/** The whole file in one piece. */
const wholeFile: NextPiece = (pieces, size) =>
  size - pieces.reduce((sum, piece) => sum + piece.length, 0);

/**
 * The bytes of a cache file, `null` when there is none, or why it is
 * refused (a link, not a regular file, not private to `uid`, replaced while
 * opened, larger than `limit` bytes, unreadable). The file is checked by `lstat`, then through its
 * descriptor, so what is read is what was checked. It is read in the pieces
 * `next` says, each a buffer of its own (default: one), so that a reader
 * can keep some and drop others; a file that ends early ends the pieces.
 */
export async function readCacheFile(
  directory: string,
  name: string,
  uid: number,
  limit: number = Number.MAX_SAFE_INTEGER,
  next: NextPiece = wholeFile,
): Promise<Uint8Array[] | string | null> {
  const path = `${directory}/${name}`;
  let handle;
  let named;
  try {
    // Looked at without following a link, then opened and looked at again through the
    // descriptor: a file put in its place between the two is another inode, and refused.
    // (Not `O_NOFOLLOW`: not every runtime's `node:fs` passes it on.)
    named = await lstat(path);
    const problem = privacyProblem(named, "file", uid);
    if (problem !== null) return `the cache file ${path} is refused: ${problem}`;
    // Without blocking: a FIFO put in its place meanwhile opens at once, and is refused below.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return null;
    return `the cache file ${path} cannot be read: ${(error as Error).message}`;
  }
  try {
    const stats = await handle.stat();
    const problem = stats.dev !== named.dev || stats.ino !== named.ino
      ? "it was replaced while it was opened"
      : privacyProblem(stats, "file", uid);
    if (problem !== null) return `the cache file ${path} is refused: ${problem}`;
    if (stats.size > limit) {
      return `the cache file ${path} is refused: its ${stats.size} bytes are more than the ` +
        `index's memory limit (${limit} bytes)`;
    }
    const pieces: Uint8Array[] = [];
    let at = 0;
    while (at < stats.size) {
      const piece = new Uint8Array(
        Math.max(0, Math.min(next(pieces, stats.size), stats.size - at)),
      );
      let filled = 0;
      while (filled < piece.length) {
        const { bytesRead } = await handle.read(piece, filled, piece.length - filled, at + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      pieces.push(filled === piece.length ? piece : piece.subarray(0, filled));
      at += filled;
      if (filled < piece.length) break;
    }
    return pieces;
  } catch (error) {
    return `the cache file ${path} cannot be read: ${(error as Error).message}`;
  } finally {
    await handle.close().catch(() => {});
  }
}

/**
 * Writes a cache file atomically: `chunks` into a new temporary file of
 * mode 0600 in `directory`, then renamed to `name`. The temporary file is
 * removed when anything fails.
 */
export async function writeCacheFile(
  directory: string,
  name: string,
  chunks: readonly Uint8Array[],
): Promise<void> {
  const temporary = `${directory}/.${name}.${randomUUID()}.tmp`;
  // Created exclusively: a name that exists (a link put there included) fails.
  const handle = await open(temporary, "wx", 0o600);
  try {
    try {
      for (const chunk of chunks) {
        let at = 0;
        while (at < chunk.length) {
          const { bytesWritten } = await handle.write(chunk, at, chunk.length - at);
          at += bytesWritten;
        }
      }
    } finally {
      await handle.close();
    }
    await rename(temporary, `${directory}/${name}`);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}
