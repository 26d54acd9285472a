/**
 * The walking half of a tree search, run in a search worker: the same walk
 * as on the calling thread (`src/search/walk.ts`), over synchronous calls,
 * sending the accepted files back in growing batches and staying at most
 * `ahead` batches ahead of the consumer.
 *
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import type { DirEntry, TreeWalk } from "../filesystem.ts";
import { codeOfRuntimeError } from "../errors.ts";
import { isPlainChild } from "../../path/mod.ts";
import { kindOf } from "./entry_kind.ts";
import { globFilter, globMatcher } from "../../search/glob_filter.ts";
import { IgnoreStack, walkOrder, walkTree } from "../../search/walk.ts";
import type { WalkedEntry, WalkIO } from "../../search/walk.ts";

/** A walk job: the tree below `root` (a real path the backend took from a checked path). */
export interface WalkJob {
  /** Tells it from a scan job. */
  readonly kind: "walk";
  /** Job id, echoed in every answer. */
  readonly id: number;
  /** The start's real path. */
  readonly root: string;
  /** The start relative to the working directory. */
  readonly display: string;
  /** Whether `.gitignore` files apply below the start (not in the skill root). */
  readonly ignorable: boolean;
  /** The walk's `.gitignore` state and where it resumes. */
  readonly walk: TreeWalk;
  /**
   * What it sends: grep's files (filtered by ripgrep-style `glob`), or the
   * files and directories whose path relative to the start matches `pattern`.
   */
  readonly select: { readonly files: string | undefined } | { readonly matching: string };
  /** Batches it may send before the consumer answers one with a credit. */
  readonly ahead: number;
  /** One Int32: set to 1 to stop. */
  readonly cancel: SharedArrayBuffer;
}

/** Returns one batch's worth of distance to a walk job. */
export interface CreditJob {
  /** Tells it from other jobs. */
  readonly kind: "credit";
  /** The walk job's id. */
  readonly id: number;
}

/** What a walk job sends: batches (real paths only for grep), then the end or a failure. */
export type WalkAnswer =
  | { readonly id: number; readonly real: string[]; readonly display: string[] }
  | { readonly id: number; readonly done: true }
  | { readonly id: number; readonly error: string };

/** Files in the first batch; each next batch doubles, up to {@link LAST_BATCH}. */
const FIRST_BATCH = 16;
const LAST_BATCH = 512;
/** `.gitignore` files larger than this are not read (as on the calling thread). */
const IGNORE_FILE_BYTES = 1024 * 1024;

interface WorkerPath {
  readonly real: string;
  readonly display: string;
}

class Stopped extends Error {}

const NEVER = new AbortController().signal;

function readSmallRegularFile(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > IGNORE_FILE_BYTES) return null;
    const bytes = new Uint8Array(stats.size);
    let filled = 0;
    while (filled < bytes.length) {
      const read = readSync(fd, bytes, filled, bytes.length - filled, null);
      if (read === 0) break;
      filled += read;
    }
    return new TextDecoder().decode(bytes.subarray(0, filled));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

const waking = new Map<number, () => void>();

/** Hands a credit to the walk job it names. */
export function credit(job: CreditJob): void {
  waking.get(job.id)?.();
}

/** Runs a walk job to its end, its failure, or its stop. */
export async function runWalk(job: WalkJob, send: (answer: WalkAnswer) => void): Promise<void> {
  const flag = new Int32Array(job.cancel);
  const stopped = () => Atomics.load(flag, 0) !== 0;
  let credits = job.ahead;
  let wake: (() => void) | null = null;
  waking.set(job.id, () => {
    credits++;
    wake?.();
    wake = null;
  });
  const io: WalkIO<WorkerPath> = {
    readDir(directory) {
      if (stopped()) return Promise.reject(new Stopped());
      try {
        const entries = readdirSync(directory.real, { withFileTypes: true });
        return Promise.resolve(
          entries.map((entry): DirEntry => ({ name: entry.name, kind: kindOf(entry) })),
        );
      } catch (error) {
        // The walk skips directories that vanished or cannot be read, by these codes.
        return Promise.reject({ code: codeOfRuntimeError(error), cause: error });
      }
    },
    child(directory, name, kind) {
      // By the path layer's rule for checked children.
      if (!isPlainChild(name, kind)) return null;
      return {
        real: directory.real === "/" ? `/${name}` : `${directory.real}/${name}`,
        display: directory.display === "." ? name : `${directory.display}/${name}`,
      };
    },
    readText: (file) => Promise.resolve(readSmallRegularFile(file.real)),
    display: (path) => path.display,
    ignorable: () => job.ignorable,
  };
  const stack = new IgnoreStack();
  stack.inRepository = job.walk.inRepository;
  for (const source of job.walk.ignoreSources) stack.push(source);
  const listing = "matching" in job.select;
  let accept: (entry: WalkedEntry<WorkerPath>) => boolean;
  if ("matching" in job.select) {
    const matches = globMatcher(job.select.matching);
    accept = (entry) => matches(entry.relative);
  } else {
    const passes = globFilter(job.select.files);
    accept = (entry) => passes(entry.path.display);
  }
  let after = job.walk.after;
  let size = FIRST_BATCH;
  let real: string[] = [];
  let display: string[] = [];
  const flush = async () => {
    if (display.length === 0) return;
    while (credits === 0 && !stopped()) await new Promise<void>((resolve) => (wake = resolve));
    if (stopped()) throw new Stopped();
    credits--;
    send({ id: job.id, real, display });
    real = [];
    display = [];
    size = Math.min(size * 2, LAST_BATCH);
  };
  try {
    const entries = walkTree(io, { real: job.root, display: job.display }, stack, {
      signal: NEVER,
      directories: listing,
      gitignore: job.walk.gitignore,
      readAhead: 0,
    });
    for await (const batch of entries) {
      if (stopped()) throw new Stopped();
      for (const entry of batch) {
        if (after !== undefined) {
          // The entries up to `after` were met already.
          if (walkOrder(entry.path.display, after) <= 0) continue;
          after = undefined;
        }
        if (!accept(entry)) continue;
        if (!listing) real.push(entry.path.real);
        display.push(entry.path.display);
        if (display.length >= size) await flush();
      }
    }
    await flush();
    send({ id: job.id, done: true });
  } catch (error) {
    if (error instanceof Stopped || stopped()) send({ id: job.id, done: true });
    else send({ id: job.id, error: (error as Error)?.message ?? String(error) });
  } finally {
    waking.delete(job.id);
  }
}
