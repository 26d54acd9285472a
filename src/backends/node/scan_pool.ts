/**
 * The Node backend's search workers: up to one per core (two at most here),
 * started on first use, kept idle without holding the process open.
 *
 * @module
 */
import { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";
import type { ScanRequest, ScanResult } from "../../search/scan.ts";
import type { ScanAnswer, ScanJob } from "./scan_worker.ts";

interface Slot {
  readonly worker: Worker;
  readonly waiting: Map<number, (answer: ScanAnswer) => void>;
  broken: Error | null;
}

const MAX_WORKERS = 2;
const WORKER_YOUNG_MIB = 4;
const NOTHING: ScanResult = Object.freeze({ matches: 0, lines: [] });

/** A pool of search workers. */
export class ScanPool {
  #slots: Slot[] = [];
  #ids = 0;

  #start(): Slot {
    // The worker module sits beside this one: .ts under Deno, .js in the npm build.
    const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
    // A small young generation: a worker's garbage is per-file scan results, and V8's default
    // young generation let each worker hold ~10 MiB more at the peak of a large search.
    const worker = new Worker(new URL(`./scan_worker.${extension}`, import.meta.url), {
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MIB },
    });
    const slot: Slot = { worker, waiting: new Map(), broken: null };
    worker.on("message", (answer: ScanAnswer) => {
      slot.waiting.get(answer.id)?.(answer);
      slot.waiting.delete(answer.id);
      if (slot.waiting.size === 0) worker.unref();
    });
    // A worker that fails or exits answers every job it holds, so no scan waits forever.
    const retire = (error: Error) => {
      slot.broken ??= error;
      for (const resolve of slot.waiting.values()) resolve({ id: -1, cancelled: true });
      slot.waiting.clear();
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
        if ("results" in answer) {
          const dense = new Array<ScanResult>(answer.count).fill(NOTHING);
          for (const [index, result] of answer.results) dense[index] = result;
          resolve(dense);
        } else reject(signal?.reason ?? slot.broken ?? new Error("The search worker stopped."));
      });
      slot.worker.ref();
      slot.worker.postMessage({ id, paths, request, cancel } satisfies ScanJob);
    });
  }
}
