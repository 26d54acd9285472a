/**
 * Reading the host user's git configuration for the runtime backends: small
 * files outside the session's roots, by absolute path, for the walk's ignore
 * rules only.
 *
 * @module
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { readUserExcludes } from "../search/git_config.ts";
import { IGNORE_FILE_MAX_BYTES } from "../search/walk.ts";

/**
 * A small regular file's text, following symbolic links (dotfiles often are
 * ones); `null` when it cannot be read. O_NONBLOCK: a FIFO put there never
 * blocks the open.
 */
async function readHostText(path: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > IGNORE_FILE_MAX_BYTES) return null;
    return await handle.readFile("utf8");
  } catch {
    return null;
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** The host user's global git excludes, found from `environment` (see `search/git_config.ts`). */
export function hostGitExcludes(
  environment: Readonly<Record<string, string>>,
): Promise<string | null> {
  return readUserExcludes(environment, readHostText);
}
