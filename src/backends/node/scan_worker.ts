/**
 * A search worker of the Node backend: scans files with synchronous reads
 * into one reused buffer (a worker thread may block; the host's event loop
 * does not), checking the shared cancel flag before every file; or walks a
 * tree for a tree search (see `tree_walker.ts`).
 *
 * @module
 */
import { parentPort } from "node:worker_threads";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { compileMatcher } from "../../search/matcher.ts";
import type { LineMatcher } from "../../search/matcher.ts";
import { scanBytes } from "../../search/scan.ts";
import { credit, runWalk } from "./tree_walker.ts";
import type { CreditJob, WalkJob } from "./tree_walker.ts";
import type { ScanRequest, ScanResult } from "../../search/scan.ts";

/** A job posted to the worker. */
export interface ScanJob {
  /** Tells it from a walk job. */
  readonly kind: "scan";
  /** Job id, echoed in the answer. */
  readonly id: number;
  /** Real paths (unwrapped from checked paths by the backend). */
  readonly paths: readonly string[];
  /** The search. */
  readonly request: ScanRequest;
  /** One Int32: set to 1 to stop before the next file. */
  readonly cancel: SharedArrayBuffer;
}

/**
 * The worker's answer. Results are sparse, `[index, result]` for the files
 * that matched or were skipped: most files match nothing, and cloning a
 * result per file across threads would cost more than scanning it.
 */
export type ScanAnswer =
  | { readonly id: number; readonly count: number; readonly results: [number, ScanResult][] }
  | { readonly id: number; readonly cancelled: true };

const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
let buffer = new Uint8Array(1 << 20);
let compiled: { key: string; matcher: LineMatcher } | null = null;

function matcherFor(request: ScanRequest): LineMatcher {
  const key = `${request.caseInsensitive ? "i" : "s"}:${request.pattern}`;
  if (compiled?.key !== key) {
    compiled = { key, matcher: compileMatcher(request.pattern, request.caseInsensitive) };
  }
  return compiled.matcher;
}

function scanOne(path: string, matcher: LineMatcher, request: ScanRequest): ScanResult {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch {
    return { skip: "unreadable", matches: 0, lines: [] };
  }
  try {
    // Most files fit the buffer: one read and no fstat. A full buffer asks fstat for the size.
    let filled = readSync(fd, buffer, 0, buffer.length, null);
    if (filled === buffer.length) {
      const stats = fstatSync(fd);
      if (!stats.isFile()) return { skip: "unreadable", matches: 0, lines: [] };
      if (stats.size > request.maxBytes) return { skip: "too_large", matches: 0, lines: [] };
      const larger = new Uint8Array(Math.max(stats.size + 1, buffer.length * 2));
      larger.set(buffer);
      buffer = larger;
      // Read to end of file (it may have grown), never past the cap.
      while (filled < buffer.length) {
        const read = readSync(fd, buffer, filled, buffer.length - filled, null);
        if (read === 0) break;
        filled += read;
        if (filled > request.maxBytes) return { skip: "too_large", matches: 0, lines: [] };
      }
    }
    return scanBytes(buffer.subarray(0, filled), matcher, request);
  } catch {
    return { skip: "unreadable", matches: 0, lines: [] };
  } finally {
    closeSync(fd);
  }
}

parentPort?.on("message", (job: ScanJob | WalkJob | CreditJob) => {
  if (job.kind === "walk") {
    void runWalk(job, (answer) => parentPort!.postMessage(answer));
    return;
  }
  if (job.kind === "credit") return credit(job);
  const flag = new Int32Array(job.cancel);
  const matcher = matcherFor(job.request);
  const results: [number, ScanResult][] = [];
  for (let i = 0; i < job.paths.length; i++) {
    if (Atomics.load(flag, 0) !== 0) {
      parentPort!.postMessage({ id: job.id, cancelled: true } satisfies ScanAnswer);
      return;
    }
    const result = scanOne(job.paths[i], matcher, job.request);
    if (result.matches > 0 || result.skip !== undefined) results.push([i, result]);
  }
  parentPort!.postMessage({ id: job.id, count: job.paths.length, results } satisfies ScanAnswer);
});
