/**
 * The Node backend's synchronous directory listing, for the search walk in
 * its workers and on the calling thread.
 *
 * @module
 */
import { readdirSync } from "node:fs";
import type { WalkDirEntry } from "../../search/walk.ts";
import { kindOf } from "../real_filesystem.ts";

/** The entries of directory `real`, in any order; throws the runtime's error. */
export function listDirectorySync(real: string): WalkDirEntry[] {
  return readdirSync(real, { withFileTypes: true }).map((entry) => ({
    name: entry.name,
    kind: kindOf(entry),
  }));
}
