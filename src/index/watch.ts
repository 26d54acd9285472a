/**
 * Stand-in tree watcher.
 *
 * @module
 */
import { watch } from "node:fs";
import type { FSWatcher } from "node:fs";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeno } from "../runtime/checks.ts";

/** What a tree watcher reports. */
export interface WatchHandlers {
  /** A changed path. */
  changed(path: string): void;
  /** Changes may have been missed. */
  lost(reason: string): void;
}

/** A watcher of a tree. */
export interface TreeWatcher {
  /** Whether directories are added one by one. */
  readonly perDirectory: boolean;
  /** Watches a directory. */
  add(directory: string): void;
  /** Stops watching a directory and those below. */
  remove(directory: string): void;
  /** Resolves once earlier changes are reported. */
  fence(signal?: AbortSignal): Promise<boolean>;
  /** Stops. */
  close(): Promise<void>;
}

/** Watches a tree with node:fs, one watch per directory. */
export function watchTreeNode(
  _root: string,
  handlers: WatchHandlers,
  options: { readonly fenceDirectory?: string } = {},
): Promise<TreeWatcher> {
  const fenceDirectory = options.fenceDirectory ?? mkdtempSync(join(tmpdir(), "openwork-index-"));
  const cookies = new Map<string, () => void>();
  let count = 0;
  let closed = false;
  const seen = (path: string) => {
    if (path.startsWith(fenceDirectory + "/")) {
      cookies.get(path)?.();
      return;
    }
    handlers.changed(path);
  };
  const fence = async () => {
    if (closed) return false;
    const cookie = join(fenceDirectory, `fence-${++count}`);
    const arrived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 5000);
      // Referenced: a pending fence (a search waiting for its answer) keeps the process alive.
      cookies.set(cookie, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    writeFileSync(cookie, "", { flag: "wx" });
    const ok = await arrived;
    cookies.delete(cookie);
    try {
      unlinkSync(cookie);
    } catch { /* gone */ }
    return ok;
  };
  if (isDeno) {
    throw new TypeError("Under Deno, the tree watcher is the Deno one (watchFs).");
  }
  const watchers = new Map<string, FSWatcher>();
  const add = (directory: string) => {
    if (watchers.has(directory)) return;
    const w = watch(directory, { persistent: false }, (_type, name) => {
      seen(name === null ? directory : join(directory, String(name)));
    });
    w.on("error", () => {});
    watchers.set(directory, w);
  };
  add(fenceDirectory);
  return Promise.resolve({
    perDirectory: true,
    add,
    remove(directory: string) {
      for (const [path, w] of watchers) {
        if (path === directory || path.startsWith(directory + "/")) {
          w.close();
          watchers.delete(path);
        }
      }
    },
    fence,
    close() {
      closed = true;
      for (const w of watchers.values()) w.close();
      watchers.clear();
      if (options.fenceDirectory === undefined) {
        rmSync(fenceDirectory, { recursive: true, force: true });
      }
      return Promise.resolve();
    },
  });
}
