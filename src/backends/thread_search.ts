/**
 * The tree search and tree glob of the file-system contract on the calling
 * thread, over a backend's own asynchronous reads: the implementation of a
 * backend without workers (the in-memory one), and the first stretch and the
 * fallback of one with workers.
 *
 * @module
 */
import { posix } from "node:path";
import { ToolError } from "../errors.ts";
import { checkedChild } from "../path/mod.ts";
import type { CheckedPath } from "../path/mod.ts";
import type { AsyncFileSystem, TreeGlob, TreeHit, TreeSearch } from "./filesystem.ts";
import { compileMatcher } from "../search/matcher.ts";
import type { LineMatcher } from "../search/matcher.ts";
import { scanBytesPausing, SKIPPED } from "../search/scan.ts";
import type { ScanRequest } from "../search/scan.ts";
import { globFilter, globMatcher } from "../search/glob_filter.ts";
import { isPassedOver, Walk } from "../search/walk.ts";
import type { IgnoreState, WalkEntry, WalkIO } from "../search/walk.ts";

/** What the search on this thread reads through. */
export type ThreadReads = Pick<AsyncFileSystem, "stat" | "readDir" | "readFile">;

/** Files read at once while scanning on this thread. */
const READ_AHEAD = 8;

/** The walk's view of a backend, over checked paths. */
export function checkedWalkIO(filesystem: ThreadReads): WalkIO<CheckedPath> {
  return {
    async readDir(directory) {
      try {
        return await filesystem.readDir(directory);
      } catch (error) {
        if (isPassedOver((error as { code?: unknown }).code)) return null;
        throw error;
      }
    },
    child: (directory, name, kind) => checkedChild(directory, name, kind),
    async readText(file, maxBytes) {
      try {
        return new TextDecoder().decode(await filesystem.readFile(file, { maxBytes }));
      } catch {
        return null;
      }
    },
  };
}

/**
 * The walk from a checked start on this thread, one entry at a time: the
 * tree below a directory, or a file alone. It remembers the last entry it
 * gave, so that another walk can go on after it, or this one later.
 */
export class ThreadWalk {
  /** The display path of the last entry given, if any. */
  last: string | null = null;
  /** Whether the walk has given its last entry. */
  done = false;
  #file: WalkEntry<CheckedPath> | null;
  /** Entries given back ({@link giveBack}), given again before the walk goes on. */
  #given: WalkEntry<CheckedPath>[] = [];

  private constructor(
    readonly walk: Walk<CheckedPath> | null,
    file: WalkEntry<CheckedPath> | null,
  ) {
    this.#file = file;
  }

  /** Starts a walk at a checked file or directory. */
  static async start(
    filesystem: ThreadReads,
    start: CheckedPath,
    ignore: IgnoreState | null,
    signal: AbortSignal,
  ): Promise<ThreadWalk> {
    const info = await filesystem.stat(start);
    if (info.kind === "file") {
      const file = { path: start, display: start.display, relative: posix.basename(start.display) };
      return new ThreadWalk(null, { ...file, kind: "file" });
    }
    if (info.kind !== "directory") {
      throw new ToolError(
        "not_a_regular_file",
        `${start.display} is neither a file nor a directory.`,
      );
    }
    const walk = new Walk(checkedWalkIO(filesystem), { from: start.display, ignore }, signal);
    await walk.enter(start, start.display);
    return new ThreadWalk(walk, null);
  }

  /** Whether the start is a directory. */
  get isTree(): boolean {
    return this.walk !== null;
  }

  /** The next entry, or `null` at the end. */
  async next(): Promise<WalkEntry<CheckedPath> | null> {
    const entry = this.#given.shift() ??
      (this.walk === null ? this.#file : await this.walk.next());
    this.#file = null;
    if (entry === null) this.done = true;
    else this.last = entry.display;
    return entry;
  }

  /**
   * Takes back `entries`, the last ones given, in order: they are given
   * again, and {@link last} is `last` again, the entry given before them.
   */
  giveBack(entries: readonly WalkEntry<CheckedPath>[], last: string | null): void {
    this.#given.unshift(...entries);
    if (entries.length > 0) [this.last, this.done] = [last, false];
  }
}

/** What {@link scanFile} answers for a file over its `largest`: it is left to another thread. */
const LEFT = Symbol("left to another thread");

/**
 * Scans one file through the backend's plain read; one larger than
 * `largest` bytes (when under the request's own bound) is not scanned here:
 * {@link LEFT}.
 */
async function scanFile(
  filesystem: ThreadReads,
  path: CheckedPath,
  matcher: LineMatcher,
  request: ScanRequest,
  signal: AbortSignal,
  largest: number = Number.POSITIVE_INFINITY,
): Promise<TreeHit | null | typeof LEFT> {
  let bytes: Uint8Array;
  try {
    const maxBytes = Math.min(request.maxBytes, largest);
    bytes = await filesystem.readFile(path, { maxBytes, signal });
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof ToolError && error.code === "too_large") {
      if (largest < request.maxBytes) return LEFT;
      return { display: path.display, result: SKIPPED.too_large };
    }
    if (error instanceof ToolError && error.code !== "backend_failure") {
      return { display: path.display, result: SKIPPED.unreadable };
    }
    throw error;
  }
  // This thread serves the host too: a large file under a costly pattern is scanned in steps.
  const result = await scanBytesPausing(bytes, matcher, request, signal);
  return result.matches > 0 || result.skip !== undefined ? { display: path.display, result } : null;
}

/** How {@link scanHere} stops before the end of its walk, when it may. */
export interface ScanHereLimit {
  /** Files taken from the walk, after which it stops (there, another search may go on after it). */
  readonly files: number;
  /**
   * Bytes of the largest file scanned here: a larger one, and the entries
   * after it, are given back to the walk, and the scan stops before it.
   * A single long line is matched whole, so a file scanned on the host's
   * thread is kept small, and a larger one left to the workers.
   */
  readonly largestFile: number;
}

/**
 * Scans the files of a walk on this thread, a few reads at once, yielding
 * in walk order the files that matched or were skipped; stops at `limit`
 * when given (there, another search may go on after it).
 */
export async function* scanHere(
  filesystem: ThreadReads,
  walk: ThreadWalk,
  search: TreeSearch,
  signal: AbortSignal,
  limit?: ScanHereLimit,
): AsyncGenerator<TreeHit[]> {
  const { request } = search;
  const matcher = compileMatcher(request.pattern, { caseInsensitive: request.caseInsensitive });
  const accept = globFilter(search.glob);
  const files = limit?.files ?? Number.POSITIVE_INFINITY;
  // Each scan in flight, with the entries the walk gave from the file on and the entry before it.
  const pending: {
    scan: Promise<TreeHit | null | typeof LEFT>;
    walked: WalkEntry<CheckedPath>[];
    before: string | null;
  }[] = [];
  let taken = 0;
  try {
    while (true) {
      while (pending.length < READ_AHEAD && taken < files) {
        const before = walk.last;
        const entry = await walk.next();
        if (entry === null) break;
        for (const { walked } of pending) walked.push(entry);
        if (entry.kind !== "file" || !accept(entry.display)) continue;
        taken++;
        const scan = scanFile(filesystem, entry.path, matcher, request, signal, limit?.largestFile);
        // Marked handled at once: a read that fails while queued is still awaited below.
        scan.catch(() => {});
        pending.push({ scan, walked: [entry], before });
      }
      if (pending.length === 0) return;
      const next = pending[0];
      const hit = await next.scan;
      if (hit === LEFT) {
        // The file and every entry after it go back to the walk, for the workers to go on from.
        walk.giveBack(next.walked, next.before);
        return;
      }
      pending.shift();
      if (hit !== null) yield [hit];
    }
  } finally {
    // Reads already in flight are awaited, never left floating.
    await Promise.allSettled(pending.map(({ scan }) => scan));
  }
}

/**
 * Matches the entries of a walk on this thread against a glob, yielding the
 * matching paths in walk order.
 */
export async function* globHere(walk: ThreadWalk, glob: TreeGlob): AsyncGenerator<string[]> {
  const matches = globMatcher(glob.pattern);
  for (let entry; (entry = await walk.next()) !== null;) {
    if (matches(entry.relative)) yield [entry.display];
  }
}

/**
 * The tree search and tree glob of a backend without workers of its own:
 * walked and scanned on the calling thread, over the backend's own reads.
 *
 * @example
 * ```ts
 * import { createMemoryFileSystem, threadSearches } from "@openwork/tools";
 * const memory = createMemoryFileSystem();
 * const { searchTree, globTree } = threadSearches(memory);
 * ```
 */
export function threadSearches(
  filesystem: ThreadReads,
): Pick<AsyncFileSystem, "searchTree" | "globTree"> {
  return {
    async *searchTree(start, search, signal = new AbortController().signal) {
      const walk = await ThreadWalk.start(filesystem, start, search.ignore, signal);
      yield* scanHere(filesystem, walk, search, signal);
    },
    async *globTree(start, glob, signal = new AbortController().signal) {
      const walk = await ThreadWalk.start(filesystem, start, glob.ignore, signal);
      yield* globHere(walk, glob);
    },
  };
}
