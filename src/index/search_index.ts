/**
 * The search index of a session's working directory: what lets `grep` and
 * `glob` answer without reading files that cannot match. This module is its
 * lifecycle and freshness; its parts are the entry table (`entries.ts`), the
 * answers (`answers.ts`), the cache (`cache_*.ts`) and the decorator of the
 * file-system contract (`indexed_filesystem.ts`); the parts the search
 * workers run (segments, queries, stamps, jobs) are in `search/index/`.
 *
 * - **Entries.** The files and directories the walk of `src/search/walk.ts`
 *   visits from the working directory (its ignore rules, `.git` never
 *   entered, symbolic links never followed), kept in walk order; for each
 *   directory, the ignore rules in force in its parent, so that a search
 *   starting there is answered only when the rules it computed afresh are
 *   the same.
 * - **Content.** Segments of gram posting lists (`search/index/segment.ts`)
 *   built in the search workers. Binary, over-size and unreadable files are
 *   in no segment: they are candidates of every search, so the scan gives
 *   their result as the walk's would. A changed file's old posting is marked
 *   dead and its new content goes into a new segment; segments mostly dead,
 *   or small, are rebuilt from their live files.
 * - **Answers.** A pattern's required literals (`search/index/query.ts`) select
 *   candidates; the candidates under the start that pass grep's file filter
 *   are scanned by the walk's own scanner in the workers, in walk order, up
 *   to the limit. `glob` matches the entries in walk order. A pattern with no
 *   required literal, a start the index does not hold, or any state the index
 *   cannot vouch for goes to the walk.
 * - **Freshness.** A {@link TreeWatcher} reports changed paths; before every
 *   answer, a fence (the watcher's own cookie) makes sure every change made
 *   before the call has been reported, then the changed directories are
 *   listed again (again down the tree where an ignore file changed) and the
 *   changed files indexed again. Changes made through the session's tools
 *   are marked at once. When the watcher may have missed changes but its
 *   watches stand (a runtime that drops events past a small channel), the
 *   index looks at the whole tree again in the background, keeping what it
 *   has read: every directory listed, every file's stamp
 *   (`search/index/stamps.ts`) compared with the one taken when it was read,
 *   and only the files that differ read again; searches walk meanwhile.
 *   When the watcher cannot vouch at all (overflow, an error, a fence that
 *   does not return), the index is built again in the background and
 *   searches walk meanwhile.
 * - **Cache.** A build reads the cache file of the working directory
 *   (`cache_store.ts`) while it walks the tree, and proves the
 *   cache fresh before any answer rests on it: the entries are the walk's
 *   alone (every directory listed by the walk's rules, its ignore files read
 *   afresh, so a changed rule source changes the entries exactly as a build
 *   would); the stamps of the cached files are taken in the workers
 *   meanwhile; a file the walk met takes the cache's content only when its
 *   stamp now is the one the cache took when it read the file, and is read
 *   again otherwise, as is every file the cache does not hold. A path only
 *   the cache names is never read. A file whose stamp is unchanged
 *   keeps the content the cache gives it: that trust rests on the cache
 *   directory being private. The cache is written after a build, a while
 *   after changes settle, and on close.
 *
 * @module
 */
import type {
  AsyncFileSystem,
  IndexWorkers,
  TreeGlob,
  TreeHit,
  TreeSearch,
} from "../backends/filesystem.ts";
import type { CheckedPath } from "../path/checked_path.ts";
import { unwrapCheckedPath } from "../path/checked_path.ts";
import { checkedChild } from "../path/mod.ts";
import { checkedWalkIO } from "../backends/thread_search.ts";
import { Walk, walkOrder } from "../search/walk.ts";
import {
  EntryTable,
  IN_NO_SEGMENT,
  LISTED_ENTRY_BYTES,
  nameOf,
  NOT_INDEXED,
  parentOf,
} from "./entries.ts";
import type { IgnoreState, WalkIO } from "../search/walk.ts";
import { globFilter, globMatcher } from "../search/glob_filter.ts";
import { indexQuery } from "../search/index/query.ts";
import type { IndexQuery } from "../search/index/query.ts";
import { MAX_SEGMENT_FILES, segmentCandidates, segmentMemory } from "../search/index/segment.ts";
import type { Segment } from "../search/index/segment.ts";
import { sameStamp, STAMP_FIELDS } from "../search/index/stamps.ts";
import { packPaths, unpackPath } from "../search/index/packed_paths.ts";
import type { TreeWatcher, WatchHandlers, WatchTree } from "../backends/watch.ts";
import { setImmediate } from "node:timers";
import { IndexCache } from "./cache_store.ts";
import { globEntries, scanCandidates } from "./answers.ts";
import type { IndexCacheStats } from "./cache_store.ts";
import type { CachedIndex, CachedSegment } from "./cache_format.ts";

/** Options of a session's search index (`createSession({ searchIndex })`). */
export interface SearchIndexOptions {
  /**
   * Where the watcher's fence cookies are written: a directory outside the
   * working directory (default: a new one in the OS temporary directory,
   * removed on close; under Deno flags that do not grant that, a new one in
   * the directory `denoPermissionFlags` grants for it).
   */
  readonly fenceDirectory?: string;
  /**
   * Resident bytes the index may take (default 1 GiB), in every state:
   * building, rebuilding and refreshing included. An index that would take
   * more is dropped before it does, and searches walk.
   */
  readonly memoryLimit?: number;
  /**
   * The watcher to use (default: the runtime's own); a host or a test may bring another.
   */
  readonly watch?: WatchTree;
  /**
   * The directory the index is cached in, so that a new process starts from
   * it rather than reading the whole tree again (default:
   * `$XDG_CACHE_HOME/openwork-tools/search-index`, else
   * `$HOME/.cache/openwork-tools/search-index`, from the session's
   * environment); `null` keeps the index in memory only. It must be private
   * to this user (it is made with mode 0700; a link, a directory of another
   * user or one others may enter is refused, and the index keeps to memory):
   * the content of a file whose stamp has not changed is taken from it. A
   * directory inside the working directory is refused too.
   */
  readonly cacheDirectory?: string | null;
}

/** What the index is doing. */
export type SearchIndexState =
  | "idle"
  | "building"
  | "ready"
  | "rebuilding"
  | "unavailable"
  | "closed";

/** A snapshot of a search index. */
export interface SearchIndexStats {
  /**
   * What it is doing: searches are answered from it only when `ready`. It is
   * `rebuilding` also while it looks at the whole tree again, keeping what it
   * has read, after its watcher missed changes (see {@link resyncs}).
   */
  readonly state: SearchIndexState;
  /** Files it holds. */
  readonly files: number;
  /** Directories it holds, the working directory included. */
  readonly directories: number;
  /** Bytes of file content indexed. */
  readonly bytes: number;
  /**
   * Resident bytes of the index: its posting lists and the typed arrays of
   * its entries exactly, the entries' path strings by their characters and
   * headers, the lists that refer to them and each directory's record by
   * their usual sizes (see `EntryTable.memory`).
   */
  readonly memory: number;
  /** Searches answered from the index, and walked, since it was made. */
  readonly searches: { readonly indexed: number; readonly walked: number };
  /** How long the last build took, in milliseconds (`null` before one ends). */
  readonly buildMs: number | null;
  /** Builds started, the first included (each loss of the watcher starts one). */
  readonly builds: number;
  /**
   * Times the index looked at the whole tree again, keeping what it had read,
   * because its watcher may have missed changes while its watches stood.
   */
  readonly resyncs: number;
  /** Why the index is unavailable or was last rebuilt, if it was. */
  readonly reason: string | null;
  /** Its cache file: where, loads and writes, and why it was refused if it was. */
  readonly cache: IndexCacheStats;
}

/** A session's search index, as `session.searchIndex`. */
export interface SearchIndexHandle {
  /**
   * Starts the build if it has not started; resolves once the index can
   * answer, rejects when it cannot be built here (the reason is in
   * {@link stats}).
   */
  readonly ready: Promise<void>;
  /** A snapshot of the index. */
  stats(): SearchIndexStats;
  /** Stops the watcher and any build; later searches walk. */
  close(): Promise<void>;
}

/** Default of {@link SearchIndexOptions.memoryLimit}. */
const DEFAULT_MEMORY_LIMIT = 1024 * 1024 * 1024;
/** Files sent to a worker to build one segment. */
const SEGMENT_FILES = Math.min(4096, MAX_SEGMENT_FILES);
/** Segments built at once. */
const BUILDS_AT_ONCE = 2;
/** Segments smaller than this count as small; past {@link SMALL_SEGMENTS} of them, they merge. */
const SMALL_SEGMENT = 1024;
const SMALL_SEGMENTS = 16;
/** Files larger than this are not indexed (grep skips them as too large): candidates of every search. */
const MAX_INDEXED_BYTES = 32 * 1024 * 1024;
/** Entries a walk of the index meets between turns it gives the event loop. */
const YIELD_EVERY = 256;
/** Pauses before a build lost while it ran starts again: the first, and the longest. */
const FIRST_PAUSE = 50;
const LAST_PAUSE = 2000;
/** Losses in a row, each during a build, after which the index gives up (about 7 s of pauses). */
const MAX_LOSSES = 8;
/** Changed paths waiting to be looked at past which the index cannot keep up: it builds again. */
const MAX_DIRTY = 100_000;

/** A turn of the event loop, given now and then in long work on this thread. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface SegmentSlot {
  readonly segment: Segment;
  /** File id of each local id; -1 once dead. */
  readonly ids: Int32Array;
  live: number;
  readonly memory: number;
}

/** A scan begun before the index was made current (see `SearchIndex.#scanEarly`). */
interface EarlyScan {
  /** The index's generation and revision when it began. */
  readonly generation: number;
  readonly revision: number;
  /** Its hits, as the search's. */
  readonly hits: AsyncGenerator<TreeHit[]>;
  /** Stops it, and resolves once its workers' batches have ended. */
  cancel(): Promise<void>;
}

/** Whether two ignore states are the same rules. */
function sameIgnore(a: IgnoreState | null, b: IgnoreState | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.inRepository !== b.inRepository || a.userExcludes !== b.userExcludes) return false;
  if (a.sources.length !== b.sources.length) return false;
  return a.sources.every((s, i) => s.base === b.sources[i].base && s.text === b.sources[i].text);
}

/** Where a path under a `.git` directory matters to the walk's ignore rules. */
const GIT_RULES = /^(?:(.*)\/)?\.git(?:\/info(?:\/exclude)?)?$/;
/** A repository's exclude file, and its `.git` directory. */
const GIT_EXCLUDE = /^((?:.*\/)?\.git)\/info\/exclude$/;

/** A session's search index; see the module documentation. */
export class SearchIndex {
  readonly #filesystem: AsyncFileSystem;
  readonly #workers: IndexWorkers | null;
  readonly #root: CheckedPath;
  readonly #rootReal: string;
  readonly #environment: Readonly<Record<string, string>>;
  readonly #options: SearchIndexOptions;
  readonly #watch: WatchTree;
  readonly #io: WalkIO<CheckedPath>;
  readonly #cache: IndexCache;

  #state: SearchIndexState = "idle";
  #reason: string | null = null;
  #generation = 0;
  #builds = 0;
  #resyncs = 0;
  /** Why the whole tree is to be looked at again (see {@link #missed}), or `null`. */
  #resync: string | null = null;
  /** Whether a look at the whole tree is under way in the background: searches walk. */
  #resyncing = false;
  /** The pause between two looks at the whole tree, and what ends it early. */
  #resyncTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  #resyncWake: (() => void) | null = null;
  #buildMs: number | null = null;
  #abort = new AbortController();
  #watcher: TreeWatcher | null = null;
  #ready: Promise<void> | null = null;
  #settleReady: { resolve(): void; reject(error: Error): void } | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #indexed = 0;
  #walked = 0;
  /** The pause before a build lost while it ran starts again (see {@link #lost}), and its timer. */
  #pause = 0;
  #losses = 0;
  #restart: ReturnType<typeof setTimeout> | undefined = undefined;
  /** Walks of the tree under way (see {@link #changedPath}). */
  #walking = 0;
  /** Settles running (see {@link #settle}): while one runs, the index may be half brought up to date. */
  #settling = 0;
  /** Refreshes that changed or may have changed the index: a scan begun before one is void. */
  #revision = 0;

  #table = new EntryTable(null);
  #segments: (SegmentSlot | null)[] = [];
  /** Files in no segment: candidates of every search. */
  #always = new Set<number>();
  #bytes = 0;
  /** The bytes of the live segments; with the entry table's, what {@link SearchIndexStats.memory} reports. */
  #memory = 0;
  #dirty = new Set<string>();
  /** Directories to be listed again before the next answer (their own entries only). */
  #relist = new Set<string>();
  /**
   * While a refresh looks at the tree: the paths the watcher reported that it
   * takes in, the directories it added, and how many of those were found
   * unreported in a directory that was there before.
   */
  #looking: { reported: ReadonlySet<string>; made: Set<string>; unreported: number } | null = null;

  /**
   * An index of the tree at `root`, read through `filesystem` and kept fresh
   * by the watcher `watch` starts (the session's choice: the host's, else the
   * runtime's); nothing happens until it is started. `commandWritable` are
   * the real paths of the directories the session's commands may write
   * besides `root` (the sandbox's), where the cache may not be.
   */
  constructor(
    filesystem: AsyncFileSystem,
    root: CheckedPath,
    environment: Readonly<Record<string, string>>,
    watch: WatchTree,
    options: SearchIndexOptions = {},
    commandWritable: readonly string[] = [],
  ) {
    this.#filesystem = filesystem;
    this.#workers = filesystem.indexWorkers ?? null;
    this.#root = root;
    this.#rootReal = unwrapCheckedPath(root);
    this.#environment = environment;
    this.#options = options;
    this.#watch = watch;
    this.#cache = new IndexCache({
      directory: options.cacheDirectory,
      environment,
      root: this.#rootReal,
      limit: options.memoryLimit ?? DEFAULT_MEMORY_LIMIT,
      commandWritable,
    });
    const io = checkedWalkIO(filesystem);
    // A directory is watched before it is listed: a change after the listing is always seen.
    this.#io = {
      ...io,
      readDir: (directory) => {
        this.#watcher?.add(unwrapCheckedPath(directory));
        return io.readDir(directory);
      },
      readText: async (file, maxBytes) => {
        await this.#watchGitRules(file);
        return io.readText(file, maxBytes);
      },
    };
  }

  /**
   * Before a repository's `.git/info/exclude` is read, a watcher of single
   * directories watches `.git` (where `info` may come and go) and `.git/info`
   * when there is one: the walk never lists them, yet their rules apply.
   */
  async #watchGitRules(file: CheckedPath): Promise<void> {
    const watcher = this.#watcher;
    if (watcher === null || !watcher.perDirectory) return;
    const git = GIT_EXCLUDE.exec(file.display);
    if (git === null) return;
    const dotGit = this.#checkedAt(git[1], "directory");
    if (dotGit === null) return;
    // Watched afresh: `.git` or `.git/info` may have been removed and made again.
    watcher.remove(unwrapCheckedPath(dotGit));
    watcher.add(unwrapCheckedPath(dotGit));
    const listing = await this.#io.readDir(dotGit).catch(() => null);
    if (!listing?.some((entry) => entry.name === "info" && entry.kind === "directory")) return;
    const info = checkedChild(dotGit, "info", "directory");
    if (info !== null) watcher.add(unwrapCheckedPath(info));
  }

  /** The handle a session exposes. */
  handle(): SearchIndexHandle {
    // deno-lint-ignore no-this-alias
    const index = this;
    return Object.freeze({
      get ready() {
        return index.start();
      },
      stats: () => index.stats(),
      close: () => index.close(),
    });
  }

  /** Starts the build if it has not started; see {@link SearchIndexHandle.ready}. */
  start(): Promise<void> {
    if (this.#ready === null) {
      this.#ready = new Promise<void>((resolve, reject) => {
        this.#settleReady = { resolve, reject };
      });
      // Rejected only for a caller who awaits it; never an unhandled rejection.
      this.#ready.catch(() => {});
      if (this.#workers === null) this.#fail("the file-system backend has no search workers");
      else if (this.#state === "idle") void this.#build();
    }
    if (this.#state === "ready") this.#settleReady?.resolve();
    return this.#ready;
  }

  /** A snapshot; see {@link SearchIndexStats}. */
  stats(): SearchIndexStats {
    const { files, directories } = this.#table.counts();
    return {
      state: this.#state === "ready" && this.#resyncing ? "rebuilding" : this.#state,
      files,
      directories,
      bytes: this.#bytes,
      memory: this.#memory + this.#table.memory,
      searches: { indexed: this.#indexed, walked: this.#walked },
      buildMs: this.#buildMs,
      builds: this.#builds,
      resyncs: this.#resyncs,
      reason: this.#reason,
      cache: this.#cache.stats(),
    };
  }

  /** Stops the watcher and any build. */
  async close(): Promise<void> {
    if (this.#state === "closed") return;
    // Written on close only when it changed since the last write.
    const snapshot = this.#cache.pending ? this.#snapshot() : null;
    this.#state = "closed";
    this.#generation++;
    clearTimeout(this.#restart);
    this.#wakeResync();
    this.#abort.abort();
    this.#settleReady?.reject(new Error("The search index was closed."));
    const watcher = this.#watcher;
    this.#watcher = null;
    this.#clear();
    await Promise.all([watcher?.close(), this.#cache.close(snapshot)]);
  }

  /** Marks a path (relative to the working directory) as changed: before the next answer, it is looked at again. */
  touched(display: string): void {
    if (this.#state === "ready" || this.#state === "building") this.#markDirty(display);
  }

  #fail(reason: string): void {
    this.#state = "unavailable";
    this.#reason = reason;
    this.#generation++;
    clearTimeout(this.#restart);
    this.#wakeResync();
    this.#settleReady?.reject(new Error(`The search index is unavailable: ${reason}`));
    const watcher = this.#watcher;
    this.#watcher = null;
    this.#clear();
    void watcher?.close().catch(() => {});
  }

  #clear(): void {
    this.#table = new EntryTable(null);
    this.#segments = [];
    this.#always = new Set();
    this.#bytes = 0;
    this.#memory = 0;
    this.#dirty = new Set();
    this.#relist = new Set();
  }

  /**
   * Takes `bytes` more for the index, or, where that would pass its limit,
   * drops the index (searches walk) and returns `false`. Every growth goes
   * through here before it happens, so no state, building or refreshing
   * included, ever holds more than the limit.
   */
  #take(bytes: number): boolean {
    if (!this.#room(bytes)) return false;
    this.#memory += bytes;
    return true;
  }

  /**
   * Whether the index may grow by `bytes` (the entry table's growth, which
   * the table counts itself once made); else drops the index as
   * {@link #take} does.
   */
  #room(bytes: number): boolean {
    const limit = this.#options.memoryLimit ?? DEFAULT_MEMORY_LIMIT;
    const total = this.#memory + this.#table.memory + bytes;
    if (total <= limit) return true;
    this.#fail(`the index would take ${total} bytes, more than its limit of ${limit}`);
    return false;
  }

  /**
   * The watcher can no longer vouch: build again in the background; searches
   * walk meanwhile. A loss during a build (a burst still going on, such as a
   * branch switch) starts it again after a pause that doubles with each
   * loss, up to {@link LAST_PAUSE}, until a build ends; after
   * {@link MAX_LOSSES} such losses in a row the index is unavailable.
   */
  #lost(reason: string, generation: number): void {
    if (generation !== this.#generation) return;
    const building = this.#state === "building" || this.#state === "rebuilding";
    if (this.#state !== "ready" && !building) return;
    this.#losses = building ? this.#losses + 1 : 0;
    if (this.#losses >= MAX_LOSSES) {
      this.#fail(`the watcher lost track ${this.#losses} times in a row while building: ${reason}`);
      return;
    }
    this.#reason = reason;
    const watcher = this.#watcher;
    this.#watcher = null;
    this.#generation++;
    this.#wakeResync();
    this.#clear();
    void watcher?.close().catch(() => {});
    this.#state = "rebuilding";
    this.#pause = building ? Math.min(Math.max(this.#pause * 2, FIRST_PAUSE), LAST_PAUSE) : 0;
    if (this.#pause === 0) {
      void this.#build();
      return;
    }
    const restart = this.#generation;
    this.#restart = setTimeout(() => {
      this.#restart = undefined;
      if (restart === this.#generation) void this.#build();
    }, this.#pause);
  }

  /**
   * The watcher may have missed changes, its watches standing: the index
   * looks at the whole tree again in the background (see {@link #refresh}),
   * at once when it is ready, else once its build ends; searches walk
   * meanwhile. With workers that take no stamps, that would mean reading
   * every file again: the index builds again instead.
   */
  #missed(reason: string, generation: number): void {
    if (generation !== this.#generation) return;
    if (this.#workers?.stampFiles === undefined) {
      this.#lost(`the watcher missed changes: ${reason}`, generation);
      return;
    }
    this.#resync = reason;
    this.#reason = `the watcher missed changes: ${reason}`;
    if (this.#state === "ready") this.#resyncInBackground();
  }

  /**
   * Brings the index up to date, the whole tree looked at again, until no
   * miss is left; searches walk until it ends. A miss during a look (a burst
   * still going on) starts the next after a pause that doubles each time, up
   * to {@link LAST_PAUSE}, so that a long burst is looked at a few times, not
   * once per turn.
   */
  #resyncInBackground(): void {
    if (this.#resyncing) return;
    this.#resyncing = true;
    const generation = this.#generation;
    const current = () =>
      this.#resync !== null && generation === this.#generation && this.#state === "ready";
    void (async () => {
      let pause = 0;
      try {
        while (current()) {
          if (pause > 0) {
            await new Promise<void>((resolve) => {
              this.#resyncWake = resolve;
              this.#resyncTimer = setTimeout(resolve, pause);
            });
            this.#resyncWake = null;
            if (!current()) break;
          }
          const done = this.#queue.then(() => this.#settleNow(this.#abort.signal));
          this.#queue = done.catch(() => {});
          if (!await done.catch(() => false)) break;
          pause = Math.min(Math.max(pause * 2, FIRST_PAUSE), LAST_PAUSE);
        }
      } finally {
        this.#resyncing = false;
      }
    })();
  }

  /** Ends the pause of a look at the whole tree at once (the index is closed, failed or lost). */
  #wakeResync(): void {
    clearTimeout(this.#resyncTimer);
    this.#resyncWake?.();
  }

  /**
   * What the watcher of a build's generation calls. Made apart from the
   * build: the watcher keeps its handlers as long as it runs, and a closure
   * made in the build would keep everything the build held (the cache file's
   * tables and paths among them) as long.
   */
  #watchHandlers(generation: number): WatchHandlers {
    return {
      changed: (path) => {
        if (generation === this.#generation) this.#changedPath(path);
      },
      lost: (reason) => this.#lost(`the watcher lost track: ${reason}`, generation),
      missed: (reason) => this.#missed(reason, generation),
    };
  }

  /**
   * Has the cache written a while from now. Its closure is made here, not in
   * the build: one made there would keep all the build held (the loaded
   * cache's tables among them) until the write.
   */
  #writeLater(): void {
    this.#cache.later(() => this.#snapshot());
  }

  async #build(): Promise<void> {
    const generation = ++this.#generation;
    const current = () => generation === this.#generation;
    const started = performance.now();
    this.#builds++;
    // A build looks at everything; misses reported from here on are its own watcher's.
    this.#resync = null;
    if (this.#state !== "rebuilding") this.#state = "building";
    const signal = this.#abort.signal;
    try {
      const handlers = this.#watchHandlers(generation);
      const fenceDirectory = this.#options.fenceDirectory;
      const watching = this.#watch(
        this.#rootReal,
        handlers,
        fenceDirectory === undefined ? {} : { fenceDirectory },
      ).then(async (watcher) => {
        if (!current()) {
          await watcher.close();
          return null;
        }
        this.#watcher = watcher;
        return watcher;
      });
      watching.catch(() => {});
      // The walk on this thread watches each directory before it lists it, so the watch comes
      // first; a listing in a worker starts at once, and is checked once the watch is in place.
      const inWorker = this.#workers!.listTree !== undefined;
      if (!inWorker && await watching === null) return;
      const userExcludes = await this.#filesystem.readGitExcludes?.(this.#environment) ?? null;
      if (!current()) return;
      const outer: IgnoreState = { inRepository: false, sources: [], userExcludes };
      this.#table = new EntryTable(outer);
      if (!this.#room(0)) return;
      // The cache file is read while the tree is walked. Without stamps it could not be proved
      // fresh short of reading every file.
      const loading = this.#workers!.stampFiles === undefined
        ? Promise.resolve(null)
        : this.#cache.load().catch(() => null);
      const cache: { known: boolean; index: CachedIndex | null } = { known: false, index: null };
      // Segments are built while the walk goes on, each batch of files as soon as it is met;
      // until the cache is known, batches wait (the cache may hold their content).
      const indexing: Promise<void>[] = [];
      const held: number[] = [];
      const index = (ids: number[]) => {
        if (!cache.known || cache.index !== null) {
          held.push(...ids);
          return;
        }
        const done = this.#indexFiles(ids, generation, signal);
        done.catch(() => {});
        indexing.push(done);
      };
      // The tree is listed in a worker where the backend can, else walked on this thread.
      const listing = inWorker
        ? this.#listInto(outer, watching, generation, signal)
        : this.#walkInto(".", outer, generation, signal, () => false, undefined, index);
      // No stamp of a file is taken before its directory is watched (a change after the stamp is
      // then always seen): a watcher of single directories watches each as the listing ends.
      const watched = watching.then(async (watcher) => {
        if (watcher?.perDirectory) await listing.catch(() => {});
      });
      // A watcher that fails to start fails the listing, and the build with it.
      watched.catch(() => {});
      listing.catch(() => {});
      // The stamps of the cached files now, taken in the workers while the tree is listed.
      const stamping = loading.then(async (loaded) => {
        cache.known = true;
        cache.index = loaded;
        if (loaded === null) {
          if (current()) index(held.splice(0));
          return null;
        }
        await watched;
        return current() ? await this.#stampCached(loaded, generation, signal) : null;
      });
      stamping.catch(() => {});
      index(await listing);
      await loading;
      if (!current()) return;
      // A cache proved fresh without a change need not be written again.
      let changed = true;
      // Stamps that could not be taken prove nothing: every file is read, as in a build.
      const now = await stamping.catch(() => null);
      if (cache.index !== null && now !== null) {
        changed = await this.#merge(cache.index, now, generation, signal);
      } else if (cache.index !== null) {
        cache.index = null;
        index(held.splice(0));
      }
      await Promise.all(indexing);
      if (!current()) return;
      if (this.#refusesAlike()) return;
      this.#buildMs = performance.now() - started;
      this.#pause = 0;
      this.#losses = 0;
      this.#state = "ready";
      this.#settleReady?.resolve();
      if (changed) this.#writeLater();
      // Misses reported while it was being built: the whole tree is looked at again.
      if (this.#resync !== null) this.#resyncInBackground();
    } catch (error) {
      if (!current() || signal.aborted) return;
      this.#fail(`the build failed: ${(error as Error)?.message ?? String(error)}`);
    }
  }

  /**
   * A watcher's path, marked changed as a display path. While no walk is
   * under way, kept only where it can matter: an entry of the index or of
   * one of its directories, or a repository's exclude file. Others (outside
   * the tree, below an ignored or new directory) are dropped at once, so a
   * burst of changes in an ignored build directory costs nothing: a new
   * directory is walked whole when its parent is looked at again. While a
   * walk is under way, every path in the tree is kept: the walk lists
   * directories ahead of the entries it adds, so a change reported before
   * its directory is an entry may be one that listing missed.
   */
  #changedPath(path: string): void {
    const root = this.#rootReal;
    let display: string;
    if (path === root) display = ".";
    else if (path.startsWith(root === "/" ? "/" : `${root}/`)) {
      display = path.slice(root === "/" ? 1 : root.length + 1);
    } else return;
    if (
      this.#walking > 0 || GIT_RULES.test(display) || this.#table.get(display) !== undefined ||
      this.#table.get(parentOf(display))?.kind === "directory"
    ) this.#markDirty(display);
  }

  /** Marks a display path changed; past {@link MAX_DIRTY} of them, the index builds again. */
  #markDirty(display: string): void {
    this.#dirty.add(display);
    if (this.#dirty.size > MAX_DIRTY) {
      this.#lost(`more than ${MAX_DIRTY} changes waited to be looked at`, this.#generation);
    }
  }

  /** The checked path of a directory or file of the tree, from the root down. */
  #checkedAt(display: string, kind: "file" | "directory"): CheckedPath | null {
    if (display === ".") return this.#root;
    let path: CheckedPath | null = this.#root;
    const names = display.split("/");
    for (let i = 0; i < names.length && path !== null; i++) {
      path = checkedChild(path, names[i], i === names.length - 1 ? kind : "directory");
    }
    return path;
  }

  // ---- entries ----

  #addDirectory(display: string, outer: IgnoreState | null): void {
    const looking = this.#looking;
    if (looking !== null) {
      // Unreported, and in a directory that was there before (so watched): its creation's event
      // was dropped. (Below a directory just made, a recursive watch adds what is there itself.)
      if (!looking.reported.has(display) && !looking.made.has(parentOf(display))) {
        looking.unreported++;
      }
      looking.made.add(display);
    }
    this.#table.addDirectory(display, outer);
  }

  /** Takes a file's content out of the index (its segment posting is dead from now on). */
  #unindex(id: number): void {
    const table = this.#table;
    const segment = table.segment(id);
    if (segment >= 0) {
      const slot = this.#segments[segment]!;
      slot.ids[table.local(id)] = -1;
      if (--slot.live === 0) {
        this.#segments[segment] = null;
        this.#memory -= slot.memory;
      }
    } else if (segment === IN_NO_SEGMENT) this.#always.delete(id);
    this.#bytes -= table.bytes(id);
    table.place(id, NOT_INDEXED);
  }

  /** Removes an entry, and everything below it for a directory. */
  #remove(display: string): void {
    if (this.#table.get(display)?.kind === "directory" && this.#watcher?.perDirectory) {
      this.#watcher.remove(`${this.#rootReal}/${display}`);
    }
    this.#table.remove(display, (_removed, id) => {
      if (id >= 0) this.#unindex(id);
    });
  }

  /**
   * Walks into a directory of the index by the walk's rules, adding what is
   * new; where `keep` says a known directory is as it was, does not go into
   * it (and tells `rulesChanged` of each such directory in which other ignore
   * rules now apply). Returns the ids of the files added (less those handed
   * to `batch`, a segment's worth at a time), and the displays met in `seen`. A walk of
   * an earlier generation stops at its next step, before it changes the
   * current one's entries.
   */
  async #walkInto(
    directory: string,
    outer: IgnoreState | null,
    generation: number,
    signal: AbortSignal,
    keep: (display: string) => boolean,
    seen?: Set<string>,
    batch?: (ids: number[]) => void,
    rulesChanged?: (display: string) => void,
  ): Promise<number[]> {
    const path = this.#checkedAt(directory, "directory");
    if (path === null || generation !== this.#generation) return [];
    const added: number[] = [];
    this.#walking++;
    try {
      const walk = new Walk(this.#io, { from: ".", ignore: outer }, signal);
      await walk.enter(path, directory);
      let met = 0;
      for (let entry; (entry = await walk.next()) !== null;) {
        // Listings that are ready resolve as microtasks: without a turn of the event loop now
        // and then, a walk of a large tree would hold up every other call until it ends.
        if (++met % YIELD_EVERY === 0) await turn();
        if (generation !== this.#generation) return [];
        seen?.add(entry.display);
        const known = this.#table.get(entry.display);
        if (entry.kind === "directory") {
          if (known?.kind === "directory") {
            const rules = walk.ignoreState();
            const same = sameIgnore(known.outer, rules);
            known.outer = rules;
            if (keep(entry.display)) {
              walk.skip();
              // Passed over, yet other rules apply in it now: what is below it is looked at again.
              if (!same) rulesChanged?.(entry.display);
            }
            continue;
          }
          if (known !== undefined) this.#remove(entry.display);
          if (!this.#room(this.#table.growth(entry.display, "directory"))) return [];
          this.#addDirectory(entry.display, walk.ignoreState());
          continue;
        }
        if (known?.kind === "file") continue;
        if (known !== undefined) this.#remove(entry.display);
        if (!this.#room(this.#table.growth(entry.display, "file"))) return [];
        added.push(this.#table.addFile(entry.display));
        if (batch !== undefined && added.length === SEGMENT_FILES) batch(added.splice(0));
      }
      return added;
    } finally {
      this.#walking--;
    }
  }

  /**
   * Lists the whole tree in a worker, while `watching` starts the watcher,
   * and adds its entries (the working directory's own is there already);
   * returns the ids of the files added. Once the watcher is in place (a
   * watcher of single directories watches each directory listed), every
   * directory whose stamp now is not the one taken just before it was
   * listed (or was racy) is listed again before the next answer, and every
   * ignore file likewise looked at again: a change made between a listing
   * and its watch is never lost.
   */
  async #listInto(
    outer: IgnoreState | null,
    watching: Promise<TreeWatcher | null>,
    generation: number,
    signal: AbortSignal,
  ): Promise<number[]> {
    const workers = this.#workers!;
    const root = this.#rootReal;
    const real = (display: string) =>
      display === "." ? root : root === "/" ? `/${display}` : `${root}/${display}`;
    // Changes reported while the worker lists are kept, whatever their path (see #changedPath).
    this.#walking++;
    try {
      const limit = this.#options.memoryLimit ?? DEFAULT_MEMORY_LIMIT;
      const tree = await workers.listTree!({
        real: root,
        ignore: outer,
        entryBytes: LISTED_ENTRY_BYTES,
        maxBytes: limit - this.#memory - this.#table.memory,
      });
      signal.throwIfAborted();
      if (tree.error !== undefined) throw new Error(tree.error);
      if (generation !== this.#generation) return [];
      // Past the limit the index is dropped, as growth anywhere else drops it.
      if (tree.over !== undefined && !this.#room(tree.over)) return [];
      const added: number[] = [];
      let directory = 0;
      let files = 0;
      for (let i = 0; i < tree.kinds.length; i++) files += tree.kinds[i];
      const count = tree.entries.ends.length;
      // Room for the whole listing at once, not grown a step at a time.
      if (!this.#room(this.#table.reserveGrowth(count, files))) return [];
      this.#table.reserve(count, files);
      // A turn of the event loop now and then: tens of thousands of entries would hold up calls.
      for (let i = 0; i < count; i++) {
        if (i % YIELD_EVERY === YIELD_EVERY - 1) {
          await turn();
          if (generation !== this.#generation) return [];
        }
        const display = unpackPath(tree.entries, i);
        const kind = tree.kinds[i] === 1 ? "file" : "directory";
        if (!this.#room(this.#table.growth(display, kind))) return [];
        if (tree.kinds[i] === 1) added.push(this.#table.addFile(display));
        else this.#addDirectory(display, tree.outers[directory++]);
      }
      const watcher = await watching;
      if (watcher === null || generation !== this.#generation) return [];
      if (watcher.perDirectory) {
        for (let i = 0; i < tree.listedDirectories.length; i++) {
          if (i % YIELD_EVERY === YIELD_EVERY - 1) {
            await turn();
            if (generation !== this.#generation) return [];
          }
          watcher.add(real(tree.listedDirectories[i]));
        }
        for (const display of tree.ignoreFiles) {
          const file = this.#checkedAt(display, "file");
          if (file !== null) await this.#watchGitRules(file);
        }
      }
      // Every change from here on is reported: what the walk saw is taken again, to be compared.
      // Stamps that could not be taken prove nothing: the paths are looked at again (an empty
      // table matches no stamp).
      const stamp = async (displays: readonly string[], directories: boolean) => {
        const answer = await workers
          .stampFiles?.({ files: displays.map(real), directories, fine: true })
          .catch(() => null);
        return answer?.error === undefined
          ? answer?.stamps ?? new Float64Array(0)
          : new Float64Array(0);
      };
      const [directories, ignores] = await Promise.all([
        stamp(tree.listedDirectories, true),
        stamp(tree.ignoreFiles, false),
      ]);
      if (generation !== this.#generation) return [];
      tree.listedDirectories.forEach((display, i) => {
        if (!sameStamp(tree.directoryStamps, i, directories, i)) this.#relist.add(display);
      });
      tree.ignoreFiles.forEach((display, i) => {
        if (!sameStamp(tree.ignoreStamps, i, ignores, i)) this.#markDirty(display);
      });
      return added;
    } finally {
      this.#walking--;
    }
  }

  /** Indexes the content of files, in segments built by the workers. */
  async #indexFiles(
    ids: readonly number[],
    generation: number,
    signal: AbortSignal,
  ): Promise<void> {
    const workers = this.#workers!;
    const batches: number[][] = [];
    for (let i = 0; i < ids.length; i += SEGMENT_FILES) {
      batches.push(ids.slice(i, i + SEGMENT_FILES));
    }
    const root = this.#rootReal === "/" ? "" : this.#rootReal;
    let next = 0;
    const run = async () => {
      while (next < batches.length) {
        signal.throwIfAborted();
        if (generation !== this.#generation) return;
        const batch = batches[next++];
        const files = batch.map((id) => `${root}/${this.#table.display(id)}`);
        const answer = await workers.buildSegment({ files, maxBytes: MAX_INDEXED_BYTES });
        if (generation !== this.#generation) return;
        if (answer.segment === null) throw new Error(answer.error ?? "a segment failed");
        this.#place(batch, answer.segment, answer.locals, answer.sizes, answer.stamps);
      }
    };
    await Promise.all(Array.from({ length: BUILDS_AT_ONCE }, run));
  }

  /** Puts a built segment in place for the files it was built from. */
  #place(
    batch: readonly number[],
    segment: Segment,
    locals: Int32Array,
    sizes: Int32Array,
    stamps: Float64Array | undefined,
  ): void {
    const index = this.#segments.length;
    const ids = new Int32Array(segment.files).fill(-1);
    let live = 0;
    for (let i = 0; i < batch.length; i++) {
      const id = batch[i];
      const table = this.#table;
      // Removed meanwhile, or indexed again by a later change.
      if (!table.has(id) || table.segment(id) !== NOT_INDEXED) continue;
      if (stamps !== undefined) table.setStamp(id, stamps, i);
      if (locals[i] === -1) {
        table.place(id, IN_NO_SEGMENT);
        this.#always.add(id);
        continue;
      }
      table.place(id, index, locals[i], sizes[i]);
      this.#bytes += sizes[i];
      ids[locals[i]] = id;
      live++;
    }
    const slot: SegmentSlot = {
      segment,
      ids,
      live,
      memory: segmentMemory(segment) + ids.byteLength,
    };
    if (live === 0) {
      this.#segments.push(null);
      return;
    }
    // Past the limit the index is dropped: a generation ends, and so does the build or refresh.
    if (!this.#take(slot.memory)) return;
    this.#segments.push(slot);
  }

  // ---- cache ----

  /**
   * The stamps now of the files a cached index holds, in its file order (a
   * file that is gone, or is no longer a regular file, has an unknown
   * stamp). Only stamps are taken: no cached path's content is read.
   */
  async #stampCached(
    cached: CachedIndex,
    generation: number,
    signal: AbortSignal,
  ): Promise<Float64Array> {
    const { entries, kinds } = cached;
    // The entry of each file; its path is made a string only for its batch.
    const fileEntries = new Uint32Array(cached.fileSegments.length);
    let files = 0;
    for (let i = 0; i < kinds.length; i++) if (kinds[i] === 1) fileEntries[files++] = i;
    return await this.#stampPaths(
      files,
      (i) => unpackPath(entries, fileEntries[i]),
      generation,
      signal,
    );
  }

  /**
   * The stamps now of `count` files of the tree (NaN where unknown), the
   * `i`-th at `displayAt(i)`, taken in the workers.
   */
  async #stampPaths(
    count: number,
    displayAt: (i: number) => string,
    generation: number,
    signal: AbortSignal,
  ): Promise<Float64Array> {
    const workers = this.#workers!;
    const root = this.#rootReal === "/" ? "" : this.#rootReal;
    const stamps = new Float64Array(count * STAMP_FIELDS).fill(NaN);
    let next = 0;
    const run = async () => {
      while (next < count && generation === this.#generation) {
        signal.throwIfAborted();
        const from = next;
        next = Math.min(count, next + SEGMENT_FILES);
        const files: string[] = [];
        for (let i = from; i < next; i++) files.push(`${root}/${displayAt(i)}`);
        const answer = await workers.stampFiles!({ files });
        if (answer.error !== undefined) throw new Error(answer.error);
        stamps.set(answer.stamps, from * STAMP_FIELDS);
      }
    };
    await Promise.all(Array.from({ length: BUILDS_AT_ONCE }, run));
    return stamps;
  }

  /**
   * Proves a cached index fresh against the tree just walked (its entries
   * are the walk's, none the cache's): a file the walk met takes the
   * cache's content and stamp only when its stamp `now` is the one the
   * cache took when it read the file; every other file is read again. A
   * path only the cache names is never read. Returns whether anything
   * differed from the cache.
   */
  async #merge(
    cached: CachedIndex,
    now: Float64Array,
    generation: number,
    signal: AbortSignal,
  ): Promise<boolean> {
    const { entries, kinds, fileSegments, fileLocals, fileBytes } = cached;
    const base = this.#segments.length;
    const slots: (Int32Array | null)[] = cached.segments.map(() => null);
    let kept = 0;
    // Both lists are in walk order: one pass over each finds the cached file of each entry. A
    // cached path is made a string once, as the pass comes to it.
    const count = entries.ends.length;
    let at = 0;
    let n = 0;
    let cachedDisplay = count === 0 ? "" : unpackPath(entries, 0);
    const sorted = this.#table.displays();
    const sortedIds = this.#table.ids();
    for (let i = 0; i < sorted.length; i++) {
      const display = sorted[i];
      while (at < count && walkOrder(cachedDisplay, display) < 0) {
        n += kinds[at++];
        if (at < count) cachedDisplay = unpackPath(entries, at);
      }
      const id = sortedIds[i];
      if (id < 0 || at === count || cachedDisplay !== display || kinds[at] !== 1) continue;
      if (this.#table.segment(id) !== NOT_INDEXED) continue;
      const segment = fileSegments[n];
      if (segment === NOT_INDEXED || !sameStamp(cached.stamps, n, now, n)) continue;
      kept++;
      this.#table.setStamp(id, now, n);
      if (segment === IN_NO_SEGMENT) {
        this.#table.place(id, IN_NO_SEGMENT);
        this.#always.add(id);
        continue;
      }
      const local = fileLocals[n];
      const ids = slots[segment] ??= new Int32Array(cached.segments[segment].segment.files).fill(
        -1,
      );
      ids[local] = id;
      this.#table.place(id, base + segment, local, fileBytes[n]);
      this.#bytes += fileBytes[n];
    }
    for (let s = 0; s < slots.length; s++) {
      const ids = slots[s];
      const segment = cached.segments[s].segment;
      let live = 0;
      if (ids !== null) {
        for (let local = 0; local < ids.length; local++) if (ids[local] >= 0) live++;
      }
      if (ids === null || live === 0) {
        this.#segments.push(null);
        continue;
      }
      const slot: SegmentSlot = {
        segment,
        ids,
        live,
        memory: segmentMemory(segment) + ids.byteLength,
      };
      // Past the limit the index is dropped, and its generation with it.
      if (!this.#take(slot.memory)) return false;
      this.#segments.push(slot);
    }
    this.#cache.proved(kept);
    const pending: number[] = [];
    const ids = this.#table.ids();
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] >= 0 && this.#table.segment(ids[i]) === NOT_INDEXED) pending.push(ids[i]);
    }
    await this.#indexFiles(pending, generation, signal);
    return pending.length > 0 || kept !== fileSegments.length;
  }

  /**
   * What the cache file is written from: the entries, stamps and live
   * segments as they are now (files numbered in walk order), or `null`
   * before a build has ended. A look at the whole tree under way does not
   * matter: each file's content is still the one its stamp was taken with,
   * and the next load proves every entry again. The segments' tables are
   * shared, not copied: they never change once built.
   */
  #snapshot(): CachedIndex | null {
    if (this.#state !== "ready") return null;
    const table = this.#table;
    const count = table.length;
    const kinds = new Uint8Array(count);
    const number = new Int32Array(table.idSpace).fill(-1);
    const sortedIds = table.ids();
    let files = 0;
    for (let i = 0; i < count; i++) {
      const id = sortedIds[i];
      if (id < 0) continue;
      kinds[i] = 1;
      number[id] = files++;
    }
    const slotOf = new Int32Array(this.#segments.length).fill(-1);
    const segments: CachedSegment[] = [];
    this.#segments.forEach((slot, index) => {
      if (slot === null) return;
      slotOf[index] = segments.length;
      segments.push({ segment: slot.segment, ids: slot.ids.map((id) => id < 0 ? -1 : number[id]) });
    });
    const fileSegments = new Int32Array(files);
    const fileLocals = new Int32Array(files);
    const fileBytes = new Int32Array(files);
    const stamps = new Float64Array(files * STAMP_FIELDS);
    for (let id = 0; id < table.idSpace; id++) {
      const at = number[id];
      if (!table.has(id) || at < 0) continue;
      const segment = table.segment(id);
      fileSegments[at] = segment >= 0 ? slotOf[segment] : segment;
      fileLocals[at] = table.local(id);
      fileBytes[at] = table.bytes(id);
      stamps.set(
        table.stamps.subarray(id * STAMP_FIELDS, (id + 1) * STAMP_FIELDS),
        at * STAMP_FIELDS,
      );
    }
    return {
      root: this.#rootReal,
      entries: packPaths(table.displays()),
      kinds,
      fileSegments,
      fileLocals,
      fileBytes,
      stamps,
      segments,
    };
  }

  // ---- freshness ----

  /**
   * Makes the index current: every change made before the call is in it
   * when this resolves `true`; `false` when the index cannot vouch.
   * Settles run one at a time.
   */
  #settle(signal: AbortSignal): Promise<boolean> {
    const run = this.#queue.then(() => this.#settleNow(signal));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #settleNow(signal: AbortSignal): Promise<boolean> {
    const generation = this.#generation;
    this.#settling++;
    try {
      return await this.#refresh(signal);
    } catch (error) {
      // The call's own abort ends its search (only the fence waits on it).
      // Anything else (a fence that failed, a listing or a segment that
      // could not be made) leaves the index unable to vouch: it is built
      // again, and this search walks, or ends when it was aborted meanwhile.
      if (!signal.aborted || error !== signal.reason) {
        const reason = error instanceof Error ? error.message : String(error);
        this.#lost(`the index could not be brought up to date: ${reason}`, generation);
      }
      signal.throwIfAborted();
      return false;
    } finally {
      this.#settling--;
    }
  }

  async #refresh(signal: AbortSignal): Promise<boolean> {
    if (this.#state !== "ready") return false;
    const generation = this.#generation;
    const watcher = this.#watcher!;
    if (!await watcher.fence(signal)) {
      signal.throwIfAborted();
      this.#lost("a fence of the watcher did not return", generation);
      return false;
    }
    if (generation !== this.#generation || this.#state !== "ready") return false;
    const dirty = this.#dirty;
    // Taken after the fence: every miss of a change made before the call is known by now.
    const resync = this.#resync !== null;
    const relist = this.#relist;
    if (dirty.size === 0 && relist.size === 0 && !resync && !this.#needsCompaction()) return true;
    this.#revision++;
    this.#dirty = new Set();
    this.#relist = new Set();
    this.#resync = null;
    if (resync) this.#resyncs++;
    const shallow = new Set<string>();
    const deep = new Set<string>();
    const files = new Set<string>();
    // Every directory listed again, from the top: what was made, removed or renamed unreported.
    if (resync) deep.add(".");
    for (const display of relist) shallow.add(display);
    for (const display of dirty) {
      const git = GIT_RULES.exec(display);
      if (git !== null) {
        deep.add(git[1] ?? ".");
        continue;
      }
      if (display === ".git" || display.startsWith(".git/") || display.includes("/.git/")) continue;
      if (display === ".") {
        shallow.add(".");
        continue;
      }
      const parent = parentOf(display);
      if (nameOf(display) === ".gitignore") deep.add(parent);
      else shallow.add(parent);
      files.add(display);
      // A directory whose own entry changed may be another one now (removed
      // and made again, or one moved into its place): its entries, and a
      // watcher's watches on it, cannot be trusted. The parent's listing
      // walks it again as new.
      if (this.#table.get(display)?.kind === "directory") this.#remove(display);
    }
    // Shallowest first: a directory walked deep, or new, covers what is below it (the whole
    // tree, when the top is).
    const order = deep.has(".")
      ? ["."]
      : [...new Set([...deep, ...shallow])].sort((a, b) =>
        (a === "." ? 0 : a.split("/").length) - (b === "." ? 0 : b.split("/").length)
      );
    const added: number[] = [];
    const internal = this.#abort.signal;
    const looking = { reported: dirty, made: new Set<string>(), unreported: 0 };
    this.#looking = looking;
    try {
      // A directory passed over in which other ignore rules now apply (an ignore file, or a
      // repository, made above it unreported) is walked deep after.
      const rulesChanged = (display: string) => {
        if (deep.has(display)) return;
        deep.add(display);
        order.push(display);
      };
      for (let i = 0; i < order.length; i++) {
        const directory = order[i];
        const entry = this.#table.get(directory);
        if (entry === undefined || entry.kind !== "directory") continue;
        const isDeep = deep.has(directory);
        const seen = new Set<string>();
        const known = isDeep ? this.#table.below(directory) : this.#table.children(directory);
        added.push(
          ...await this.#walkInto(
            directory,
            entry.outer,
            generation,
            internal,
            (display) => !isDeep && !deep.has(display),
            seen,
            undefined,
            rulesChanged,
          ),
        );
        if (generation !== this.#generation) return false;
        for (const display of known) if (!seen.has(display)) this.#remove(display);
      }
    } finally {
      this.#looking = null;
    }
    // Files whose content changed, still in the index and not just added.
    const again: number[] = [];
    for (const display of files) {
      const entry = this.#table.get(display);
      if (entry?.kind !== "file") continue;
      if (this.#table.segment(entry.id) === NOT_INDEXED) continue;
      this.#unindex(entry.id);
      again.push(entry.id);
    }
    if (resync) {
      // A directory made while events were missed may be one a recursive watch never covers (its
      // creation among the events dropped): the watch is made anew, and reports another miss.
      if (looking.unreported > 0 && !watcher.perDirectory) {
        watcher.remake?.("a look at the whole tree found a directory no event had reported");
      }
      again.push(...await this.#restamp(generation, internal));
      if (generation !== this.#generation) return false;
    }
    again.push(...this.#compaction());
    const pending = [
      ...added.filter((id) => this.#table.has(id) && this.#table.segment(id) === NOT_INDEXED),
      ...again,
    ];
    await this.#indexFiles(pending, generation, internal);
    if (generation !== this.#generation || this.#state !== "ready") return false;
    this.#writeLater();
    return true;
  }

  /**
   * The files read before whose stamp now differs from the one taken when
   * they were read (or is unknown), taken out of the index to be read again.
   */
  async #restamp(generation: number, signal: AbortSignal): Promise<number[]> {
    const ids: number[] = [];
    const table = this.#table;
    for (const id of table.ids()) {
      if (id >= 0 && table.segment(id) !== NOT_INDEXED) ids.push(id);
    }
    const displays = ids.map((id) => table.display(id));
    const now = await this.#stampPaths(displays.length, (i) => displays[i], generation, signal);
    if (generation !== this.#generation) return [];
    const changed: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      const table = this.#table;
      // Removed meanwhile (its id perhaps given to a new file), or already taken out to be read
      // again.
      if (!table.has(id) || table.segment(id) === NOT_INDEXED) continue;
      if (table.display(id) !== displays[i] || sameStamp(this.#table.stamps, id, now, i)) continue;
      this.#unindex(id);
      changed.push(id);
    }
    return changed;
  }

  #needsCompaction(): boolean {
    let small = 0;
    for (const slot of this.#segments) {
      if (slot === null) continue;
      if (slot.live * 2 < slot.segment.files) return true;
      if (slot.segment.files < SMALL_SEGMENT && ++small > SMALL_SEGMENTS) return true;
    }
    return false;
  }

  /** Files of segments mostly dead, or of too many small ones, taken out to be indexed again. */
  #compaction(): number[] {
    if (!this.#needsCompaction()) return [];
    const ids: number[] = [];
    this.#segments.forEach((slot, index) => {
      if (slot === null) return;
      const mostlyDead = slot.live * 2 < slot.segment.files;
      if (!mostlyDead && slot.segment.files >= SMALL_SEGMENT) return;
      for (const id of slot.ids) {
        if (id < 0) continue;
        this.#unindex(id);
        ids.push(id);
      }
      // The last #unindex of a segment drops it (and its memory) itself.
      if (this.#segments[index] !== null) this.#memory -= slot.memory;
      this.#segments[index] = null;
    });
    return ids;
  }

  // ---- answers ----

  /** Whether the index may answer a search at `start` at all; starts the build on first use. */
  /**
   * Turns the index off when two of its entries show alike (see
   * `EntryTable.alike`): it could answer for one of them only, where the
   * walk answers for both; searches walk from then on.
   */
  #refusesAlike(): boolean {
    const alike = this.#table.alike;
    if (alike === null) return false;
    this.#fail(
      `two entries are shown as ${JSON.stringify(alike)} (names that are not UTF-8 show alike), ` +
        "which the index cannot tell apart",
    );
    return true;
  }

  #answers(start: CheckedPath): boolean {
    if (this.#state === "idle") void this.start();
    return this.#state === "ready" && start.rootKind === "working_directory";
  }

  /**
   * Whether the index, settled, holds `start` as a directory with the same
   * ignore rules as the search computed. Rules that differ in the user's
   * global excludes (the one input from outside the tree) make the index
   * build again.
   */
  #holds(start: CheckedPath, ignore: IgnoreState | null): boolean {
    if (this.#state !== "ready" || this.#refusesAlike()) return false;
    const entry = this.#table.get(start.display);
    if (entry?.kind !== "directory") return false;
    if (sameIgnore(entry.outer, ignore)) return true;
    if (
      entry.outer !== null && ignore !== null && entry.outer.userExcludes !== ignore.userExcludes
    ) {
      this.#lost("the user's global git excludes changed", this.#generation);
    }
    return false;
  }

  /** The files under `start` that may match, in walk order, that pass `accept`. */
  #candidates(start: string, query: IndexQuery, accept: (display: string) => boolean): string[] {
    const table = this.#table;
    const mark = new Uint8Array(table.idSpace);
    for (const slot of this.#segments) {
      if (slot === null) continue;
      const locals = segmentCandidates(slot.segment, query);
      if (locals === null) {
        for (const id of slot.ids) if (id >= 0) mark[id] = 1;
      } else {
        for (const local of locals) {
          const id = slot.ids[local];
          if (id >= 0) mark[id] = 1;
        }
      }
    }
    for (const id of this.#always) mark[id] = 1;
    const [from, to] = table.range(start);
    const sorted = table.displays();
    const sortedIds = table.ids();
    const found: string[] = [];
    for (let i = from; i < to; i++) {
      const id = sortedIds[i];
      if (id >= 0 && mark[id] === 1 && accept(sorted[i])) found.push(sorted[i]);
    }
    return found;
  }

  /**
   * `grep`'s search from the index, or `null` when the index cannot answer
   * it (the caller walks).
   */
  async search(
    start: CheckedPath,
    search: TreeSearch,
    signal: AbortSignal,
  ): Promise<AsyncIterable<readonly TreeHit[]> | null> {
    const { request } = search;
    // A smaller cap than the index's would make files it indexed too large: only the walk knows.
    if (!this.#answers(start) || request.maxBytes < MAX_INDEXED_BYTES || this.#resyncing) {
      return this.#walk();
    }
    const query = indexQuery(request.pattern, request.caseInsensitive);
    if (query.op === "all") return this.#walk();
    const limit = search.limit ?? Number.MAX_SAFE_INTEGER;
    const accept = globFilter(search.glob);
    const early = this.#scanEarly(start, search, query, accept, limit, signal);
    let settled: boolean;
    try {
      settled = await this.#settle(signal) && this.#holds(start, search.ignore);
    } catch (error) {
      await early?.cancel();
      throw error;
    }
    if (!settled) {
      await early?.cancel();
      return this.#walk();
    }
    this.#indexed++;
    if (
      early !== null && early.generation === this.#generation && early.revision === this.#revision
    ) {
      return early.hits;
    }
    await early?.cancel();
    const files = this.#candidates(start.display, query, accept);
    return scanCandidates(this.#workers!, this.#rootReal, files, request, limit, signal);
  }

  /**
   * The scan of a search begun before the index is made current (while the
   * watcher's fence makes sure every change before the call was reported),
   * or `null` when the index, as it stands, cannot answer it. Its hits stand
   * once the index is current only if nothing changed it meanwhile (the same
   * generation and revision): the candidates were then those of the current
   * index, and every file was read after the call began. Else it is
   * cancelled, and the search scans anew.
   */
  #scanEarly(
    start: CheckedPath,
    search: TreeSearch,
    query: IndexQuery,
    accept: (display: string) => boolean,
    limit: number,
    signal: AbortSignal,
  ): EarlyScan | null {
    if (this.#state !== "ready" || this.#settling > 0 || this.#resync !== null) return null;
    if (this.#dirty.size > 0 || this.#relist.size > 0 || this.#needsCompaction()) return null;
    const entry = this.#table.get(start.display);
    if (entry?.kind !== "directory" || !sameIgnore(entry.outer, search.ignore)) return null;
    const files = this.#candidates(start.display, query, accept);
    // Its own signal, so that it can be cancelled alone; the call's abort ends it as well.
    const own = new AbortController();
    const forward = () => own.abort(signal.reason);
    signal.addEventListener("abort", forward, { once: true });
    const scan = scanCandidates(
      this.#workers!,
      this.#rootReal,
      files,
      search.request,
      limit,
      own.signal,
    );
    // Under way at once: the workers read while the fence goes on.
    const first = scan.next();
    first.catch(() => {});
    const done = () => signal.removeEventListener("abort", forward);
    return {
      generation: this.#generation,
      revision: this.#revision,
      hits: (async function* () {
        try {
          const head = await first;
          if (head.done) return;
          yield head.value;
          yield* scan;
        } finally {
          await scan.return(undefined);
          done();
        }
      })(),
      async cancel() {
        own.abort(new Error("A scan begun before the index was brought up to date is void."));
        await first.catch(() => {});
        await scan.return(undefined).catch(() => {});
        done();
      },
    };
  }

  /** `glob`'s listing from the index, or `null` when the index cannot answer it. */
  async glob(
    start: CheckedPath,
    glob: TreeGlob,
    signal: AbortSignal,
  ): Promise<AsyncIterable<readonly string[]> | null> {
    if (!this.#answers(start) || this.#resyncing) return this.#walk();
    const matches = globMatcher(glob.pattern);
    if (!await this.#settle(signal) || !this.#holds(start, glob.ignore)) return this.#walk();
    this.#indexed++;
    return globEntries(this.#table, start.display, matches, glob.limit ?? Number.MAX_SAFE_INTEGER);
  }

  #walk(): null {
    this.#walked++;
    return null;
  }
}
