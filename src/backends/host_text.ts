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
    const text = new BoundedText();
    for (let chunk = text.next(); chunk !== null; chunk = text.next()) {
      text.took((await handle.read(chunk, 0, chunk.length, null)).bytesRead);
    }
    return text.text();
  } catch {
    return null;
  } finally {
    await handle?.close().catch(() => {});
  }
}

/**
 * A file's bytes, read in chunks up to one byte past the ignore files' limit.
 * The size a file reports is not a bound (a /proc file reports 0, and
 * /proc/self/pagemap reads on for hundreds of gigabytes), and a buffer of the
 * whole limit for every read would cost each search a megabyte per file.
 */
class BoundedText {
  readonly #chunks: Uint8Array[] = [];
  #total = 0;
  #ended = false;

  /** The buffer for the next read; `null` once the file ended or passed the limit. */
  next(): Uint8Array | null {
    const left = IGNORE_FILE_MAX_BYTES + 1 - this.#total;
    if (this.#ended || left <= 0) return null;
    const chunk = new Uint8Array(Math.min(TEXT_CHUNK_BYTES, left));
    this.#chunks.push(chunk);
    return chunk;
  }

  /** Records that the last read filled `count` bytes of its buffer (0: the end). */
  took(count: number): void {
    const last = this.#chunks.length - 1;
    this.#chunks[last] = this.#chunks[last].subarray(0, count);
    this.#total += count;
    if (count === 0) this.#ended = true;
  }

  /** The text read, or `null` when it passed the limit. */
  text(): string | null {
    if (this.#total > IGNORE_FILE_MAX_BYTES) return null;
    const bytes = new Uint8Array(this.#total);
    let at = 0;
    for (const chunk of this.#chunks) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    return new TextDecoder().decode(bytes);
  }
}

/** How much a read of a host file asks for at once. */
const TEXT_CHUNK_BYTES = 16 * 1024;

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
    const text = new BoundedText();
    for (let chunk = text.next(); chunk !== null; chunk = text.next()) {
      text.took(readSync(descriptor, chunk, 0, chunk.length, null));
    }
    return text.text();
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
