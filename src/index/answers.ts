/**
 * How the search index answers, once it has proved itself fresh: `grep`'s
 * candidates scanned in the search workers by the walk's own scanner, in
 * walk order, up to the limit; `glob`'s matches among the entries, in walk
 * order. Which files are candidates is the index's to say (its segments);
 * whether it may answer at all is its freshness's.
 *
 * @module
 */
import type { IndexWorkers, TreeHit } from "../backends/filesystem.ts";
import { resultCount } from "../search/scan.ts";
import type { ScanRequest } from "../search/scan.ts";
import type { EntryTable } from "./entries.ts";

/**
 * Candidates in the first batch scanned; each next batch doubles, up to the
 * last, and is never more than a share of what is left (see {@link scanBatch}).
 */
const FIRST_SCAN = 32;
const LAST_SCAN = 512;
/** Scan batches running at once (two for each worker: one ready while the other runs). */
const SCANS_AT_ONCE = 4;
/** Scan batches done or running whose results have not been taken yet, at most. */
const SCANS_AHEAD = 8;
/** Paths a listing yields at a time. */
const LISTED_AT_ONCE = 512;

/**
 * The size of the next scan batch: `size`, but at most a
 * {@link SCANS_AT_ONCE}th of the `left` candidates (and no fewer than
 * {@link FIRST_SCAN}), so that the last batches are small and the workers
 * end together rather than one waiting on the other's large last batch.
 */
function scanBatch(size: number, left: number): number {
  return Math.min(size, Math.max(FIRST_SCAN, Math.ceil(left / SCANS_AT_ONCE)));
}

/**
 * Scans candidate files (display paths below the working directory at
 * `rootReal`) in the workers, yielding in their order what the walk's search
 * would, up to `limit` results.
 */
export async function* scanCandidates(
  workers: IndexWorkers,
  rootReal: string,
  files: readonly string[],
  request: ScanRequest,
  limit: number,
  signal: AbortSignal,
): AsyncGenerator<TreeHit[]> {
  const root = rootReal === "/" ? "" : rootReal;
  const flags = new SharedArrayBuffer(4);
  const stop = () => Atomics.store(new Int32Array(flags), 0, 1);
  signal.addEventListener("abort", stop, { once: true });
  // In candidate order; each batch is sent as soon as one ends (not when its results are taken,
  // in order), so that no worker waits on another's batch.
  const inFlight: { from: number; answer: ReturnType<IndexWorkers["scanFiles"]> }[] = [];
  let running = 0;
  let over = false;
  let next = 0;
  let size = FIRST_SCAN;
  const send = () => {
    while (
      !over && running < SCANS_AT_ONCE && inFlight.length < SCANS_AHEAD && next < files.length
    ) {
      const count = scanBatch(size, files.length - next);
      const paths = new Array<string>(Math.min(count, files.length - next));
      for (let i = 0; i < paths.length; i++) paths[i] = `${root}/${files[next + i]}`;
      const answer = workers.scanFiles({ files: paths, request, flags });
      running++;
      answer.then(ended, ended);
      inFlight.push({ from: next, answer });
      next += paths.length;
      size = Math.min(size * 2, LAST_SCAN);
    }
  };
  const ended = () => {
    running--;
    send();
  };
  let found = 0;
  try {
    send();
    while (inFlight.length > 0) {
      const { from, answer } = inFlight[0];
      const { results, error } = await answer;
      inFlight.shift();
      signal.throwIfAborted();
      if (error !== undefined) throw new Error(error);
      const hits: TreeHit[] = [];
      for (let i = 0; i < results.length; i++) {
        const result = results[i];
        if (result === null) continue;
        hits.push({ display: files[from + i], result });
        found += resultCount(result, request.mode);
        if (found >= limit) break;
      }
      if (found >= limit) over = true;
      if (hits.length > 0) yield hits;
      if (over) return;
      send();
    }
  } finally {
    over = true;
    stop();
    signal.removeEventListener("abort", stop);
    await Promise.allSettled(inFlight.map((job) => job.answer));
  }
}

/**
 * The entries below `start` (a directory of `table`) whose path relative to
 * it `matches`, in walk order, up to `limit`, yielded a batch at a time.
 */
export function globEntries(
  table: EntryTable,
  start: string,
  matches: (relative: string) => boolean,
  limit: number,
): AsyncIterable<readonly string[]> {
  const cut = start === "." ? 0 : start.length + 1;
  const [from, to] = table.range(start);
  const sorted = table.displays();
  const found: string[] = [];
  for (let i = from; i < to && found.length < limit; i++) {
    const display = sorted[i];
    if (matches(display.slice(cut))) found.push(display);
  }
  return (async function* () {
    for (let i = 0; i < found.length; i += LISTED_AT_ONCE) yield found.slice(i, i + LISTED_AT_ONCE);
  })();
}
