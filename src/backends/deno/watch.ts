/**
 * The search index's tree watcher under Deno: one recursive `Deno.watchFs`
 * over the root and the fence directory (see `index/watch.ts` for the
 * contract and the fences).
 *
 * @module
 */
import "./permission_query.ts"; // registers Deno's answer to permissionState
import { realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import {
  fencedWatcher,
  type FenceEvents,
  isWithin,
  type TreeWatcher,
  type Watches,
  type WatchHandlers,
  type WatchTreeOptions,
} from "../../index/watch.ts";
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
 */
function denoWatches(root: string, fences: FenceEvents): Promise<Watches> {
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
  return new Promise((resolve, reject) => {
    // The watches are added on a thread of their own (see `watch_worker.ts`).
    const worker = new Worker(new URL("./watch_worker.ts", import.meta.url), { type: "module" });
    let ended: () => void = () => {};
    const end = new Promise<void>((done) => (ended = done));
    let started = false;
    worker.onmessage = ({ data }: MessageEvent<WorkerMessage>) => {
      if ("started" in data) {
        started = true;
        resolve(watches);
        return;
      }
      if ("ended" in data) {
        ended();
        worker.terminate();
        const reason = data.error === undefined
          ? "the watcher stopped"
          : `the watcher failed: ${data.error}`;
        if (started) fences.lose(reason);
        else reject(new Error(reason));
        return;
      }
      if (data.overrun) {
        // Dropped after the watcher took them in: the watches it adds for new directories are
        // in place all the same, so what is lost is the news, not the watch.
        fences.miss(
          "a burst of changes may have overflowed the runtime's event channel (16 events; " +
            "it drops what does not fit)",
        );
      }
      for (const event of data.events) {
        if (event.flag === "rescan") {
          fences.lose("the watcher's event queue overflowed");
          continue;
        }
        if (event.kind === "access") continue;
        if (event.kind !== "modify") real.clear();
        for (const path of event.paths) {
          if (isWithin(path, fences.directory)) fences.cookie(path);
          else if (isWithin(path, root)) report(path);
        }
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      ended();
      worker.terminate();
      const reason = `the watcher's thread failed: ${event.message}`;
      if (started) fences.lose(reason);
      else reject(new Error(reason));
    };
    worker.postMessage({ paths: [root, fences.directory] });
    const watches: Watches = {
      perDirectory: false,
      add() {},
      remove() {},
      async close() {
        worker.postMessage("close");
        await end;
      },
    };
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
