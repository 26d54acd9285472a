/**
 * Reading the host user's git configuration for the runtime backends: small
 * files outside the session's roots, by absolute path, for the walk's ignore
 * rules only.
 *
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { permissionState } from "../runtime/checks.ts";
import { readUserExcludes, userExcludesPaths } from "../search/git_config.ts";
import { IGNORE_FILE_MAX_BYTES } from "../search/walk.ts";

/**
 * A small regular file's text, following symbolic links (dotfiles often are
 * ones); `null` when it cannot be read. O_NONBLOCK: a FIFO put there never
 * blocks the open. A path Deno does not grant is not read: reading it
 * would prompt on a terminal.
 */
async function readHostText(path: string): Promise<string | null> {
  if (!mayRead(path)) return null;
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

/** {@link readHostText}, at once. */
function readHostTextSync(path: string): string | null {
  if (!mayRead(path)) return null;
  let descriptor: number | undefined;
  try {
    descriptor = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    const stats = fstatSync(descriptor);
    if (!stats.isFile() || stats.size > IGNORE_FILE_MAX_BYTES) return null;
    return readFileSync(descriptor, "utf8");
  } catch {
    return null;
  } finally {
    if (descriptor !== undefined) {
      try {
        closeSync(descriptor);
      } catch {
        // Closed or gone: nothing to release.
      }
    }
  }
}

/** Whether the runtime lets this process read `path` without asking. */
function mayRead(path: string): boolean {
  const state = permissionState({ name: "read", path });
  return state === null || state === "granted";
}

/**
 * The files a session reads for the host user's global git excludes under
 * `environment`, as far as this process can read them now (see
 * `search/git_config.ts`): the paths a host grants read of.
 */
export function hostGitExcludesPaths(environment: Readonly<Record<string, string>>): string[] {
  return userExcludesPaths(environment, readHostTextSync);
}
