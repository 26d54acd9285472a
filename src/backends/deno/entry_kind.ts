/**
 * What a Deno `FileInfo` or `DirEntry` describes, as an entry kind.
 *
 * @module
 */
import type { EntryKind } from "../filesystem.ts";

/** The entry kind of a Deno `FileInfo` or `DirEntry`; symbolic links are reported, not followed. */
export function kindOf(
  info: { isFile: boolean; isDirectory: boolean; isSymlink: boolean },
): EntryKind {
  if (info.isSymlink) return "symlink";
  if (info.isFile) return "file";
  if (info.isDirectory) return "directory";
  return "other";
}
