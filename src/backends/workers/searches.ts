/**
 * The tree search and tree glob of a backend with search workers, and where
 * their work runs. A search starts on the calling thread, so a small one
 * ends at once while the workers start; past its first files (entries, for a
 * glob) it goes on in the workers, after the last entry walked here; and
 * where the workers cannot run (the runtime may not read their module), it
 * goes on here instead. Without a worker module, every search runs here.
 *
 * @module
 */
import type { AsyncFileSystem } from "../filesystem.ts";
import { globHere, scanHere, threadSearches, ThreadWalk } from "../thread_search.ts";
import type { ThreadReads } from "../thread_search.ts";
import { resultCount } from "../../search/scan.ts";
import { sharedPool, treeStart } from "./pool.ts";
import type { SearchPool } from "./pool.ts";
import type { TreeHit } from "../filesystem.ts";
import type { ScanRequest } from "../../search/scan.ts";
import { type CheckedPath, unwrapCheckedPath } from "../../path/checked_path.ts";
import type { FilesJob, SegmentJob, StampJob } from "../../index/jobs.ts";

/**
 * Files scanned on the calling thread before a search goes on in the
 * workers, and the largest scanned there: a larger file goes to the workers,
 * with the rest of the walk, since a file's scan pauses only between lines
 * and a long line under a costly pattern takes seconds.
 */
const HERE_FIRST = { files: 64, largestFile: 64 * 1024 };
/** Entries walked on the calling thread before a glob goes on in the workers. */
const ENTRIES_HERE_FIRST = 256;

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
    const files = [unwrapCheckedPath(file)];
    const answer = await pool.run<FilesJob>({ kind: "files", routes, files, request, flags });
    signal.throwIfAborted();
    if (answer.error !== undefined) return null;
    const result = answer.results[0] ?? null;
    return result === null ? [] : [{ display: file.display, result }];
  } catch (error) {
    if (signal.aborted) throw error;
    return null;
  } finally {
    signal.removeEventListener("abort", stop);
  }
}

/**
 * The search methods of a backend whose tree searches run in the process's
 * pool of workers for `workerModule` (the adapter's worker, which calls
 * `serveSearches`), reading through `filesystem` on the calling thread; the
 * workers reach descriptors through the first of the paths `routes` gives
 * (the backend's route, found before its first operation) that works there.
 * With `workerModule` `null`, the searches of the calling thread.
 */
export function workerSearches(
  filesystem: ThreadReads,
  workerModule: URL | null,
  routes: () => Promise<readonly string[]>,
): Pick<AsyncFileSystem, "prepareSearch" | "searchTree" | "globTree" | "indexWorkers"> {
  if (workerModule === null) return { ...threadSearches(filesystem), prepareSearch() {} };
  const pool = sharedPool(workerModule);
  return {
    indexWorkers: {
      buildSegment: async (job) =>
        pool.run<SegmentJob>({ kind: "segment", routes: await routes(), ...job }),
      scanFiles: async (job) =>
        pool.run<FilesJob>({ kind: "files", routes: await routes(), ...job }),
      stampFiles: async (job) =>
        pool.run<StampJob>({ kind: "stamps", routes: await routes(), ...job }),
    },
    prepareSearch() {
      pool.warm();
    },
    async *searchTree(start, search, signal = new AbortController().signal) {
      const here = await ThreadWalk.start(filesystem, start, search.ignore, signal);
      // A large search goes on in the workers: they start while this one begins.
      if (here.isTree) pool.warm();
      let found = 0;
      for await (const hits of scanHere(filesystem, here, search, signal, HERE_FIRST)) {
        for (const hit of hits) found += resultCount(hit.result, search.request.mode);
        yield hits;
      }
      if (here.done) return;
      if (!here.isTree) {
        // A file searched alone, too large to scan here.
        const hits = await scanInWorker(pool, await routes(), start, search.request, signal);
        if (hits !== null) {
          if (hits.length > 0) yield hits;
          return;
        }
      } else {
        const rest = { ...search, limit: (search.limit ?? Number.MAX_SAFE_INTEGER) - found };
        const workers = pool.searchTree(
          treeStart(start, await routes()),
          rest,
          here.last ?? undefined,
          signal,
        );
        if (yield* fromWorkers(workers, signal)) return;
      }
      yield* scanHere(filesystem, here, search, signal);
    },
    async *globTree(start, glob, signal = new AbortController().signal) {
      const here = await ThreadWalk.start(filesystem, start, glob.ignore, signal);
      // A listing is cheap per entry: the first worker walks while the others start.
      if (here.isTree) pool.warm("first");
      let found = 0;
      // Once a worker is ready (an earlier search started it), the walk goes there after its
      // first entry (a start with nothing in it ends here): a worker walks a tree several times
      // faster than this thread's walk over asynchronous calls.
      const ready = () => pool.ready;
      for await (const paths of globHere(here, glob, ENTRIES_HERE_FIRST, ready)) {
        found += paths.length;
        yield paths;
      }
      if (here.done) return;
      const rest = { ...glob, limit: (glob.limit ?? Number.MAX_SAFE_INTEGER) - found };
      const after = here.last ?? undefined;
      const workers = pool.globTree(treeStart(start, await routes()), rest, after, signal);
      if (yield* fromWorkers(workers, signal)) return;
      yield* globHere(here, glob);
    },
  };
}
