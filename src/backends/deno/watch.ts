/**
 * The search index's tree watcher under Deno: one recursive `Deno.watchFs`
 * over the root and the fence directory (see `backends/watch.ts` for the
 * contract and the fences).
 *
 * @module
 */
import "./permission_query.ts"; // registers Deno's answer to permissionState
import { realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
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
import { makeFenceDirectory } from "./index_permissions.ts";

/**
 * Watches `root` (an absolute real path) and the fence directory with one
 * recursive `Deno.watchFs`, and reports changes to `handlers`. The watch
 * covers new directories itself: `perDirectory` is false. Without a fence
 * directory given, it makes one in the OS temporary directory, or, where the
 * runtime does not grant that, in the one `denoPermissionFlags` grants
 * (see `index_permissions.ts`).
 *
 * @throws {TypeError} when the fence directory is the root, inside it, or holds it.
 * @example
 * ```ts
 * import { watchTreeDeno } from "./watch.ts";
 *
 * const root = await Deno.realPath(await Deno.makeTempDir());
 * const seen: string[] = [];
 * const watcher = await watchTreeDeno(root, {
 *   changed: (path) => seen.push(path),
 *   lost: () => {},
 * });
 * await Deno.writeTextFile(`${root}/a.txt`, "a");
 * if (await watcher.fence()) console.log(seen.includes(`${root}/a.txt`)); // true
 * await watcher.close();
 * ```
 */
export function watchTreeDeno(
  root: string,
  handlers: WatchHandlers,
  options: WatchTreeOptions = {},
): Promise<TreeWatcher> {
  return fencedWatcher(
    root,
    handlers,
    options,
    (fences) => denoWatches(root, fences),
    () => makeFenceDirectory(root),
  );
}

/** The module of the thread that holds the watch. */
const WATCH_WORKER = new URL("./watch_worker.ts", import.meta.url);

/**
 * One recursive `Deno.watchFs` over the root and the fence directory.
 *
 * Its backend (notify's inotify watcher) follows symbolic links to
 * directories when it adds recursive watches, and keeps one path per
 * watched directory: a directory reachable both directly and through a link
 * in the tree may report its events under the link's path. So each event's
 * directory is also resolved to its real path, and the real path is
 * reported as well when it differs and lies in the tree.
 *
 * Events of kind `access` are not reported: reading a file is not a change,
 * and every write that changes content also yields a `modify` event.
 *
 * When the kernel's event queue overflows, the events it dropped may include
 * the creation of a directory, which the watch then never covers. The
 * runtime does not pass the kernel's overflow on (notify's event for it
 * names no path, and the runtime forwards only events under a watched
 * path); a burst that fills its channel is reported as a miss, and the
 * index, looking at the whole tree again, asks for the watch to be made
 * anew when it finds a directory no event reported ({@link TreeWatcher.remake}).
 * Then the watch is made anew on a new thread (it adds a watch on every
 * directory there is then), the old one is closed, and the miss is reported
 * again: the index looks at the whole tree once more instead of building
 * anew. The same is done when a fence's event does not come in time, and
 * for an event flagged `rescan` (the overflow, should the runtime pass it on).
 *
 * @param worker The module of the watch's thread (a test may wrap it).
 */
export function denoWatches(
  root: string,
  fences: FenceEvents,
  worker: URL = WATCH_WORKER,
): Promise<Watches> {
  /** Real paths of event directories, kept until an event may have changed a link. */
  const real = new Map<string, string | null>();
  const realDirectory = (directory: string): string | null => {
    let found = real.get(directory);
    if (found === undefined) {
      try {
        found = realpathSync(directory);
      } catch {
        found = null;
      }
      real.set(directory, found);
    }
    return found;
  };
  const report = (path: string) => {
    fences.changed(path);
    if (path === root) return;
    const directory = dirname(path);
    const resolved = realDirectory(directory);
    if (resolved !== null && resolved !== directory) {
      const alias = join(resolved, basename(path));
      if (isWithin(alias, root)) fences.changed(alias);
    }
  };
  /** The stream whose end is a loss; another one is being closed, or starting. */
  let current: WatchStream | null = null;
  let remaking = false;
  /** The stream being made anew, settled once it is current or closed. */
  let remade: Promise<unknown> = Promise.resolve();
  let closing = false;
  const onEvents = (stream: WatchStream, events: WatchEvents) => {
    if (events.overrun) {
      // Dropped after the watcher took them in: the watches it adds for new directories are
      // in place all the same, so what is lost is the news, not the watch.
      fences.miss(
        "a burst of changes may have overflowed the runtime's event channel (16 events; " +
          "it drops what does not fit)",
      );
    }
    for (const event of events.events) {
      if (event.flag === "rescan") {
        if (stream === current) remake("the kernel's event queue overflowed");
        continue;
      }
      if (event.kind === "access") continue;
      if (event.kind !== "modify") real.clear();
      for (const path of event.paths) {
        // While the watch is made anew, a cookie proves nothing: changes before it may have been
        // dropped unreported. Its fence ends once the watch is remade and the miss reported. Nor
        // does one of a watch being closed: it holds no order with the current watch's events.
        if (isWithin(path, fences.directory)) {
          if (!remaking && stream === current) fences.cookie(path);
        } else if (isWithin(path, root)) report(path);
      }
    }
  };
  const onEnd = (stream: WatchStream, reason: string) => {
    if (stream === current && !closing) fences.lose(reason);
  };
  const remake = (reason: string) => {
    if (remaking || closing) return;
    remaking = true;
    const old = current;
    remade = startStream(worker, [root, fences.directory], onEvents, onEnd).then((stream) => {
      remaking = false;
      if (closing || fences.closed) return stream.close();
      current = stream;
      void old?.close();
      fences.remade(`${reason}; the watch was made anew`);
    }, (error: unknown) => {
      remaking = false;
      fences.lose(
        `${reason}, and the watch could not be made anew: ${describe(error)}`,
      );
    });
  };
  return startStream(worker, [root, fences.directory], onEvents, onEnd).then((stream) => {
    current = stream;
    return {
      perDirectory: false,
      add() {},
      remove() {},
      remake,
      async close() {
        closing = true;
        await current?.close();
        await remade;
      },
    };
  });
}

/** One watch thread's stream of events. */
interface WatchStream {
  /** Ends the watch and waits for the thread's end. */
  close(): Promise<void>;
}

/** What the thread posts with each batch of events. */
type WatchEvents = Extract<WorkerMessage, { readonly events: unknown }>;

/**
 * Starts a watch thread over `paths`; resolves once its watches are in
 * place, rejects when it ends before.
 */
function startStream(
  module: URL,
  paths: readonly string[],
  onEvents: (stream: WatchStream, events: WatchEvents) => void,
  onEnd: (stream: WatchStream, reason: string) => void,
): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    // The watches are added on a thread of their own (see `watch_worker.ts`).
    const worker = new Worker(module, { type: "module" });
    let ended: () => void = () => {};
    const end = new Promise<void>((done) => (ended = done));
    let started = false;
    const stream: WatchStream = {
      async close() {
        worker.postMessage("close");
        await end;
      },
    };
    const finish = (reason: string) => {
      ended();
      worker.terminate();
      if (started) onEnd(stream, reason);
      else reject(new Error(reason));
    };
    worker.onmessage = ({ data }: MessageEvent<WorkerMessage>) => {
      if ("started" in data) {
        started = true;
        resolve(stream);
      } else if ("ended" in data) {
        finish(
          data.error === undefined ? "the watcher stopped" : `the watcher failed: ${data.error}`,
        );
      } else {
        onEvents(stream, data);
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      finish(`the watcher's thread failed: ${event.message}`);
    };
    worker.postMessage({ paths });
  });
}

/** What the watcher's thread posts. */
type WorkerMessage =
  | { readonly started: true }
  | { readonly ended: true; readonly error?: string }
  | {
    readonly overrun: boolean;
    readonly events: readonly {
      readonly kind: string;
      readonly paths: string[];
      readonly flag: string | null;
    }[];
  };
