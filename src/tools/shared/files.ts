/**
 * File steps shared by `write`, `edit` and undo: reading an existing text
 * file within the cap, and creating missing parents one verified level at a time.
 *
 * @module
 */
import type { ToolSessionContext } from "../../contract/context.ts";
import { ToolError } from "../../errors.ts";
import type { CheckedPath } from "../../path/mod.ts";
import { decodeTextFile, MAX_TEXT_BYTES } from "./text.ts";

/**
 * Reads a file that is about to be replaced: it must be UTF-8 text within
 * 1 MiB, so it can be undone. Returns its text and the exact bytes read, the
 * version the replacement's compare-and-swap expects.
 */
export async function readReplaceableText(
  session: ToolSessionContext,
  path: CheckedPath,
): Promise<{ text: string; bytes: Uint8Array }> {
  const bytes = await session.filesystem.readFile(path, { maxBytes: MAX_TEXT_BYTES }).catch(
    (error) => {
      if (error instanceof ToolError && error.code === "too_large") {
        throw new ToolError(
          "too_large",
          `${path.display} is larger than 1 MiB; only text files up to 1 MiB are changed, so that the change can be undone.`,
        );
      }
      throw error;
    },
  );
  return { text: decodeTextFile(bytes, path.display), bytes };
}

/**
 * Creates the missing parents of `path` from the top down; each level is
 * resolved (and so verified inside the root) before it is made.
 */
export async function createParents(session: ToolSessionContext, path: CheckedPath): Promise<void> {
  const segments = path.display.split("/").slice(0, -1);
  for (let depth = 1; depth <= segments.length; depth++) {
    const level = await session.resolvePath(
      segments.slice(0, depth).join("/"),
      "write",
      "may_create",
    );
    if (level.existed) {
      const info = await session.filesystem.stat(level);
      if (info.kind !== "directory") {
        throw new ToolError("not_a_directory", `${level.display} exists and is not a directory.`);
      }
      continue;
    }
    await session.filesystem.mkdir(level).catch((error) => {
      if (!(error instanceof ToolError && error.code === "already_exists")) throw error;
    });
  }
}
