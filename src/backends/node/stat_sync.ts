/**
 * The Node backend's synchronous metadata lookup for the search index's
 * stamps in its workers: `lstatSync`.
 *
 * @module
 */
import { lstatSync } from "node:fs";
import type { StampStat } from "../workers/unit.ts";

/** The metadata of `real`, not following a final link; `null` when it cannot be looked up. */
export function stampStatSync(real: string): StampStat | null {
  const stats = lstatSync(real, { throwIfNoEntry: false });
  if (stats === undefined) return null;
  return {
    kind: stats.isFile() ? "file" : stats.isDirectory() ? "directory" : "other",
    dev: stats.dev,
    ino: stats.ino,
    size: stats.size,
    mtimeMs: stats.mtimeMs,
    ctimeMs: stats.ctimeMs,
  };
}
