/**
 * Watches a directory tree for changes and proves, on demand, that every
 * change made so far has been reported: the freshness half of the search
 * index. This module holds the contract ({@link TreeWatcher},
 * {@link WatchTree}) and the fences every watcher shares
 * ({@link fencedWatcher}); the watches themselves are the runtimes' own, in
 * their adapters, and the session hands the index the runtime's:
 *
 * - **Deno** (`backends/deno/watch.ts`): one recursive `Deno.watchFs` over
 *   the root and the fence directory. One watcher is one inotify instance,
 *   so the events of both paths arrive in one order. Deno's `node:fs`
 *   `watch` is not used: each call opens an inotify instance of its own, and
 *   a user may hold only 128.
 * - **Node** (`backends/node/watch.ts`): one `fs.watch` per directory, which
 *   the caller adds before it lists the directory. libuv puts every watch of
 *   the loop on one inotify descriptor, so their events keep one order too.
 *
 * A *fence* writes a cookie file in the fence directory and waits for its
 * event: the kernel queues events in the order the changes happen, so once
 * the cookie's own event has been reported, every change made before the
 * cookie was written has been reported as well.
 *
 @module
 */
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { basename, dirname, join, sep } from "node:path";
import { clearTimeout, setTimeout } from "node:timers";

/** Where a {@link TreeWatcher} reports what it sees. */
export interface WatchHandlers {
  /**
   * An absolute path where something changed: an entry that was created,
   * modified, removed or renamed, or a watched directory itself. Called in
   * the order the events were delivered; the same path may come more than once.
   */
  changed(path: string): void;
  /**
   * The watcher can no longer vouch that every change was reported (its
   * event queue overflowed, it failed, or a watch could not be added). Called
   * once; fences resolve `false` from then on.
   */
  lost(reason: string): void;
  /**
   * Some changes before this call may have gone unreported, but every watch
   * is still in place: changes from now on are reported (or missed again),
   * and fences go on proving it. The caller looks at the whole tree again:
   * lists every directory (adding it first, for a watcher of single
   * directories) and checks every file. May be called any number of times.
   * Without it, the watcher is lost instead.
   */
  missed?(reason: string): void;
}

/** A watch over a directory tree, from a {@link WatchTree}. */
export interface TreeWatcher {
  /**
   * `true`: each directory is watched only once it is passed to `add`, which
   * the caller does before listing it. `false`: the watch is recursive and
   * covers new directories itself (`add` and `remove` do nothing).
   */
  readonly perDirectory: boolean;
  /**
   * Watches a directory (an absolute real path); nothing when recursive. A
   * directory already watched is watched again when another directory has
   * taken its place since.
   */
  add(directory: string): void;
  /** Stops watching a directory and every directory below it; nothing when recursive. */
  remove(directory: string): void;
  /**
   * Resolves `true` once every change made before the call has been
   * reported through `changed`, or once the watches were made anew after
   * dropping events and that miss was reported; `false` when neither can be shown (the
   * watcher was lost or closed, the signal aborted, or the cookie's event did
   * not come within {@link FENCE_TIMEOUT_MS}).
   */
  fence(signal?: AbortSignal): Promise<boolean>;
  /** Ends every watch and pending fence, and removes the fence directory when it was made here. */
  close(): Promise<void>;
  /**
   * Makes every watch anew, for a recursive watch that may have missed a
   * directory's creation (and so never watches it): its caller found such a
   * directory by looking at the tree. Ends with a miss reported (see
   * {@link WatchHandlers.missed}), or the loss. Absent where watches are
   * added one directory at a time (the caller adds the directory itself).
   */
  remake?(reason: string): void;
}

/** Options of a {@link WatchTree}. */
export interface WatchTreeOptions {
  /**
   * Where fence cookies are written; neither the root, nor inside it, nor
   * holding it. Default: a new directory the watcher makes for itself (in the
   * OS temporary directory, unless the runtime's watcher says otherwise),
   * removed by `close`.
   */
  readonly fenceDirectory?: string;
}

/**
 * Starts a {@link TreeWatcher} over `root` (an absolute real path) that
 * reports to `handlers`: a runtime's watcher, or one a host or a test brings.
 */
export type WatchTree = (
  root: string,
  handlers: WatchHandlers,
  options: WatchTreeOptions,
) => Promise<TreeWatcher>;

/** How long a fence waits for its cookie's events before it resolves `false`. */
export const FENCE_TIMEOUT_MS = 5_000;

/**
 * A tree watcher made of a runtime's watches and the fences every watcher
 * shares: it makes (or checks) the fence directory, starts the watches with
 * `start`, and on `close` ends the fences, then the watches, then removes the
 * fence directory when it made it.
 *
 * @param makeFenceDirectory Makes a new, empty fence directory for this
 *   watcher alone when none is given (default {@link temporaryFenceDirectory}).
 * @throws {TypeError} when the fence directory is the root, inside it, or holds it.
 * @example
 * ```ts
 * import { fencedWatcher } from "./watch.ts";
 *
 * const root = await Deno.makeTempDir();
 * // Watches that report nothing: every fence times out.
 * const watcher = await fencedWatcher(root, { changed() {}, lost() {} }, {}, () => ({
 *   perDirectory: true,
 *   add() {},
 *   remove() {},
 *   close: () => Promise.resolve(),
 * }));
 * await watcher.close();
 * console.log(await watcher.fence()); // false
 * ```
 */
export async function fencedWatcher(
  root: string,
  handlers: WatchHandlers,
  options: WatchTreeOptions,
  start: (events: FenceEvents) => Watches | Promise<Watches>,
  makeFenceDirectory: () => Promise<string> = temporaryFenceDirectory,
): Promise<TreeWatcher> {
  const given = options.fenceDirectory;
  const made = given === undefined;
  const fenceDirectory = await realpath(made ? await makeFenceDirectory() : given);
  try {
    if (isWithin(fenceDirectory, root)) {
      throw new TypeError(
        `the fence directory ${fenceDirectory} is inside the watched tree ${root}: ` +
          "its cookie files would show in searches; choose a directory outside it",
      );
    }
    if (isWithin(root, fenceDirectory)) {
      throw new TypeError(
        `the fence directory ${fenceDirectory} holds the watched tree ${root}: ` +
          "choose a directory beside it, not above it",
      );
    }
    const fences = new Fences(fenceDirectory, handlers);
    const watches = await start(fences);
    if (watches.remake !== undefined) fences.remake = (reason) => watches.remake?.(reason);
    return {
      perDirectory: watches.perDirectory,
      add: (directory) => watches.add(directory),
      remove: (directory) => watches.remove(directory),
      fence: (signal) => fences.fence(signal),
      ...(watches.remake === undefined
        ? {}
        : { remake: (reason: string) => watches.remake?.(reason) }),
      async close() {
        if (fences.closed) return;
        fences.close();
        await fences.settled();
        await watches.close();
        if (made) await rm(fenceDirectory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (made) await rm(fenceDirectory, { recursive: true, force: true });
    throw error;
  }
}

/**
 * A new directory in the OS temporary directory, for a watcher's fences:
 * the default of {@link fencedWatcher}.
 */
export function temporaryFenceDirectory(): Promise<string> {
  return mkdtemp(join(tmpdir(), "openwork-index-"));
}

/** Whether `path` is `directory` or below it (both absolute, normalized). */
export function isWithin(path: string, directory: string): boolean {
  return path === directory ||
    path.startsWith(directory.endsWith(sep) ? directory : directory + sep);
}

/** The runtime half of a tree watcher: its watches, without the fences (see {@link fencedWatcher}). */
export interface Watches {
  /** As {@link TreeWatcher.perDirectory}. */
  readonly perDirectory: boolean;
  /** As {@link TreeWatcher.add}. */
  add(directory: string): void;
  /** As {@link TreeWatcher.remove}. */
  remove(directory: string): void;
  /** Ends every watch (and, for an event stream, waits for it to end). */
  close(): Promise<void>;
  /**
   * Makes every watch anew, when the runtime's watch may drop events without
   * a word: a fence whose cookie's event does not come in time asks for it.
   * Ends with {@link FenceEvents.remade}, or {@link FenceEvents.lose} when
   * the watch cannot be made. Absent: such a fence fails.
   */
  remake?(reason: string): void;
}

/** Where a runtime's watches send what they see (see {@link fencedWatcher}). */
export interface FenceEvents {
  /** The fence directory (a real path): events below it are cookies, not changes. */
  readonly directory: string;
  /** Whether the watcher was closed. */
  readonly closed: boolean;
  /** A change below the root. */
  changed(path: string): void;
  /** An event for a path in the fence directory (or for the directory itself). */
  cookie(path: string): void;
  /** The watches can no longer vouch for their events. */
  lose(reason: string): void;
  /** Events may have been dropped, but the watches are still in place (see {@link WatchHandlers.missed}). */
  miss(reason: string): void;
  /**
   * Events were dropped, and the watches have been made anew since: reports
   * the miss, then ends every fence under way with `true`, as its cookie's
   * events may have been among those dropped. A fence's caller reads the
   * misses after its fence (see {@link WatchHandlers.missed}), so it looks at
   * the whole tree again before it relies on what was reported.
   */
  remade(reason: string): void;
}

/** One waiter for a cookie's next event. */
type Waiter = (seen: boolean) => void;

/**
 * The cookies of one watcher and the state they depend on: whether the
 * watcher still vouches for its events (not lost, not closed).
 */
class Fences implements FenceEvents {
  /** Fences waiting for their cookie's next event, by cookie name. */
  readonly #waiting = new Map<string, Waiter>();
  /** Unique to this watcher, so that a shared fence directory never confuses two. */
  readonly #prefix = `fence-${randomUUID().slice(0, 8)}-`;
  /** Fences under way, which `settled` waits for. */
  readonly #pending = new Set<Promise<boolean>>();
  #count = 0;
  #lost = false;
  closed = false;
  /** The watches' {@link Watches.remake}, once they are started. */
  remake: ((reason: string) => void) | undefined;

  constructor(readonly directory: string, readonly handlers: WatchHandlers) {}

  /** Reports a change below the root, unless the watcher was closed. */
  changed(path: string): void {
    if (!this.closed) this.handlers.changed(path);
  }

  /** Reports the loss once and fails every fence, now and later. */
  lose(reason: string): void {
    if (this.#lost || this.closed) return;
    this.#lost = true;
    this.#settleAll();
    this.handlers.lost(reason);
  }

  /** Reports missed events, or the loss when the handlers take no misses. */
  miss(reason: string): void {
    if (this.#lost || this.closed) return;
    if (this.handlers.missed === undefined) this.lose(reason);
    else this.handlers.missed(reason);
  }

  remade(reason: string): void {
    this.miss(reason);
    if (this.#lost || this.closed) return;
    const waiters = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const waiter of waiters) waiter(true);
  }

  /** An event for `path` in the fence directory: wakes the fence waiting on that cookie. */
  cookie(path: string): void {
    if (path === this.directory) {
      // The directory itself was removed or renamed: cookies can no longer be seen.
      this.lose(`the fence directory ${this.directory} changed`);
      return;
    }
    if (dirname(path) !== this.directory) return;
    const name = basename(path);
    const waiter = this.#waiting.get(name);
    if (waiter === undefined) return;
    this.#waiting.delete(name);
    waiter(true);
  }

  /** Ends every pending fence with `false`; later fences resolve `false` at once. */
  close(): void {
    this.closed = true;
    this.#settleAll();
  }

  #settleAll(): void {
    const waiters = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const waiter of waiters) waiter(false);
  }

  /** Resolves once every fence under way has ended (after `close`, at once). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }

  fence(signal?: AbortSignal): Promise<boolean> {
    if (this.#lost || this.closed || signal?.aborted) return Promise.resolve(false);
    const fence = this.#fence(signal);
    this.#pending.add(fence);
    return fence.finally(() => this.#pending.delete(fence));
  }

  async #fence(signal?: AbortSignal): Promise<boolean> {
    const name = `${this.#prefix}${++this.#count}`;
    const path = join(this.directory, name);
    const timers: ReturnType<typeof setTimeout>[] = [];
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<false>((resolve) => {
      onAbort = () => resolve(false);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    // Referenced: a pending fence (a search waiting for its answer) keeps
    // the process alive, which the watches alone (not persistent) do not.
    const deadline = () =>
      Promise.race([
        aborted,
        new Promise<false>((resolve) => timers.push(setTimeout(resolve, FENCE_TIMEOUT_MS, false))),
      ]);
    // One deadline for the whole fence: it ends whichever wait is pending.
    let expired = deadline();
    let remade = false;
    /** Waits for a cookie's event; when none comes in time, has the watches made anew, once. */
    const wait = async (event: Promise<boolean>) => {
      if (await Promise.race([event, expired])) return true;
      // The runtime may have dropped events without a word: a watch that can be made anew is,
      // and the fence ends once it is (see `remade`), or is lost.
      const remake = this.remake;
      if (remade || remake === undefined || signal?.aborted || this.#lost || this.closed) {
        return false;
      }
      remade = true;
      expired = deadline();
      remake(`no event of a fence came within ${FENCE_TIMEOUT_MS} ms`);
      return await Promise.race([event, expired]);
    };
    /** Waits for the cookie's next event; registered before the change that causes it. */
    const next = () =>
      new Promise<boolean>((resolve) => {
        if (this.#lost || this.closed) resolve(false);
        else this.#waiting.set(name, resolve);
      });
    let written = false;
    try {
      const created = next();
      try {
        await writeFile(path, "", { flag: "wx" });
        written = true;
      } catch {
        return false;
      }
      if (!await wait(created)) return false;
      // Waiting for the removal's event as well makes the fence span two
      // reads of the event queue: a recursive watcher adds its watches on the
      // directories created in one read before it makes the next, so every
      // directory whose creation came before the fence is watched once it resolves.
      const removed = next();
      try {
        await rm(path, { force: true });
      } catch {
        return false;
      }
      written = false;
      return await wait(removed);
    } finally {
      this.#waiting.delete(name);
      for (const timer of timers) clearTimeout(timer);
      if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
      if (written) await rm(path, { force: true }).catch(() => {});
    }
  }
}

/** The message of an error, for a loss reason. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
