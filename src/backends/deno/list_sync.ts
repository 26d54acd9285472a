/**
 * The Deno backend's synchronous directory listing, for the search walk in
 * its workers and on the calling thread: `Deno.readDirSync`. Deno's
 * `node:fs` wraps the same listing in `Dirent`s, and walking the Linux tree
 * with it takes about 1.6 times as long (measured: 140 ms against 86 ms).
 *
 * @module
 */
import type { WalkDirEntry } from "../../search/walk.ts";
import { kindOf } from "./entry_kind.ts";

/** The entries of directory `real`, in any order; throws Deno's error. */
export function listDirectorySync(real: string): WalkDirEntry[] {
  const entries: WalkDirEntry[] = [];
  for (const entry of Deno.readDirSync(real)) {
    entries.push({ name: entry.name, kind: kindOf(entry) });
  }
  return entries;
}
