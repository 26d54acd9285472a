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

/** Candidates in the first batch scanned; each next batch doubles, up to the last. */
const FIRST_SCAN = 32;
const LAST_SCAN = 1024;
/** Scan batches in flight at once. */
const SCANS_AT_ONCE = 4;
/** Paths a listing yields at a time. */
const LISTED_AT_ONCE = 512;

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
  const inFlight: { from: number; answer: ReturnType<IndexWorkers["scanFiles"]> }[] = [];
  let next = 0;
  let size = FIRST_SCAN;
  const send = () => {
    while (inFlight.length < SCANS_AT_ONCE && next < files.length) {
      const batch = files.slice(next, next + size);
      const answer = workers.scanFiles({
        files: batch.map((display) => `${root}/${display}`),
        request,
        flags,
      });
      answer.catch(() => {});
      inFlight.push({ from: next, answer });
      next += batch.length;
      size = Math.min(size * 2, LAST_SCAN);
    }
  };
  let found = 0;
  try {
    send();
    while (inFlight.length > 0) {
      const { from, answer } = inFlight.shift()!;
      const { results, error } = await answer;
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
      if (hits.length > 0) yield hits;
      if (found >= limit) return;
      send();
    }
  } finally {
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
