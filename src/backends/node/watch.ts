/**
 * The search index's tree watcher under Node: one `fs.watch` per directory
 * the index adds before it lists it, and one on the fence directory (see
 * `backends/watch.ts` for the contract and the fences). libuv puts every watch
 * of the loop on one inotify descriptor, so their events keep one order.
 *
 * @module
 */
import {
  type BigIntStats,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  type FSWatcher,
  lstatSync,
  openSync,
  readFileSync,
  realpathSync,
  watch,
} from "node:fs";
import { basename, join } from "node:path";
import { setImmediate } from "node:timers";
import { isDeno } from "../../runtime/checks.ts";
import {
  describe,
  fencedWatcher,
  type FenceEvents,
  isWithin,
  type TreeWatcher,
  type Watches,
  type WatchHandlers,
  type WatchTreeOptions,
} from "../watch.ts";

/**
 * Watches `root` (an absolute real path) with one `fs.watch` per directory
 * added, and reports changes to `handlers`. Not under Deno, where each
 * `fs.watch` takes an inotify instance of its own: there the watcher is
 * `watchTreeDeno` (`backends/deno/watch.ts`).
 *
 * @throws {TypeError} under Deno, or when the fence directory is the root, inside it, or holds it.
 * @example
 * ```ts ignore
 * import { watchTreeNode } from "./watch.ts";
 * import { mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 *
 * const root = await mkdtemp(join(tmpdir(), "tree-"));
 * const seen: string[] = [];
 * const watcher = await watchTreeNode(root, {
 *   changed: (path) => seen.push(path),
 *   lost: () => {},
 * });
 * watcher.add(root);
 * await writeFile(join(root, "a.txt"), "a");
 * if (await watcher.fence()) console.log(seen.includes(join(root, "a.txt"))); // true
 * await watcher.close();
 * ```
 */
export function watchTreeNode(
  root: string,
  handlers: WatchHandlers,
  options: WatchTreeOptions = {},
): Promise<TreeWatcher> {
  if (isDeno) {
    return Promise.reject(
      new TypeError(
        "node:fs watches are not used under Deno, where each takes an inotify instance " +
          "of its own (a user may hold 128): use Deno's watcher (watchTreeDeno)",
      ),
    );
  }
  return fencedWatcher(root, handlers, options, nodeWatches);
}

/**
 * One `fs.watch` per directory added, and one on the fence directory.
 *
 * Best effort under overflow: libuv drops the kernel's queue-overflow event
 * (IN_Q_OVERFLOW comes with watch descriptor -1, which matches no watcher, so
 * `uv__inotify_read` skips it as stale), so Node never tells that events
 * were lost when the queue (`fs.inotify.max_queued_events`) filled up. What
 * can be seen is the burst: libuv drains the whole queue in one turn of the
 * event loop, so when half a full queue's worth of events arrives in one
 * turn, the queue may have overflowed, and the watcher reports a miss. A queue that
 * overflowed mostly with events of other watches of the process, or of
 * watches already removed, goes unseen.
 */
function nodeWatches(fences: FenceEvents): Watches {
  // Each watch with the identity of the directory it was put on: a watch
  // follows the directory it was put on, not the path, so one on a directory
  // removed since sees nothing of the one made in its place.
  const watches = new Map<string, { watcher: FSWatcher; identity: string }>();
  const burstLimit = Math.max(1, Math.floor(queuedEventsLimit() / 2));
  /** Whether an open descriptor has a path that names it (Linux's `/proc/self/fd`). */
  const descriptors = existsSync("/proc/self/fd");
  let burst = 0;
  const count = () => {
    if (burst++ === 0) setImmediate(() => burst = 0);
    if (burst === burstLimit) {
      // The kernel drops events, not watches: what is lost is the news, and the caller lists
      // every directory again (adding each before, so that one made meanwhile is watched).
      fences.miss(`${burst} events arrived at once: the kernel's event queue may have overflowed`);
    }
  };
  /** Watches `directory` through `target`: its own path, or a descriptor's path naming it. */
  const open = (
    directory: string,
    onEvent: (name: string | null) => void,
    target = directory,
  ): FSWatcher => {
    const watcher = watch(target, { persistent: false }, (_type, name) => {
      count();
      onEvent(typeof name === "string" ? name : null);
    });
    watcher.on("error", (error: unknown) => {
      if (directory === fences.directory) {
        fences.lose(`the fence directory's watch failed: ${describe(error)}`);
        return;
      }
      // A watched directory that was removed is a change, not a loss.
      let exists = true;
      try {
        realpathSync(directory);
      } catch {
        exists = false;
      }
      if (exists) fences.lose(`the watch on ${directory} failed: ${describe(error)}`);
      else fences.changed(directory);
      watcher.close();
      if (watches.get(directory)?.watcher === watcher) watches.delete(directory);
    });
    return watcher;
  };
  const fenceWatch = open(fences.directory, (name) => {
    fences.cookie(name === null ? fences.directory : join(fences.directory, name));
  });
  return {
    perDirectory: true,
    add(directory) {
      if (fences.closed) return;
      let watcher: FSWatcher | undefined;
      try {
        // The watch goes on the directory opened (never through a link), by its descriptor's
        // path where there is one: a link swapped in and out meanwhile cannot point it elsewhere.
        const handle = openSync(directory, DIRECTORY_FLAGS);
        let before: string;
        try {
          before = identity(fstatSync(handle, { bigint: true }));
          if (watches.get(directory)?.identity === before) return;
          const leaf = basename(directory);
          const onEvent = (name: string | null) => {
            if (name === null) return fences.changed(directory);
            fences.changed(join(directory, name));
            // Events on the watched directory itself carry its own name.
            if (name === leaf) fences.changed(directory);
          };
          watcher = open(directory, onEvent, descriptors ? `/proc/self/fd/${handle}` : directory);
        } finally {
          closeSync(handle);
        }
        const kept = watches.get(directory);
        // The old watch ends only once the new one is on: nothing goes unseen between.
        kept?.watcher.close();
        watches.delete(directory);
        if (identityOf(directory) !== before) {
          // Replaced meanwhile: the watch is on a directory no longer at this path.
          watcher.close();
          fences.changed(directory);
          return;
        }
        watches.set(directory, { watcher, identity: before });
      } catch (error) {
        // A watch not kept is closed: its directory may be one no longer at this path.
        if (watcher !== undefined && watches.get(directory)?.watcher !== watcher) watcher.close();
        const code = (error as { code?: unknown }).code;
        // A directory that vanished (or is no longer one, a link say) before it was watched: a change.
        if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") fences.changed(directory);
        else fences.lose(`cannot watch ${directory}: ${describe(error)}`);
      }
    },
    remove(directory) {
      for (const [path, { watcher }] of watches) {
        if (isWithin(path, directory)) {
          watcher.close();
          watches.delete(path);
        }
      }
    },
    close() {
      for (const { watcher } of watches.values()) watcher.close();
      watches.clear();
      fenceWatch.close();
      return Promise.resolve();
    },
  };
}

/**
 * Which directory is at a path: its device, inode and birth time (a file
 * system removing a directory may give its inode number to the next one
 * made), or its change time where the birth time is not known. A link or
 * another file in its place throws `ENOTDIR`.
 */
function identityOf(directory: string): string {
  const stats = lstatSync(directory, { bigint: true });
  if (!stats.isDirectory()) {
    throw Object.assign(new Error(`${directory} is not a directory`), { code: "ENOTDIR" });
  }
  return identity(stats);
}

function identity(stats: BigIntStats): string {
  const born = stats.birthtimeNs > 0n ? stats.birthtimeNs : stats.ctimeNs;
  return `${stats.dev}:${stats.ino}:${born}`;
}

/** How a watched directory is opened: itself, never a link's target. */
const DIRECTORY_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) |
  (constants.O_NOFOLLOW ?? 0);

/** How many events the kernel queues for one inotify instance before it drops them (Linux); otherwise no limit. */
function queuedEventsLimit(): number {
  try {
    const limit = Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8").trim());
    return Number.isSafeInteger(limit) && limit > 0 ? limit : Infinity;
  } catch {
    return Infinity;
  }
}
