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

/**
 * The most line edits the diff looks for; a change with more is reported as
 * one whole-file hunk. Rewriting every line of a 10,000-line file took 25 s
 * of diffing without a bound.
 */
export const MAX_DIFF_EDITS: number = 2000;

/** The lines of a text as a diff sees them: each with its end, a missing last end kept out. */
function linesOf(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The diff's marker after a last line that has no line end. */
const NO_NEWLINE = "\\ No newline at end of file";

/**
 * A patch of one hunk that replaces the whole of `before` with `after`, in
 * the diff's own conventions: starts at line 1, and the no-newline marker
 * after a last line without its end.
 */
function wholeFileHunk(before: string, after: string) {
  const side = (text: string, sign: string) => {
    const lines = linesOf(text).map((line) => `${sign}${line}`);
    if (text !== "" && !text.endsWith("\n")) lines.push(NO_NEWLINE);
    return lines;
  };
  const old = side(before, "-");
  const now = side(after, "+");
  return {
    hunks: [{
      oldStart: 1,
      oldLines: linesOf(before).length,
      newStart: 1,
      newLines: linesOf(after).length,
      lines: [...old, ...now],
    }],
  };
}

/** The artifact for a change of `path` from `before` (`null`: created) to `after`. */
export async function fileChange(
  path: string,
  before: string | null,
  after: string,
): Promise<FileChangeArtifact> {
  // Loaded on first use: hosts that only read and search never load the diff engine.
  const { structuredPatch } = await import("diff");
  // The diff costs time in proportion to the lines times the edits: bounded, so that rewriting
  // every line of a large file cannot hold the host's thread for minutes. Past the bound the
  // change is one hunk that removes every old line and adds every new one.
  const patch = structuredPatch(path, path, before ?? "", after, "", "", {
    context: 3,
    maxEditLength: MAX_DIFF_EDITS,
  }) ?? wholeFileHunk(before ?? "", after);
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
