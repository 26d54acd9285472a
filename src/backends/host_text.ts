/**
 * Reading the host user's git configuration for the runtime backends: small
 * files outside the session's roots, by absolute path, for the walk's ignore
 * rules only.
 *
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
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
    // The size a file reports is not a bound: a /proc file reports 0, and
    // /proc/self/pagemap reads on for hundreds of gigabytes.
    const bytes = new Uint8Array(IGNORE_FILE_MAX_BYTES + 1);
    let filled = 0;
    while (filled < bytes.length) {
      const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, null);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return textWithin(bytes, filled);
  } catch {
    return null;
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** The text of the first `filled` bytes, or `null` when they pass the ignore files' limit. */
function textWithin(bytes: Uint8Array, filled: number): string | null {
  if (filled > IGNORE_FILE_MAX_BYTES) return null;
  return new TextDecoder().decode(bytes.subarray(0, filled));
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
    const bytes = new Uint8Array(IGNORE_FILE_MAX_BYTES + 1);
    let filled = 0;
    while (filled < bytes.length) {
      const read = readSync(descriptor, bytes, filled, bytes.length - filled, null);
      if (read === 0) break;
      filled += read;
    }
    return textWithin(bytes, filled);
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
 * `environment` (see `search/git_config.ts`) that this process reads now as
 * small regular files: the paths a host grants read of. A grant of a path
 * covers all below it, so a directory, or a link to one, is never among
 * them, whatever a config names (`core.excludesFile = /`, `~`); nor is a
 * file missing now.
 */
export function hostGitExcludesPaths(environment: Readonly<Record<string, string>>): string[] {
  const read: string[] = [];
  userExcludesPaths(environment, (path) => {
    const text = readHostTextSync(path);
    if (text !== null) read.push(path);
    return text;
  });
  return read;
}
