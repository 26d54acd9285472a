/**
 * One asynchronous lock per canonical path, so that read → change → commit
 * sequences on the same file never interleave inside this process.
 *
 * @module
 */
import type { CheckedPath } from "./checked_path.ts";
import { unwrapCheckedPath } from "./checked_path.ts";

const tails = new Map<string, Promise<void>>();

/**
 * Runs `task` while holding the lock of `path`'s real location; callers
 * queue in arrival order.
 */
export async function withPathLock<T>(path: CheckedPath, task: () => Promise<T>): Promise<T> {
  const key = unwrapCheckedPath(path);
  const before = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = before.then(() => mine);
  tails.set(key, tail);
  await before;
  try {
    return await task();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}
