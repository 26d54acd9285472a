/**
 * The tree search and tree glob of a backend with search workers, and where
 * their work runs. A tree job starts on the calling thread, in the workers'
 * own synchronous walk (`unit.ts`) taken in short steps between which the
 * thread serves its host, while the workers start; once one is ready, the
 * rest goes to the workers, after the last entry walked here. A small job
 * ends here before any worker is ready; where the workers cannot run (the
 * runtime may not read their module), all of it runs here. Without a worker
 * module, every search runs here over the backend's asynchronous reads.
 *
 * @module
 */
import { setImmediate } from "node:timers";
import type { AsyncFileSystem } from "../filesystem.ts";
import { globHere, scanHere, threadSearches, ThreadWalk } from "../thread_search.ts";
import type { ThreadReads } from "../thread_search.ts";
import { sharedPool, treeStart } from "./pool.ts";
import type { SearchPool, TreeStart } from "./pool.ts";
import type { TreeHit, TreeWalk } from "../filesystem.ts";
import type { ScanRequest, ScanResult } from "../../search/scan.ts";
import { type CheckedPath, unwrapCheckedPath } from "../../path/checked_path.ts";
import type { PackedFilesJob, SegmentJob, StampJob, TreeListJob } from "../../search/index/jobs.ts";
import { foundResults } from "../../search/index/scan_found.ts";
import { STOP, UnitSteps } from "./unit.ts";
import type { ListSync, TreeSelect, TreeUnit } from "./unit.ts";
import { Routes } from "../descriptor_route.ts";
import type { DescriptorRoute } from "../descriptors.ts";
import { matcherFor, scanOne } from "./scan_file.ts";

/**
 * A search given a file alone scans it on the calling thread when it is at
 * most this large: a larger one goes to a worker, since a file's scan
 * pauses only between lines and a long line under a costly pattern takes
 * seconds.
 */
const HERE_FIRST = { files: 2, largestFile: 64 * 1024 };
/**
 * Milliseconds of a step of a tree job's walk on the calling thread; between
 * two steps the thread serves its host (and hears a worker become ready).
 */
const STEP_MS = 8;

/** Resolves at the next turn of the event loop, once pending I/O and messages are handled. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Yields the batches of a job in the workers. Returns `false`, having yielded
 * nothing, when the job fails before its first batch, so that the caller can
 * do the work on this thread; a later failure, or cancellation, is thrown.
 */
async function* fromWorkers<T>(
  batches: AsyncIterable<T>,
  signal: AbortSignal,
): AsyncGenerator<T, boolean> {
  let started = false;
  try {
    for await (const batch of batches) {
      started = true;
      yield batch;
    }
    return true;
  } catch (error) {
    if (started || signal.aborted) throw error;
    return false;
  }
}

/**
 * Scans one file in a worker, which stops when `signal` aborts (the abort is
 * thrown); `null` when the workers cannot run it, for the caller to scan it.
 */
async function scanInWorker(
  pool: SearchPool,
  routes: readonly string[],
  file: CheckedPath,
  request: ScanRequest,
  signal: AbortSignal,
): Promise<TreeHit[] | null> {
  const flags = new SharedArrayBuffer(4);
  const stop = () => Atomics.store(new Int32Array(flags), 0, 1);
  signal.addEventListener("abort", stop, { once: true });
  try {
    const files = unwrapCheckedPath(file);
    const answer = await pool.run<PackedFilesJob>({ kind: "files", routes, files, request, flags });
    signal.throwIfAborted();
    if (answer.error !== undefined) return null;
    const found = foundResults(answer.found, answer.lines, request.mode === "content");
    const result = found[0] ?? null;
    return result === null ? [] : [{ display: file.display, result }];
  } catch (error) {
    if (signal.aborted) throw error;
    return null;
  } finally {
    signal.removeEventListener("abort", stop);
  }
}

/**
 * When a tree job begun on the calling thread goes on in the workers: once
 * one is ready (`"ready"`), or never (the workers could not run it).
 */
type HandOff = "ready" | "never";

/**
 * Walks `steps` on the calling thread, yielding its results in walk order
 * (made by `make`), step by step; returns `true` at the unit's end, `false`
 * when the workers are to go on after {@link UnitSteps.through} (see
 * {@link HandOff}). A file too large to scan here waits for a worker; where
 * none can run, it is scanned here.
 */
async function* walkHere<T>(
  steps: UnitSteps,
  pool: SearchPool,
  handOff: HandOff,
  signal: AbortSignal,
  make: (display: string, result: ScanResult | null) => T,
): AsyncGenerator<readonly T[], boolean> {
  let leaveLarge = handOff !== "never" && pool.available;
  while (true) {
    signal.throwIfAborted();
    const { answers, state } = steps.step(performance.now() + STEP_MS, leaveLarge);
    for (const answer of answers) {
      if (!("displays" in answer) || answer.displays.length === 0) continue;
      const { displays, results } = answer;
      // Nothing more once the caller stopped the search, not even what this step found.
      signal.throwIfAborted();
      yield displays.map((display, i) => make(display, results?.[i] ?? null));
    }
    if (state === "stopped") signal.throwIfAborted();
    if (state === "done" || state === "stopped") return true;
    if (handOff === "ready" && pool.ready) return false;
    if (state === "left") {
      await pool.settled();
      if (pool.ready) return false;
      // No worker can run: the large file, and the rest, here.
      leaveLarge = false;
    } else await nextTurn();
  }
}

/**
 * The search methods of a backend whose tree searches run in the process's
 * pool of workers for `workerModule` (the adapter's worker, which calls
 * `serveSearches`) and begin on the calling thread, listing directories with
 * `list` (as the adapter's worker does); reading through `filesystem` on the
 * calling thread for a file alone. Descriptors are reached through the
 * backend's `route` (found before its first operation; `null` for the best
 * effort). With `workerModule` `null`, the searches of the calling thread.
 */
export function workerSearches(
  filesystem: ThreadReads,
  workerModule: URL | null,
  route: () => Promise<DescriptorRoute | null>,
  list: ListSync,
): Pick<AsyncFileSystem, "prepareSearch" | "searchTree" | "globTree" | "indexWorkers"> {
  if (workerModule === null) return { ...threadSearches(filesystem), prepareSearch() {} };
  const pool = sharedPool(workerModule);
  const routes = async (): Promise<string[]> => {
    const found = await route();
    return found === null ? [] : [found.path];
  };
  /** A tree job's results, in walk order: from this thread while no worker is ready, then theirs. */
  async function* tree<T>(
    start: CheckedPath,
    walk: TreeWalk,
    select: TreeSelect,
    fromPool: (
      start: TreeStart,
      limit: number,
      after: string | undefined,
    ) => AsyncIterable<readonly T[]>,
    make: (display: string, result: ScanResult | null) => T,
    signal: AbortSignal,
  ): AsyncGenerator<readonly T[]> {
    const found = await route();
    const begun = treeStart(start, found === null ? [] : [found.path]);
    const limit = walk.limit ?? Number.MAX_SAFE_INTEGER;
    const here = (after: string | undefined) => {
      const unit: TreeUnit = {
        real: begun.real,
        display: begun.display,
        ignore: begun.ignorable ? walk.ignore : null,
        ...(after === undefined ? {} : { after }),
      };
      const spec = {
        id: 0,
        start: begun.display,
        select,
        limit,
        flags: new SharedArrayBuffer(8),
        routes: begun.routes,
      };
      const stop = () => Atomics.store(new Int32Array(spec.flags), STOP, 1);
      signal.addEventListener("abort", stop, { once: true });
      stops.push(stop);
      return new UnitSteps(spec, unit, Routes.found(found), list, scanFileHere);
    };
    const stops: (() => void)[] = [];
    try {
      let steps: UnitSteps | null = null;
      if (!pool.ready) {
        steps = here(undefined);
        if (yield* walkHere(steps, pool, "ready", signal, make)) return;
      }
      const rest = fromPool(begun, limit - (steps?.found ?? 0), steps?.through);
      if (yield* fromWorkers(rest, signal)) return;
      // The workers could not run: the rest here, from where this thread stopped.
      steps ??= here(undefined);
      yield* walkHere(steps, pool, "never", signal, make);
    } finally {
      for (const stop of stops) signal.removeEventListener("abort", stop);
    }
  }
  return {
    indexWorkers: {
      buildSegment: async (job) =>
        pool.run<SegmentJob>({ kind: "segment", routes: await routes(), ...job }),
      async scanFiles({ files, request, flags }) {
        const { id, found, lines, error } = await pool.run<PackedFilesJob>({
          kind: "files",
          routes: await routes(),
          files: files.join("\0"),
          request,
          flags,
        });
        const results = foundResults(found, lines, request.mode === "content");
        return error === undefined ? { id, results } : { id, results, error };
      },
      stampFiles: async (job) =>
        pool.run<StampJob>({ kind: "stamps", routes: await routes(), ...job }),
      listTree: async (job) =>
        pool.run<TreeListJob>({ kind: "tree", routes: await routes(), ...job }),
    },
    prepareSearch() {
      pool.warm();
    },
    async *searchTree(start, search, signal = new AbortController().signal) {
      const info = await filesystem.stat(start);
      if (info.kind === "directory") {
        // The workers start while this thread begins.
        pool.warm();
        const { request, glob, ...walk } = search;
        yield* tree<TreeHit>(
          start,
          walk,
          { search: request, files: glob },
          (begun, limit, after) => pool.searchTree(begun, { ...search, limit }, after, signal),
          (display, result) => ({ display, result: result! }),
          signal,
        );
        return;
      }
      // A file alone: scanned here when small, else in a worker.
      const here = await ThreadWalk.start(filesystem, start, search.ignore, signal);
      yield* scanHere(filesystem, here, search, signal, HERE_FIRST);
      if (here.done) return;
      const hits = await scanInWorker(pool, await routes(), start, search.request, signal);
      if (hits !== null) {
        if (hits.length > 0) yield hits;
        return;
      }
      yield* scanHere(filesystem, here, search, signal);
    },
    async *globTree(start, glob, signal = new AbortController().signal) {
      const info = await filesystem.stat(start);
      if (info.kind !== "directory") {
        yield* globHere(await ThreadWalk.start(filesystem, start, glob.ignore, signal), glob);
        return;
      }
      // A listing starts no worker: starting one holds this thread up (under Deno, about as long
      // as listing a few thousand entries, measured: 45-60 ms), and a listing is cheap per entry.
      // It goes to the workers that a search or the host (prepareSearch) started, once ready.
      const { pattern, ...walk } = glob;
      yield* tree<string>(
        start,
        walk,
        { matching: pattern },
        (begun, limit, after) => pool.globTree(begun, { ...glob, limit }, after, signal),
        (display) => display,
        signal,
      );
    },
  };
}

/** Scans a file on this thread as a worker does (see `scan_file.ts`). */
function scanFileHere(
  directories: Parameters<typeof scanOne>[0],
  real: string,
  request: ScanRequest,
  stopped: () => boolean,
  leaveLarge: boolean,
): ScanResult {
  return scanOne(directories, real, matcherFor(request), request, stopped, leaveLarge);
}
