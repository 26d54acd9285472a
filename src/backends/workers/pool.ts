/**
 * The search workers: up to one per core (two at most here), walking and
 * scanning trees for tree searches; started on first use, kept idle without
 * holding the process open, shared by every backend of the process that runs
 * the same worker module.
 *
 * @module
 */
import { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";
import type { ScanResult } from "../../search/scan.ts";
import { unwrapCheckedPath } from "../../path/checked_path.ts";
import type { CheckedPath } from "../../path/checked_path.ts";
import type { TreeGlob, TreeHit, TreeSearch, TreeWalk } from "../filesystem.ts";
import { STOP, unitName, WAITING } from "./unit.ts";
import type { TreeSelect, TreeSpec, TreeUnit, UnitAnswer, UnitJob, WorkerReady } from "./unit.ts";
import { walkOrder } from "../../search/walk.ts";
import type {
  PackedFilesAnswer,
  PackedFilesJob,
  SegmentAnswer,
  SegmentJob,
  StampAnswer,
  StampJob,
  TreeListAnswer,
  TreeListJob,
} from "../../search/index/jobs.ts";

interface Slot {
  readonly worker: Worker;
  /**
   * Handlers by job id, called with every answer of their job, or `null` when
   * the worker is gone; a handler returns `true` once its job is over.
   */
  readonly waiting: Map<
    number,
    (answer: UnitAnswer | SegmentAnswer | PackedFilesAnswer | null) => boolean
  >;
  broken: Error | null;
  /** Whether the worker has loaded its module and answers at once. */
  loaded: boolean;
  /** Resolves when the worker has loaded its module (never, for a module that does not say). */
  readonly whenLoaded: Promise<void>;
  /** Resolves when the worker has loaded its module or failed. */
  readonly whenSettled: Promise<void>;
}

const MAX_WORKERS = 2;
const WORKER_YOUNG_MIB = 8;

/** Where a tree search starts: a directory the backend took from a checked path. */
export interface TreeStart {
  /** Its real path. */
  readonly real: string;
  /** Its path relative to the working directory. */
  readonly display: string;
  /** Whether `.gitignore` files apply below it. */
  readonly ignorable: boolean;
  /** Where the backend reaches descriptors by path (see `descriptors.ts`), in order. */
  readonly routes: readonly string[];
}

/** Where a tree walk of a checked directory starts. */
export function treeStart(start: CheckedPath, routes: readonly string[]): TreeStart {
  const ignorable = start.rootKind === "working_directory";
  return { real: unwrapCheckedPath(start), display: start.display, ignorable, routes };
}

/** The process's pools, one per worker module. */
const pools = new Map<string, SearchPool>();

/**
 * The process's pool of workers running `workerModule` (a runtime adapter's
 * worker, which calls `serveSearches` of `worker.ts`): every backend of a
 * process shares it, so a host with many sessions still starts one worker
 * per core, not one per session.
 */
export function sharedPool(workerModule: URL): SearchPool {
  const pool = pools.get(workerModule.href) ?? new SearchPool(workerModule);
  pools.set(workerModule.href, pool);
  return pool;
}

/** A pool of search workers. */
export class SearchPool {
  #slots: Slot[] = [];
  #ids = 0;

  readonly #workerModule: URL;

  /** A pool whose workers run `workerModule`. */
  constructor(workerModule: URL) {
    this.#workerModule = workerModule;
  }

  #start(): Slot {
    // A smaller young generation than V8's default, which let each worker hold ~10 MiB more at
    // the peak of a large search; 8 MiB rather than 4 keeps walking's GC time down.
    const worker = new Worker(this.#workerModule, {
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MIB },
    });
    let loaded = () => {};
    const whenLoaded = new Promise<void>((resolve) => (loaded = resolve));
    let settle = () => {};
    const whenSettled = new Promise<void>((resolve) => (settle = resolve));
    const slot: Slot = {
      worker,
      waiting: new Map(),
      broken: null,
      loaded: false,
      whenLoaded,
      whenSettled,
    };
    worker.on("message", (answer: UnitAnswer | SegmentAnswer | PackedFilesAnswer | WorkerReady) => {
      if ("ready" in answer) {
        slot.loaded = true;
        loaded();
        settle();
      } else if (slot.waiting.get(answer.id)?.(answer)) slot.waiting.delete(answer.id);
      if (slot.waiting.size === 0) worker.unref();
    });
    // A worker that fails or exits answers every job it holds, so no search waits forever.
    const retire = (error: Error) => {
      slot.broken ??= error;
      settle();
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

  /** Every worker the pool may have, started. */
  #all(): Slot[] {
    const size = Math.min(MAX_WORKERS, Math.max(1, availableParallelism()));
    while (this.#slots.length < size) this.#slots.push(this.#start());
    return [...this.#slots];
  }

  /** The workers started so far; the first is started when there is none. */
  #some(): Slot[] {
    if (this.#slots.length === 0) this.#slots.push(this.#start());
    return [...this.#slots];
  }

  /** Starts the workers the pool may have and has not started; returns them. */
  #rest(): Slot[] {
    const before = new Set(this.#slots);
    try {
      this.#all();
    } catch {
      // A worker that cannot start leaves the search to those that did.
    }
    return this.#slots.filter((slot) => !before.has(slot));
  }

  /**
   * Whether a worker of the pool has loaded its module: a job posted now
   * starts at once, not after the worker's start-up.
   */
  get ready(): boolean {
    return this.#slots.some((slot) => slot.loaded && slot.broken === null);
  }

  /** Whether a worker of the pool is started and has not failed: it is ready, or will be. */
  get available(): boolean {
    return this.#slots.some((slot) => slot.broken === null);
  }

  /**
   * Resolves once a worker of the pool is {@link ready}, or none is
   * {@link available} any more (each started one failed), without starting
   * any.
   */
  async settled(): Promise<void> {
    while (!this.ready && this.available) {
      const slots = this.#slots.filter((slot) => slot.broken === null);
      // Held open until then: an idle worker does not keep the process alive.
      for (const slot of slots) slot.worker.ref();
      try {
        await Promise.race(slots.map((slot) => slot.whenSettled));
      } finally {
        for (const slot of slots) if (slot.waiting.size === 0) slot.worker.unref();
      }
    }
  }

  /**
   * Resolves once a worker of the pool has loaded its module (see
   * {@link ready}); starts the first worker when none is started.
   */
  async whenReady(): Promise<void> {
    const slots = this.#some();
    // Held open until then: an idle worker does not keep the process alive.
    for (const slot of slots) slot.worker.ref();
    try {
      await Promise.race(slots.map((slot) => slot.whenLoaded));
    } finally {
      for (const slot of slots) if (slot.waiting.size === 0) slot.worker.unref();
    }
  }

  /**
   * Starts the workers the pool may have, ahead of a search; with `"first"`,
   * only the first (a tree job starts the others once its first unit is
   * under way). A worker that cannot start is left to the search itself,
   * which then reports it.
   */
  warm(workers: "all" | "first" = "all"): void {
    try {
      if (workers === "all") this.#all();
      else this.#some();
    } catch {
      // The search that follows starts it again and handles the failure.
    }
  }

  /**
   * A tree job: the start's unit goes to one worker, the other waits for the
   * units it hands on (see `unit.ts`), and the results come back here
   * in walk order. Stopping the iteration or aborting stops every unit
   * before its next file; the units already running are awaited.
   *
   * Starting a worker holds this thread up for a while (under Deno, about
   * as long as walking a few thousand entries): the workers not started
   * yet start once the start's unit is posted, so that the first walks
   * meanwhile, and each waits for units once it has loaded its module.
   */
  async *#tree<T>(
    start: TreeStart,
    walk: TreeWalk,
    after: string | undefined,
    select: TreeSelect,
    signal: AbortSignal | undefined,
    make: (display: string, result: ScanResult | null) => T,
  ): AsyncGenerator<T[]> {
    signal?.throwIfAborted();
    const slots = this.#some();
    const flags = new SharedArrayBuffer(8);
    const flag = new Int32Array(flags);
    const spec: TreeSpec = {
      id: ++this.#ids,
      start: start.display,
      select,
      limit: walk.limit ?? Number.MAX_SAFE_INTEGER,
      flags,
      routes: start.routes,
    };
    const order = new UnitOrder<T>();
    const queue: TreeUnit[] = [];
    const idle: Slot[] = [];
    const running = new Map<Slot, number>(slots.map((slot) => [slot, 0]));
    let failure: Error | null = null;
    let wake: (() => void) | null = null;
    const rouse = () => {
      wake?.();
      wake = null;
    };
    const stop = () => {
      Atomics.store(flag, STOP, 1);
      rouse();
    };
    const assign = (slot: Slot, unit: TreeUnit) => {
      running.set(slot, running.get(slot)! + 1);
      slot.worker.ref();
      slot.worker.postMessage({ kind: "unit", spec, unit } satisfies UnitJob);
    };
    const free = (slot: Slot) => {
      const next = queue.shift();
      if (next !== undefined) assign(slot, next);
      else {
        idle.push(slot);
        Atomics.add(flag, WAITING, 1);
      }
    };
    const handler = (slot: Slot) => (answer: UnitAnswer | null): boolean => {
      if (answer === null) {
        failure ??= new Error(
          `The search worker stopped: ${slot.broken?.message ?? "unknown reason"}`,
        );
        running.set(slot, 0);
      } else if ("error" in answer) {
        failure ??= new Error(answer.error);
        running.set(slot, running.get(slot)! - 1);
      } else if ("handOn" in answer) {
        const name = unitName(answer.handOn);
        order.open(name, name);
        // The walker claimed a waiting worker before handing this on.
        const waiting = idle.shift();
        if (waiting === undefined) queue.push(answer.handOn);
        else assign(waiting, answer.handOn);
      } else {
        const { displays, results } = answer;
        const items = displays.map((display, i) => make(display, results?.[i] ?? null));
        order.add(answer.unit, displays, items, answer.frontier, answer.done);
        if (answer.done) {
          running.set(slot, running.get(slot)! - 1);
          free(slot);
        }
      }
      rouse();
      return false;
    };
    const listen = (slot: Slot) => {
      const handle = handler(slot);
      // Only this job's answers come under its id.
      slot.waiting.set(spec.id, (answer) => handle(answer as UnitAnswer | null));
    };
    for (const slot of slots) listen(slot);
    let over = false;
    signal?.addEventListener("abort", stop, { once: true });
    try {
      const root: TreeUnit = {
        real: start.real,
        display: start.display,
        ignore: start.ignorable ? walk.ignore : null,
        ...(after === undefined ? {} : { after }),
      };
      order.open(root.display, root.after ?? root.display);
      assign(slots[0], root);
      for (const slot of slots.slice(1)) free(slot);
      for (const slot of this.#rest()) {
        slots.push(slot);
        running.set(slot, 0);
        listen(slot);
        slot.whenLoaded.then(() => {
          if (!over && slot.broken === null) free(slot);
        });
      }
      while (true) {
        signal?.throwIfAborted();
        if (failure !== null) throw failure;
        const ready = order.take();
        if (ready.length > 0) yield ready;
        else if (order.finished()) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      over = true;
      stop();
      signal?.removeEventListener("abort", stop);
      // Units already running stop at their next file or scan step, and are awaited.
      const busy = () => [...running.values()].some((count) => count > 0) && failure === null;
      while (busy()) await new Promise<void>((resolve) => (wake = resolve));
      for (const slot of slots) {
        slot.waiting.delete(spec.id);
        if (slot.waiting.size === 0) slot.worker.unref();
      }
    }
  }

  /**
   * Runs one job of the search index in the least busy worker and resolves
   * with its answer; rejects when the worker stops first.
   */
  run<J extends SegmentJob | PackedFilesJob | StampJob | TreeListJob>(
    job: Omit<J, "id">,
  ): Promise<
    J extends SegmentJob ? SegmentAnswer
      : J extends StampJob ? StampAnswer
      : J extends TreeListJob ? TreeListAnswer
      : PackedFilesAnswer
  > {
    const slots = this.#all();
    const slot = slots.reduce((a, b) => (b.waiting.size < a.waiting.size ? b : a));
    const id = ++this.#ids;
    return new Promise((resolve, reject) => {
      slot.waiting.set(id, (answer) => {
        if (answer === null) {
          reject(
            new Error(`The search worker stopped: ${slot.broken?.message ?? "unknown reason"}`),
          );
        } else resolve(answer as never);
        return true;
      });
      slot.worker.ref();
      slot.worker.postMessage({ ...job, id });
    });
  }

  /** A tree search: the files after `after` that matched or were skipped, in walk order. */
  searchTree(
    start: TreeStart,
    search: TreeSearch,
    after: string | undefined,
    signal?: AbortSignal,
  ): AsyncGenerator<readonly TreeHit[]> {
    const { request, glob, ...walk } = search;
    return this.#tree(
      start,
      walk,
      after,
      { search: request, files: glob },
      signal,
      (display, result): TreeHit => ({ display, result: result! }),
    );
  }

  /** A tree listing: the matching entries after `after`, in walk order. */
  globTree(
    start: TreeStart,
    glob: TreeGlob,
    after: string | undefined,
    signal?: AbortSignal,
  ): AsyncGenerator<readonly string[]> {
    const { pattern, ...walk } = glob;
    return this.#tree(start, walk, after, { matching: pattern }, signal, (display) => display);
  }
}

/** One unit's results not yet taken, and how far it has come. */
interface UnitResults<T> {
  readonly displays: string[];
  readonly items: T[];
  /** Index of the first result not taken. */
  at: number;
  /** Everything the unit sends later comes after this, in walk order. */
  frontier: string;
  done: boolean;
}

/**
 * Puts the results of a tree job's units back in walk order. Units cover
 * disjoint stretches of the walk, and each sends its results in order: a
 * result is taken once it comes before every running unit's frontier, and
 * before the next result of every other unit.
 */
class UnitOrder<T> {
  readonly #units = new Map<string, UnitResults<T>>();

  /** A unit starts: all it sends comes after `frontier`. */
  open(unit: string, frontier: string): void {
    this.#units.set(unit, { displays: [], items: [], at: 0, frontier, done: false });
  }

  /** A unit's results, in walk order. */
  add(unit: string, displays: string[], items: T[], frontier: string, done: boolean): void {
    const state = this.#units.get(unit)!;
    for (let i = 0; i < items.length; i++) {
      state.displays.push(displays[i]);
      state.items.push(items[i]);
    }
    state.frontier = frontier;
    state.done = done;
  }

  /** Whether every unit is done and every result taken. */
  finished(): boolean {
    for (const state of this.#units.values()) {
      if (!state.done || state.at < state.items.length) return false;
    }
    return true;
  }

  /** The results that can be taken now, in walk order. */
  take(): T[] {
    let bound: string | null = null;
    for (const state of this.#units.values()) {
      if (!state.done && (bound === null || walkOrder(state.frontier, bound) < 0)) {
        bound = state.frontier;
      }
    }
    const ready: T[] = [];
    while (true) {
      // The unit whose next result comes first, and the first next result of the others.
      let first: UnitResults<T> | null = null;
      let second: string | null = null;
      for (const state of this.#units.values()) {
        if (state.at === state.items.length) continue;
        const head = state.displays[state.at];
        if (first === null || walkOrder(head, first.displays[first.at]) < 0) {
          if (first !== null) second = first.displays[first.at];
          first = state;
        } else if (second === null || walkOrder(head, second) < 0) second = head;
      }
      if (first === null) break;
      const before = ready.length;
      while (first.at < first.items.length) {
        const head = first.displays[first.at];
        if (bound !== null && walkOrder(head, bound) > 0) break;
        if (second !== null && walkOrder(head, second) > 0) break;
        ready.push(first.items[first.at++]);
      }
      if (ready.length === before) break;
    }
    for (const [unit, state] of this.#units) {
      if (state.done && state.at === state.items.length) this.#units.delete(unit);
    }
    return ready;
  }
}
