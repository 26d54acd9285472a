/**
 * Stand-in: the Deno tree watcher.
 *
 * @module
 */
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TreeWatcher, WatchHandlers } from "../../index/watch.ts";

/** Watches a tree with one recursive `Deno.watchFs`. */
export function watchTreeDeno(
  root: string,
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
      Deno.unrefTimer(timer);
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
  const watcher = Deno.watchFs([root, fenceDirectory], { recursive: true });
  const loop = (async () => {
    try {
      for await (const event of watcher) {
        if (event.flag === "rescan") handlers.lost("overflow");
        for (const path of event.paths) seen(path);
      }
    } catch (error) {
      if (!closed) handlers.lost(String(error));
    }
  })();
  return Promise.resolve({
    perDirectory: false,
    add() {},
    remove() {},
    fence,
    async close() {
      closed = true;
      watcher.close();
      await loop;
      if (options.fenceDirectory === undefined) {
        rmSync(fenceDirectory, { recursive: true, force: true });
      }
    },
  });
}
