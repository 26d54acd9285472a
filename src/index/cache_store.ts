/**
 * A search index's cache: loads the file of its working directory once the
 * directory is found private (`cache_directory.ts`) and the file whole
 * (`cache_format.ts`), and writes it again in the background, a while after
 * the index last changed, or at once when the index closes. One write runs
 * at a time; a write never holds up a search (the checksum is computed a
 * slice at a time).
 *
 * @module
 */
import { clearTimeout, setTimeout } from "node:timers";
import {
  currentUid,
  prepareCacheDirectory,
  readCacheFile,
  writeCacheFile,
} from "./cache_directory.ts";
import { cacheFileName, defaultCacheDirectory } from "../search/index/cache_location.ts";
import { decodeCache, encodeCache, nextCachePiece } from "./cache_format.ts";
import type { CachedIndex } from "./cache_format.ts";
import type { ForbiddenDirectory } from "./cache_directory.ts";

/**
 * How long after the index last changed it is written, in milliseconds: a
 * file of a large tree is hundreds of MB, not to be written after every
 * edit of a busy session (a stale cache costs only the files read again).
 */
const WRITE_DELAY = 10_000;

/** What a cache is made from. */
export interface IndexCacheOptions {
  /** The directory (`null`: memory only; absent: the default for `environment`). */
  readonly directory: string | null | undefined;
  /** The session's environment, where the default directory is found. */
  readonly environment: Readonly<Record<string, string>>;
  /** The real path of the working directory. */
  readonly root: string;
  /** The user the directory and file must belong to (default: this process's). */
  readonly uid?: number;
  /** The most bytes a cache file may have to be read (the index's memory limit; default: no limit). */
  readonly limit?: number;
  /**
   * Real paths of directories the session's commands may write besides the
   * working directory (the sandbox's `writable`): a cache directory inside
   * one is refused, as one inside the working directory is, since a command
   * could rewrite the cache there and hide a file from searches.
   */
  readonly commandWritable?: readonly string[];
}

/** A snapshot of a cache. */
export interface IndexCacheStats {
  /** The cache file, or `null` when the index is kept in memory only. */
  readonly file: string | null;
  /** Builds that started from the cache file (each proved it fresh before answering). */
  readonly loads: number;
  /** Files whose content the last load took from the cache file (the others were read). */
  readonly reused: number;
  /** Times the cache file was written. */
  readonly writes: number;
  /**
   * Why the cache is not used, or why the last cache file was refused or
   * not written (`null` when nothing went wrong, and when `file` is `null`
   * because the host asked for memory only).
   */
  readonly note: string | null;
}

/**
 * The cache of one index. Every failure (no directory, a directory or file
 * that is not private, a file that is not whole, a write that fails) is
 * kept as a note in {@link IndexCache.stats}, never thrown: the index then
 * builds from the tree, or stays in memory.
 *
 * @example
 * ```ts
 * import { IndexCache } from "./cache_store.ts";
 *
 * const cache = new IndexCache({ directory: null, environment: {}, root: "/srv/repo" });
 * console.log(await cache.load()); // null: memory only
 * console.log(cache.stats().file); // null
 * ```
 */
export class IndexCache {
  readonly #root: string;
  readonly #uid: number | null;
  readonly #directory: string | null;
  readonly #limit: number | undefined;
  readonly #forbidden: readonly ForbiddenDirectory[];
  #ready: Promise<boolean> | null = null;
  /** Whether the directory was found unusable. */
  #refused = false;
  #note: string | null = null;
  #loads = 0;
  #reused = 0;
  #writes = 0;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  #snapshot: (() => CachedIndex | null) | null = null;
  /** The write under way, if any. */
  #writing: Promise<void> = Promise.resolve();
  #closed = false;

  /** A cache as `options` say; nothing is touched until it is first used. */
  constructor(options: IndexCacheOptions) {
    this.#root = options.root;
    this.#uid = options.uid ?? currentUid();
    this.#limit = options.limit;
    this.#forbidden = (options.commandWritable ?? []).map((path) => ({
      path,
      what: `${path}, which the sandbox lets commands write`,
    }));
    const directory = options.directory === undefined
      ? defaultCacheDirectory(options.environment)
      : options.directory;
    this.#directory = directory;
    if (options.directory === undefined && directory === null) {
      this.#note = "the environment names no cache directory (XDG_CACHE_HOME or HOME)";
    }
  }

  /** A snapshot; see {@link IndexCacheStats}. */
  stats(): IndexCacheStats {
    const usable = this.#directory !== null && this.#uid !== null && !this.#refused;
    return {
      file: usable ? `${this.#directory}/${cacheFileName(this.#root)}` : null,
      loads: this.#loads,
      reused: this.#reused,
      writes: this.#writes,
      note: this.#note,
    };
  }

  /** Whether the directory can be used: made if missing, and private. */
  #prepare(): Promise<boolean> {
    this.#ready ??= (async () => {
      if (this.#directory === null) return false;
      if (this.#uid === null) {
        this.#note =
          "this process's user id cannot be told, so the cache's owner cannot be checked";
        return false;
      }
      const problem = await prepareCacheDirectory(
        this.#directory,
        this.#uid,
        this.#root,
        this.#forbidden,
      );
      if (problem === null) return true;
      this.#note = problem;
      this.#refused = true;
      return false;
    })();
    return this.#ready;
  }

  /** Whether a write is waiting for its time (the index changed since the last write). */
  get pending(): boolean {
    return this.#snapshot !== null;
  }

  /** Notes how many files' content a load took from the cache file once proved fresh. */
  proved(reused: number): void {
    this.#reused = reused;
  }

  /** Notes why a cache file that loaded was not taken up after all. */
  refused(why: string): void {
    this.#note = `the cache file was refused: ${why}`;
  }

  /**
   * The cached index of the root, or `null` when there is none or it is
   * refused (the reason is noted). The caller proves it fresh before any
   * answer rests on it.
   */
  async load(): Promise<CachedIndex | null> {
    if (!await this.#prepare()) return null;
    const bytes = await readCacheFile(
      this.#directory!,
      cacheFileName(this.#root),
      this.#uid!,
      this.#limit,
      nextCachePiece,
    );
    if (bytes === null) return null;
    if (typeof bytes === "string") {
      this.#note = bytes;
      return null;
    }
    const cached = await decodeCache(bytes, this.#root);
    if (typeof cached === "string") {
      this.#note = `the cache file was refused: ${cached}`;
      return null;
    }
    this.#loads++;
    return cached;
  }

  /**
   * Writes the cache a while from now (again later, if called again
   * meanwhile), from what `snapshot` returns then (`null`: nothing to write).
   */
  later(snapshot: () => CachedIndex | null): void {
    if (this.#closed || this.#directory === null) return;
    this.#snapshot = snapshot;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const take = this.#snapshot;
      this.#snapshot = null;
      if (take !== null) void this.#write(take);
    }, WRITE_DELAY);
    // A host that ends without closing the index is not kept waiting for the write.
    this.#timer.unref?.();
  }

  /**
   * Writes `snapshot` now (after a write under way) unless it is `null`, and
   * writes nothing more after; resolves once written or failed.
   */
  async close(snapshot: CachedIndex | null): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#snapshot = null;
    if (snapshot !== null) await this.#write(() => snapshot);
    await this.#writing;
  }

  #write(take: () => CachedIndex | null): Promise<void> {
    const run = this.#writing.then(async () => {
      const snapshot = take();
      if (snapshot === null || !await this.#prepare()) return;
      try {
        const chunks = await encodeCache(snapshot);
        await writeCacheFile(this.#directory!, cacheFileName(this.#root), chunks);
        this.#writes++;
      } catch (error) {
        this.#note = `the cache file could not be written: ${(error as Error).message}`;
      }
    });
    this.#writing = run.catch(() => {});
    return this.#writing;
  }
}
