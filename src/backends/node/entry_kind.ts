/**
 * What a Node `Stats` or `Dirent` describes, as an entry kind.
 *
 * @module
 */
import type { EntryKind } from "../filesystem.ts";

/** The entry kind of a Node `Stats` or `Dirent`; symbolic links are reported, not followed. */
export function kindOf(
  entry: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean },
): EntryKind {
  if (entry.isSymbolicLink()) return "symlink";
  if (entry.isFile()) return "file";
  if (entry.isDirectory()) return "directory";
  return "other";
}
