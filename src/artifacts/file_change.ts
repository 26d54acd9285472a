/**
 * Builds the `file_change` artifact of a text change: exact line counts,
 * hunks with three lines of context, digests and the prior content.
 *
 * @module
 */
import type { FileChangeArtifact } from "../contract/result.ts";

/** The largest text file `write`, `edit` and undo will overwrite, and `read`'s output cap. */
export const MAX_TEXT_BYTES: number = 1024 * 1024;

/** Hex SHA-256 of a text's UTF-8 bytes. */
export async function sha256Hex(text: string | Uint8Array): Promise<string> {
  const bytes = typeof text === "string" ? new TextEncoder().encode(text) : text;
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The artifact for a change of `path` from `before` (`null`: created) to `after`. */
export async function fileChange(
  path: string,
  before: string | null,
  after: string,
): Promise<FileChangeArtifact> {
  // Loaded on first use: hosts that only read and search never load the diff engine.
  const { structuredPatch } = await import("diff");
  const patch = structuredPatch(path, path, before ?? "", after, "", "", { context: 3 });
  let added = 0;
  let removed = 0;
  const hunks = patch.hunks.map((hunk) => {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) added++;
      else if (line.startsWith("-")) removed++;
    }
    return {
      oldStart: hunk.oldStart,
      oldLines: hunk.oldLines,
      newStart: hunk.newStart,
      newLines: hunk.newLines,
      lines: [...hunk.lines],
    };
  });
  return {
    kind: "file_change",
    changeId: crypto.randomUUID(),
    path,
    change: before === null ? "created" : "modified",
    added,
    removed,
    hunks,
    sha256Before: before === null ? null : await sha256Hex(before),
    sha256After: await sha256Hex(after),
    priorContent: before,
    undone: false,
  };
}
