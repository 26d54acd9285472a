/**
 * The file-system rules the real backends (Deno's and Node's) share, written
 * once over `node:fs` (Deno implements it with real descriptors):
 *
 * - Every object is opened by its checked real path without following a
 *   final link, then verified to be at that path (`descriptors.ts`) before a
 *   byte is read or written; a mismatch is refused. The kernel is asked
 *   through `/proc/self/fd` or a verified link to it (`descriptor_route.ts`);
 *   where neither can be had on Linux, nothing is opened at all, unless the
 *   host chose the best effort.
 * - Creates, renames, links and removals happen inside a verified directory
 *   descriptor, so a directory swapped for a link meanwhile cannot redirect
 *   them, and nothing, not even an empty temporary file, is made elsewhere.
 *   After a change the directory is verified again; if it was moved away
 *   meanwhile, the change is taken back where it can be and refused.
 * - A write goes to a temporary sibling and is renamed or linked into
 *   place, keeping the old permission bits. With `replaces`, it is a
 *   compare-and-swap: the current file is moved aside atomically, verified
 *   to hold the bytes the caller read, and replaced by a link that fails if
 *   another file appeared; otherwise the other version is put back and the
 *   call fails with `stale_edit`. For the instant of that exchange the path
 *   is missing to a reader.
 * - Every runtime error becomes a `ToolError`.
 *
 * @module
 */
import {
  constants,
  linkSync,
  lstatSync,
  mkdirSync,
  renameSync,
  rmdirSync,
  unlinkSync,
} from "node:fs";
import * as fs from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import type { Stats } from "node:fs";
import { basename, dirname } from "node:path";
import type {
  AsyncFileSystem,
  DirEntry,
  EntryKind,
  FileInfo,
  ReplaceOptions,
} from "./filesystem.ts";
import { type CheckedPath, rootOfCheckedPath, unwrapCheckedPath } from "../path/checked_path.ts";
import { ToolError } from "../errors.ts";
import { codeOfRuntimeError, toToolError } from "./errors.ts";
import { runtimeRefusal } from "../runtime/refusal.ts";
import { checkOptionBag, refuseOption } from "../runtime/options.ts";
import type { OptionNames } from "../runtime/options.ts";
import {
  changedUnderfoot,
  descriptorPath,
  type DescriptorRoute,
  holds,
  OPEN_RESOLVES_ITSELF,
  sameObject,
} from "./descriptors.ts";
import { RouteKeeper, type RouteSettings } from "./descriptor_route.ts";

/** Options of the real (disk) file systems, `createNodeFileSystem` and `createDenoFileSystem`. */
export interface DiskFileSystemOptions {
  /**
   * Where the symbolic link to `/proc/self/fd` is, or is made, for a runtime
   * that refuses `/proc/self/fd` paths themselves (Deno short of
   * `--allow-all`); default `/tmp/openwork-tools-fd-<uid>`, which
   * `denoPermissionFlags` grants. The backend makes the link if it is missing
   * (through bash where Deno's flags refuse to make links), verifies it, and
   * checks after every use that it has not changed. Give the same path to
   * `denoPermissionFlags`. Keep it out of every root, in a directory that no
   * other process renames.
   */
  readonly descriptorLink?: string;
  /**
   * Without a way to name its open files (`/proc/self/fd` or the link), the
   * backend cannot verify that what it opened is at the checked path:
   * `"required"` (the default) refuses every file operation then, with a
   * message naming the permission flags that are missing; `"best-effort"`
   * goes on with checks that a process swapping a directory back and forth
   * can beat (a read may return a file outside the roots, a write may land
   * outside them). On systems without `/proc` (not Linux) the checks are
   * always the best effort.
   */
  readonly descriptorRoute?: "required" | "best-effort";
  /**
   * The module grep's and glob's tree searches run in worker threads, as a
   * URL, for a host whose bundle moved it; `null` runs every search on the
   * calling thread. By default, the backend's own worker module (for the
   * Node backend, `search_worker.js` beside the code, which a bundle can
   * emit as a second entry point); where that file is missing, as in a
   * one-file bundle, searches run on the calling thread.
   */
  readonly searchWorker?: URL | null;
}

const DISK_OPTIONS: OptionNames<DiskFileSystemOptions> = {
  descriptorLink: true,
  descriptorRoute: true,
  searchWorker: true,
};

/**
 * Refuses what the types would: an unknown option, or a known one of the
 * wrong type. `where` is the factory's name.
 */
export function checkDiskOptions(where: string, options: unknown): void {
  checkOptionBag(where, options, DISK_OPTIONS);
  const { descriptorLink, descriptorRoute, searchWorker } = options;
  if (descriptorLink !== undefined && typeof descriptorLink !== "string") {
    refuseOption(where, "descriptorLink", "a string", descriptorLink);
  }
  if (descriptorLink !== undefined && !descriptorLink.startsWith("/")) {
    refuseOption(where, "descriptorLink", "an absolute path", descriptorLink);
  }
  if (
    descriptorRoute !== undefined && descriptorRoute !== "required" &&
    descriptorRoute !== "best-effort"
  ) {
    refuseOption(where, "descriptorRoute", '"required" or "best-effort"', descriptorRoute);
  }
  if (searchWorker !== undefined && searchWorker !== null && !(searchWorker instanceof URL)) {
    refuseOption(where, "searchWorker", "a URL or null", searchWorker);
  }
}

/**
 * The keeper of a backend's route to its descriptors (see
 * `descriptor_route.ts`), making a missing link with the runtime's
 * `makeLink` and asking its permission guard with `grants`.
 */
export function routeKeeper(
  options: DiskFileSystemOptions,
  runtime: Pick<RouteSettings, "makeLink" | "grants">,
): RouteKeeper {
  return new RouteKeeper({
    ...runtime,
    ...(options.descriptorLink === undefined ? {} : { descriptorLink: options.descriptorLink }),
    ...(options.descriptorRoute === undefined ? {} : { descriptorRoute: options.descriptorRoute }),
  });
}

/** What a runtime brings to a real backend. */
export interface RealFileSystemOptions {
  /** How the backend names its descriptors by path (see `descriptor_route.ts`). */
  readonly routes: RouteKeeper;
  /** The entries of a directory by path (each runtime lists fastest its own way). */
  list(path: string): Promise<DirEntry[]>;
}

/** The part of {@link AsyncFileSystem} that {@link realFileSystem} makes. */
export type RealFileSystem = Pick<
  AsyncFileSystem,
  | "realPath"
  | "lstat"
  | "stat"
  | "readDir"
  | "readFile"
  | "readChunks"
  | "writeFileAtomic"
  | "mkdir"
  | "remove"
  | "ready"
>;

/**
 * Operations on one name (usually inside a verified directory), run
 * synchronously: each is one system call on a directory entry, answered in
 * microseconds on a local file system, where a trip through the runtime's
 * thread pool costs tens of them, and an edit makes about a dozen.
 */
const names = {
  lstat: (path: string): Promise<Stats> => settle(() => lstatSync(path)),
  rename: (from: string, to: string): Promise<void> => settle(() => renameSync(from, to)),
  link: (from: string, to: string): Promise<void> => settle(() => linkSync(from, to)),
  unlink: (path: string): Promise<void> => settle(() => unlinkSync(path)),
  mkdir: (path: string, mode?: number): Promise<void> => settle(() => void mkdirSync(path, mode)),
  rmdir: (path: string): Promise<void> => settle(() => rmdirSync(path)),
};

/** The outcome of a synchronous call as a promise: its value, or a rejection with what it threw. */
function settle<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    return Promise.reject(error);
  }
}

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;
/** O_NONBLOCK: a FIFO put in a file's place never blocks the open. */
const READ_FLAGS = constants.O_RDONLY | NONBLOCK | NOFOLLOW;
const DIRECTORY_FLAGS = constants.O_RDONLY | DIRECTORY | NOFOLLOW;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW;

/** The entry kind of a Node `Stats` or `Dirent`; symbolic links are reported, not followed. */
export function kindOf(
  entry: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean },
): EntryKind {
  if (entry.isSymbolicLink()) return "symlink";
  if (entry.isFile()) return "file";
  if (entry.isDirectory()) return "directory";
  return "other";
}

function infoOf(stats: Stats): FileInfo {
  return { kind: kindOf(stats), size: stats.size, mode: stats.mode & 0o7777 };
}

/** A fresh name for a sibling file of `name` (a temporary or a file moved aside). */
function siblingName(name: string, suffix: string): string {
  const random = crypto.getRandomValues(new Uint32Array(2));
  const tag = Array.from(random, (n) => n.toString(36)).join("");
  return `.${name}.${tag}.${suffix}`;
}

/** Runs `operation`, turning what it throws into a `ToolError` for doing `what` on `shown`. */
async function attempt<T>(what: string, shown: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (e) {
    throw toToolError(e, what, shown);
  }
}

/** A change committed inside a directory: kept by `finish`, or taken back where it can be. */
interface Made {
  /** Completes it (drops a moved-aside old version). */
  finish(): Promise<void>;
  /** Undoes it, or `null` when it cannot be undone. */
  readonly takeBack: (() => Promise<void>) | null;
}

/** The refusal when a directory moved away while a change that cannot be undone went in. */
function movedWithChange(shown: string): ToolError {
  return new ToolError(
    "path_outside_root",
    `The directory of ${shown} was moved while the change was made; the change may have been ` +
      `applied there. Check where the directory is now.`,
  );
}

function notRegular(shown: string): ToolError {
  return new ToolError("not_a_regular_file", `${shown} is not a regular file; it is not opened.`);
}

function stale(shown: string): ToolError {
  return new ToolError(
    "stale_edit",
    `${shown} changed after it was read (another program wrote it); the newer version was kept ` +
      `and nothing was written. Read it again and retry.`,
  );
}

/** Whether a runtime error says the thing is missing. */
function isMissing(error: unknown): boolean {
  return codeOfRuntimeError(error) === "not_found";
}

/** Reads a whole open file from its start, up to `limit` bytes (more means over the cap). */
async function readAll(handle: FileHandle, size: number, limit: number): Promise<Uint8Array> {
  let buffer = new Uint8Array(Math.min(size, limit) + 1);
  let filled = 0;
  while (true) {
    if (filled === buffer.length) {
      if (buffer.length > limit) break;
      const larger = new Uint8Array(Math.min(buffer.length * 2, limit + 1));
      larger.set(buffer);
      buffer = larger;
    }
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Makes the real file-system backend of a runtime: the operations of
 * {@link RealFileSystem} over `node:fs`, verified as the module says.
 */
export function realFileSystem(options: RealFileSystemOptions): RealFileSystem {
  const keeper = options.routes;

  /**
   * The route to name descriptors through; throws, as every operation then
   * does, when the backend cannot verify what it opens.
   */
  async function routeOf(shown: string, what: string): Promise<DescriptorRoute | null> {
    try {
      return await keeper.route();
    } catch (error) {
      throw toToolError(error, what, shown);
    }
  }

  /** Opens `real` without following a final link and verifies that it is still there. */
  async function openAt(
    route: DescriptorRoute | null,
    real: string,
    flags: number,
    shown: string,
    what: string,
  ) {
    let handle: FileHandle;
    try {
      handle = await fs.open(real, flags);
    } catch (error) {
      // A link put in the place of a checked (real, link-free) path.
      if ((error as { code?: unknown }).code === "ELOOP") throw changedUnderfoot(shown);
      throw toToolError(error, what, shown);
    }
    try {
      if (await holds(route, handle, real)) return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
    await handle.close();
    throw changedUnderfoot(shown);
  }

  /** A verified directory and the paths of names inside it. */
  async function openDirectory(
    route: DescriptorRoute | null,
    real: string,
    shown: string,
    what: string,
  ) {
    const handle = await openAt(route, real, DIRECTORY_FLAGS, shown, what);
    return {
      handle,
      /** Its real path. */
      real,
      /** The route its names go through. */
      route,
      /**
       * The path of `name` inside exactly this directory. A link route is
       * checked first: a change made through it must not go where a
       * replacement leads.
       */
      at: (name: string) => {
        if (route === null) return real === "/" ? `/${name}` : `${real}/${name}`;
        route.check();
        return descriptorPath(route.path, handle.fd, name);
      },
      /** The path that lists exactly this directory. */
      self: () => {
        if (route === null) return real;
        route.check();
        return descriptorPath(route.path, handle.fd);
      },
      /**
       * Whether the directory is still where it was verified; throws when the
       * route it was reached through changed since.
       */
      stillThere: () => holds(route, handle, real),
      close: () => handle.close().catch(() => {}),
    };
  }
  type Directory = Awaited<ReturnType<typeof openDirectory>>;

  /** Opens a regular file: refused when another object (or a link) is there. */
  async function openRegular(path: CheckedPath): Promise<{ handle: FileHandle; size: number }> {
    const real = unwrapCheckedPath(path);
    const route = await routeOf(path.display, "read");
    // A FIFO or device is never opened: its kind is looked at first, and again once open.
    const before = await attempt("read", path.display, () => names.lstat(real));
    if (before.isDirectory()) {
      throw new ToolError("is_directory", `${path.display} is a directory.`);
    }
    if (!before.isFile()) throw notRegular(path.display);
    const handle = await openAt(route, real, READ_FLAGS, path.display, "read");
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw notRegular(path.display);
      return { handle, size: info.size };
    } catch (e) {
      await handle.close();
      throw toToolError(e, "read", path.display);
    }
  }

  /**
   * Runs `change` inside the verified parent of `path`. The change calls
   * `ready` right before it commits, so a parent moved away meanwhile gets
   * nothing; a parent moved away during the commit has the change taken back
   * where it can be. Either way the call is refused.
   */
  async function inParent(
    path: CheckedPath,
    what: string,
    change: (directory: Directory, name: string, ready: () => Promise<void>) => Promise<Made>,
  ): Promise<void> {
    const real = unwrapCheckedPath(path);
    const route = await routeOf(path.display, what);
    const directory = await openDirectory(route, dirname(real), path.display, what);
    try {
      const ready = async () => {
        if (!(await directory.stillThere())) throw changedUnderfoot(path.display);
      };
      const made = await change(directory, basename(real), ready);
      if (!(await directory.stillThere())) {
        const takenBack = made.takeBack !== null &&
          await made.takeBack().then(() => true, () => false);
        if (!takenBack) throw movedWithChange(path.display);
        throw changedUnderfoot(path.display);
      }
      await made.finish();
    } catch (e) {
      throw toToolError(e, what, path.display);
    } finally {
      await directory.close();
    }
  }

  /** What is at `name` in `directory` now, without following a link; `null` when nothing. */
  async function entryAt(directory: Directory, name: string): Promise<Stats | null> {
    try {
      return await names.lstat(directory.at(name));
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /**
   * Commits a prepared temporary file (its path; or, without one, a removal) over
   * `name` only if `name` holds exactly `expected`: moves the current file
   * aside, verifies it, links the new one in (which fails if another file
   * appeared), and verifies the aside file again (a writer may still have
   * written into it). On any mismatch the other version is put back and
   * `stale_edit` thrown. The aside file goes at `finish`, or back at `takeBack`.
   */
  async function swapIfHolds(
    directory: Directory,
    name: string,
    temporary: string | null,
    expected: Uint8Array,
    shown: string,
  ): Promise<Made> {
    const aside = siblingName(name, "old");
    try {
      await names.rename(directory.at(name), directory.at(aside));
    } catch (error) {
      if (isMissing(error)) throw stale(shown);
      throw error;
    }
    const drop = () => names.unlink(directory.at(aside)).catch(() => {});
    // Puts the moved-aside version back, unless another file took the name meanwhile.
    const restore = async () => {
      await names.link(directory.at(aside), directory.at(name)).catch(() => {});
      await drop();
    };
    const found = await names.lstat(directory.at(aside)).catch(() => null);
    if (found === null || !found.isFile()) {
      // Another object (a directory) was exchanged into the name: it goes back as it came.
      await names.rename(directory.at(aside), directory.at(name)).catch(() => {});
      throw stale(shown);
    }
    const handle = await fs.open(directory.at(aside), READ_FLAGS).catch(() => null);
    try {
      const holdsExpected = async () => {
        if (handle === null) return false;
        const info = await handle.stat();
        if (!info.isFile() || info.size !== expected.length) return false;
        return sameBytes(await readAll(handle, info.size, expected.length), expected);
      };
      if (!(await holdsExpected())) {
        await restore();
        throw stale(shown);
      }
      if (temporary === null) return { finish: drop, takeBack: restore };
      try {
        await names.link(temporary, directory.at(name));
      } catch (error) {
        await restore();
        // Another file appeared at the name: it is newer than the version read, and stays.
        if (codeOfRuntimeError(error) === "already_exists") throw stale(shown);
        throw error;
      }
      if (!(await holdsExpected())) {
        // Written into after the check: that version goes back over this one (a third version
        // renamed into place in the microseconds between would be replaced by it).
        await names.rename(directory.at(aside), directory.at(name));
        throw stale(shown);
      }
      return {
        finish: drop,
        takeBack: () => names.rename(directory.at(aside), directory.at(name)),
      };
    } finally {
      await handle?.close().catch(() => {});
    }
  }

  return {
    async ready() {
      await keeper.route();
    },
    realPath: (path) => attempt("resolve", path, () => fs.realpath(path)),
    lstat: (path) => attempt("inspect", path, async () => infoOf(await fs.lstat(path))),
    async stat(path) {
      const real = unwrapCheckedPath(path);
      // A root itself is looked up directly: its parent is outside what the session may open.
      if (real === rootOfCheckedPath(path)) {
        return await attempt("inspect", path.display, async () => infoOf(await fs.lstat(real)));
      }
      // Looked up inside the verified parent: a link swapped in is reported as one.
      const route = await routeOf(path.display, "inspect");
      const directory = await openDirectory(route, dirname(real), path.display, "inspect");
      try {
        const info = infoOf(await names.lstat(directory.at(basename(real))));
        route?.check();
        return info;
      } catch (e) {
        throw toToolError(e, "inspect", path.display);
      } finally {
        await directory.close();
      }
    },
    async readDir(path) {
      const route = await routeOf(path.display, "list");
      const directory = await openDirectory(route, unwrapCheckedPath(path), path.display, "list");
      try {
        const entries = await options.list(directory.self());
        // The names came through the route: they are this directory's only if it did not change.
        route?.check();
        return entries;
      } catch (e) {
        throw toToolError(e, "list", path.display);
      } finally {
        await directory.close();
      }
    },
    async readFile(path, read) {
      const { handle, size } = await openRegular(path);
      try {
        if (size > read.maxBytes) {
          throw new ToolError(
            "too_large",
            `${path.display} has ${size} bytes, over the cap of ${read.maxBytes}.`,
          );
        }
        read.signal?.throwIfAborted();
        const bytes = await readAll(handle, size, read.maxBytes);
        if (bytes.length > read.maxBytes) {
          throw new ToolError(
            "too_large",
            `${path.display} grew over the cap of ${read.maxBytes}.`,
          );
        }
        return bytes;
      } catch (e) {
        throw toToolError(e, "read", path.display);
      } finally {
        await handle.close();
      }
    },
    async *readChunks(path, chunks = {}) {
      const { handle } = await openRegular(path);
      const size = chunks.chunkSize ?? 65536;
      try {
        while (true) {
          chunks.signal?.throwIfAborted();
          const buffer = new Uint8Array(size);
          const { bytesRead } = await handle.read(buffer, 0, size, null);
          if (bytesRead === 0) return;
          yield bytesRead === size ? buffer : buffer.subarray(0, bytesRead);
        }
      } finally {
        await handle.close();
      }
    },
    writeFileAtomic(path, data, write: ReplaceOptions = {}) {
      return inParent(path, "write", async (directory, name, ready) => {
        let temporary: string | null = null;
        let staging: string | null = null;
        let stage: Directory | null = null;
        try {
          const existing = await entryAt(directory, name);
          if (existing?.isDirectory()) {
            throw new ToolError("is_directory", `${path.display} is a directory.`);
          }
          if (existing !== null && !existing.isFile()) throw notRegular(path.display);
          if (write.replaces === null && existing !== null) throw stale(path.display);
          if (write.replaces instanceof Uint8Array && existing === null) throw stale(path.display);
          const mode = existing === null ? 0o666 : existing.mode & 0o7777;
          // Made inside the verified directory, never through a link (O_EXCL, O_NOFOLLOW). Where
          // the runtime's open resolves the path itself (Deno), inside a fresh directory of an
          // unguessable name, made there and verified: a plain path that wandered through a link
          // swapped in meanwhile finds no such directory, so the file is made there or nowhere.
          if (OPEN_RESOLVES_ITSELF) {
            staging = siblingName(name, "new");
            await names.mkdir(directory.at(staging), 0o700);
            stage = await openDirectory(
              directory.route,
              directory.real === "/" ? `/${staging}` : `${directory.real}/${staging}`,
              path.display,
              "write",
            );
            temporary = stage.at(name);
          } else temporary = directory.at(siblingName(name, "tmp"));
          const file = await fs.open(temporary, CREATE_FLAGS, mode).catch((error) => {
            // Deno resolves the path through the link to /proc/self/fd itself and, when the fresh
            // directory is gone from under the descriptor (moved meanwhile), ends in /proc, which
            // it refuses short of --allow-all: the directory changed, no flag is missing.
            if (runtimeRefusal(error)?.kind === "all") throw changedUnderfoot(path.display);
            throw error;
          });
          const at = temporary;
          // The file made must be the one named there, still, before its bytes go in and before it
          // is committed: another process may exchange it for a link (it can watch the directory),
          // and Deno's open turns a descriptor path back into a plain path and opens that, which a
          // link swapped in meanwhile can redirect. Bytes that went elsewhere are taken out of the
          // file (through its descriptor); a file made elsewhere is removed where the kernel says.
          const ours = await file.stat();
          const stillOurs = async () => sameObject(ours, await names.lstat(at).catch(() => null));
          const disown = async () => {
            await file.truncate(0).catch(() => {});
            const through = directory.route;
            if (OPEN_RESOLVES_ITSELF && through !== null) {
              through.check();
              await fs.readlink(descriptorPath(through.path, file.fd)).then(names.unlink).catch(
                () => {},
              );
            }
          };
          try {
            if (OPEN_RESOLVES_ITSELF && !(await stillOurs())) {
              await disown();
              throw changedUnderfoot(path.display);
            }
            await file.writeFile(data);
            if (existing !== null) await file.chmod(mode);
            if (!(await stillOurs())) {
              await disown();
              throw changedUnderfoot(path.display);
            }
            await ready();
            let made: Made;
            if (write.replaces === undefined) {
              await names.rename(temporary, directory.at(name));
              temporary = null;
              made = { finish: () => Promise.resolve(), takeBack: null };
            } else if (write.replaces === null) {
              try {
                await names.link(temporary, directory.at(name));
              } catch (error) {
                if (codeOfRuntimeError(error) === "already_exists") throw stale(path.display);
                throw error;
              }
              made = {
                finish: () => Promise.resolve(),
                takeBack: () => names.unlink(directory.at(name)),
              };
            } else {
              made = await swapIfHolds(directory, name, temporary, write.replaces, path.display);
            }
            // What went into place must be this file: if it was exchanged between the last look
            // and the commit, its bytes are taken out of it wherever it went. (A newer version
            // another program put in place since is not this file either, and stays.)
            const placed = await names.lstat(directory.at(name)).catch(() => null);
            if (!sameObject(ours, placed)) {
              await file.truncate(0).catch(() => {});
              // A regular file there is a newer version and stays, as does a removal; anything
              // else (a link exchanged in) goes, and the version read comes back.
              const exchanged = placed !== null && !placed.isFile() && made.takeBack !== null;
              if (exchanged) await made.takeBack!().catch(() => {});
              else await made.finish();
              throw stale(path.display);
            }
            return made;
          } finally {
            await file.close();
          }
        } finally {
          if (temporary !== null) await names.unlink(temporary).catch(() => {});
          await stage?.close();
          if (staging !== null) await names.rmdir(directory.at(staging)).catch(() => {});
        }
      });
    },
    mkdir(path) {
      return inParent(path, "create the directory", async (directory, name, ready) => {
        await ready();
        await names.mkdir(directory.at(name));
        return { finish: () => Promise.resolve(), takeBack: () => names.rmdir(directory.at(name)) };
      });
    },
    remove(path, removal: ReplaceOptions = {}) {
      return inParent(path, "remove", async (directory, name, ready) => {
        const existing = await entryAt(directory, name);
        if (existing === null) {
          if (removal.replaces instanceof Uint8Array) throw stale(path.display);
          throw new ToolError("not_found", `${path.display} does not exist.`);
        }
        if (existing.isDirectory()) {
          throw new ToolError("is_directory", `${path.display} is a directory.`);
        }
        await ready();
        if (removal.replaces instanceof Uint8Array) {
          return await swapIfHolds(directory, name, null, removal.replaces, path.display);
        }
        await names.unlink(directory.at(name));
        return { finish: () => Promise.resolve(), takeBack: null };
      });
    },
  };
}
