/**
 * The Node backend's search workers: up to one per core (two at most here),
 * scanning files and walking trees for tree searches; started on first use,
 * kept idle without holding the process open.
 *
 * @module
 */
import { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";
import type { ScanRequest, ScanResult } from "../../search/scan.ts";
import { unwrapCheckedPath } from "../../path/checked_path.ts";
import type { CheckedPath } from "../../path/checked_path.ts";
import type { AsyncFileSystem, TreeGlob, TreeHit, TreeSearch, TreeWalk } from "../filesystem.ts";
import type { ScanAnswer, ScanJob } from "./scan_worker.ts";
import type { CreditJob, WalkAnswer, WalkJob } from "./tree_walker.ts";

type Answer = ScanAnswer | WalkAnswer;

interface Slot {
  readonly worker: Worker;
  /**
   * Handlers by job id, called with every answer of their job, or `null` when
   * the worker is gone; a handler returns `true` once its job is over.
   */
  readonly waiting: Map<number, (answer: Answer | null) => boolean>;
  broken: Error | null;
}

const MAX_WORKERS = 2;
const WORKER_YOUNG_MIB = 8;
/** Batches a tree walk may run ahead of the batches consumed. */
const WALK_AHEAD = 4;
const NOTHING: ScanResult = Object.freeze({ matches: 0, lines: [] });

/** Where a tree search starts: a directory the backend took from a checked path. */
export interface TreeStart {
  /** Its real path. */
  readonly real: string;
  /** Its path relative to the working directory. */
  readonly display: string;
  /** Whether `.gitignore` files apply below it. */
  readonly ignorable: boolean;
}

/** Where a tree walk of a checked directory starts. */
function treeStart(start: CheckedPath): TreeStart {
  const ignorable = start.rootKind === "working_directory";
  return { real: unwrapCheckedPath(start), display: start.display, ignorable };
}

/** The search methods of a file-system backend whose searches run in a new pool's workers. */
export function workerSearches(): Pick<AsyncFileSystem, "scanFiles" | "searchTree" | "globTree"> {
  const pool = new ScanPool();
  return {
    scanFiles(paths, request, signal) {
      return pool.scan(paths.map(unwrapCheckedPath), request, signal);
    },
    searchTree(start, search, signal) {
      return pool.searchTree(treeStart(start), search, signal);
    },
    globTree(start, glob, signal) {
      return pool.globTree(treeStart(start), glob, signal);
    },
  };
}

/** A pool of search workers. */
export class ScanPool {
  #slots: Slot[] = [];
  #ids = 0;

  #start(): Slot {
    // The worker module sits beside this one: .ts under Deno, .js in the npm build.
    const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
    // A smaller young generation than V8's default, which let each worker hold ~10 MiB more at
    // the peak of a large search; 8 MiB rather than 4 keeps walking's GC time down.
    const worker = new Worker(new URL(`./scan_worker.${extension}`, import.meta.url), {
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MIB },
    });
    const slot: Slot = { worker, waiting: new Map(), broken: null };
    worker.on("message", (answer: Answer) => {
      if (slot.waiting.get(answer.id)?.(answer)) slot.waiting.delete(answer.id);
      if (slot.waiting.size === 0) worker.unref();
    });
    // A worker that fails or exits answers every job it holds, so no search waits forever.
    const retire = (error: Error) => {
      slot.broken ??= error;
      const handlers = [...slot.waiting.values()];
      slot.waiting.clear();
      for (const handler of handlers) handler(null);
      this.#slots = this.#slots.filter((s) => s !== slot);
    };
    worker.on("error", retire);
    worker.on("exit", (code) => retire(new Error(`The search worker exited with code ${code}.`)));
    worker.unref();
    return slot;
  }

  #pick(): Slot {
    const size = Math.min(MAX_WORKERS, Math.max(1, availableParallelism()));
    if (this.#slots.length < size) {
      const slot = this.#start();
      this.#slots.push(slot);
      return slot;
    }
    return this.#slots.reduce((a, b) => (b.waiting.size < a.waiting.size ? b : a));
  }

  /** Scans real paths in a worker; rejects with the signal's reason when cancelled. */
  scan(
    paths: readonly string[],
    request: ScanRequest,
    signal?: AbortSignal,
  ): Promise<ScanResult[]> {
    let slot: Slot;
    try {
      signal?.throwIfAborted();
      slot = this.#pick();
    } catch (error) {
      // Starting a worker can fail (a runtime may refuse to read its module): a rejection, not a throw.
      return Promise.reject(error);
    }
    const id = ++this.#ids;
    const cancel = new SharedArrayBuffer(4);
    const stop = () => Atomics.store(new Int32Array(cancel), 0, 1);
    signal?.addEventListener("abort", stop, { once: true });
    return new Promise<ScanResult[]>((resolve, reject) => {
      slot.waiting.set(id, (answer) => {
        signal?.removeEventListener("abort", stop);
        if (answer !== null && "results" in answer) {
          const dense = new Array<ScanResult>(answer.count).fill(NOTHING);
          for (const [index, result] of answer.results) dense[index] = result;
          resolve(dense);
        } else reject(signal?.reason ?? slot.broken ?? new Error("The search worker stopped."));
        return true;
      });
      slot.worker.ref();
      slot.worker.postMessage({ kind: "scan", id, paths, request, cancel } satisfies ScanJob);
    });
  }

  /**
   * Starts a walk in one of the workers. Its batches go to `onBatch` until it
   * is stopped; the feed tracks its end and failure and hands back credits.
   */
  #walk(
    start: TreeStart,
    walk: TreeWalk,
    select: WalkJob["select"],
    signal: AbortSignal | undefined,
    onBatch: (real: string[], display: string[]) => void,
  ): WalkFeed {
    // The walker is one of the scanning workers: it scans while it waits for credit. A third
    // thread would walk no faster on two cores and hold ~10 MiB more.
    const slot = this.#pick();
    const feed = new WalkFeed(slot, ++this.#ids, signal);
    slot.waiting.set(feed.id, (answer) => {
      if (answer === null || "error" in answer) {
        feed.fail(
          answer === null
            ? `The search worker stopped: ${slot.broken?.message ?? "unknown reason"}`
            : answer.error,
        );
      } else if ("done" in answer) feed.end();
      else if ("display" in answer) {
        if (!feed.stopped) onBatch(answer.real, answer.display);
        feed.rouse();
      }
      return feed.ended;
    });
    slot.worker.ref();
    slot.worker.postMessage(
      {
        kind: "walk",
        id: feed.id,
        root: start.real,
        display: start.display,
        ignorable: start.ignorable,
        walk,
        select,
        ahead: WALK_AHEAD,
        cancel: feed.cancel,
      } satisfies WalkJob,
    );
    return feed;
  }

  /**
   * A tree search: one worker walks, the workers scan its batches, and the
   * files that matched or were skipped come back in walk order.
   */
  async *searchTree(
    start: TreeStart,
    search: TreeSearch,
    signal?: AbortSignal,
  ): AsyncGenerator<readonly TreeHit[]> {
    signal?.throwIfAborted();
    const { request, glob, ...walk } = search;
    const batches: { display: string[]; results: Promise<ScanResult[]> }[] = [];
    const feed = this.#walk(start, walk, { files: glob }, signal, (real, display) => {
      const results = this.scan(real, request, signal);
      results.catch(() => {}); // awaited in order below, or settled when the search stops
      batches.push({ display, results });
    });
    try {
      while (true) {
        const next = await feed.next(batches);
        if (next === null) return;
        const results = await next.results;
        signal?.throwIfAborted();
        feed.credit();
        const hits: TreeHit[] = [];
        for (let i = 0; i < results.length; i++) {
          const result = results[i];
          if (result.matches > 0 || result.skip !== undefined) {
            hits.push({ display: next.display[i], result });
          }
        }
        if (hits.length > 0) yield hits;
      }
    } finally {
      feed.close();
      // Scans already in flight are awaited, never left floating.
      await Promise.allSettled(batches.map((batch) => batch.results));
    }
  }

  /** A tree listing: one worker walks and sends the matching entries, in walk order. */
  async *globTree(
    start: TreeStart,
    glob: TreeGlob,
    signal?: AbortSignal,
  ): AsyncGenerator<readonly string[]> {
    signal?.throwIfAborted();
    const { pattern, ...walk } = glob;
    const batches: string[][] = [];
    const feed = this.#walk(
      start,
      walk,
      { matching: pattern },
      signal,
      (_real, display) => batches.push(display),
    );
    try {
      while (true) {
        const next = await feed.next(batches);
        if (next === null) return;
        feed.credit();
        yield next;
      }
    } finally {
      feed.close();
    }
  }
}

/** The main thread's end of a walk running in a worker. */
class WalkFeed {
  readonly cancel = new SharedArrayBuffer(4);
  ended = false;
  stopped = false;
  #failure: Error | null = null;
  #wake: (() => void) | null = null;
  readonly #stop = () => this.stop();

  constructor(
    readonly slot: Slot,
    readonly id: number,
    readonly signal: AbortSignal | undefined,
  ) {
    signal?.addEventListener("abort", this.#stop, { once: true });
  }

  /** Wakes the consumer. */
  rouse(): void {
    this.#wake?.();
    this.#wake = null;
  }

  /** The walk has sent everything. */
  end(): void {
    this.ended = true;
    this.rouse();
  }

  /** The walk failed. */
  fail(message: string): void {
    this.#failure = new Error(message);
    this.end();
  }

  /**
   * The next batch of `queue` in order, once there is one; `null` at the
   * end. Throws the signal's reason once aborted, or the walk's failure.
   */
  async next<T>(queue: T[]): Promise<T | null> {
    while (true) {
      this.signal?.throwIfAborted();
      const next = queue.shift();
      if (next !== undefined) return next;
      if (this.#failure !== null) throw this.#failure;
      if (this.ended) return null;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  /** One batch consumed: the walk may send one more. */
  credit(): void {
    if (!this.ended) {
      this.slot.worker.postMessage({ kind: "credit", id: this.id } satisfies CreditJob);
    }
  }

  /** Stops the walk before its next entry. */
  stop(): void {
    this.stopped = true;
    Atomics.store(new Int32Array(this.cancel), 0, 1);
    // A walk waiting for a credit wakes, sees the flag, and ends.
    this.credit();
    this.rouse();
  }

  /** Stops the walk and lets go of the signal. */
  close(): void {
    this.stop();
    this.signal?.removeEventListener("abort", this.#stop);
  }
}
