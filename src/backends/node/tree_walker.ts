/**
 * The walking half of a tree search or listing, run in the search workers:
 * the walk of `src/search/walk.ts` over synchronous calls, split into units
 * of work. A unit is the tree below one directory, less the subdirectories it
 * hands on. A worker walks its unit and scans its files as it goes; while the
 * other worker waits for work, it hands on the last half of the directories
 * still ahead in its shallowest open directory (the largest piece of work it
 * can give, in few hand-offs).
 * The main thread puts the units' results back in walk order.
 *
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import type { ScanResult } from "../../search/scan.ts";
import type { ScanRequest } from "../../search/scan.ts";
import { codeOfRuntimeError } from "../errors.ts";
import { isPlainChild } from "../../path/mod.ts";
import { kindOf } from "./entry_kind.ts";
import { globFilter, globMatcher } from "../../search/glob_filter.ts";
import { IgnoreStack, isWalked, sortListing, walkOrder } from "../../search/walk.ts";
import type { IgnoreSource, WalkDirEntry } from "../../search/walk.ts";

/** Index of the stop flag in a tree job's shared flags. */
export const STOP = 0;
/** Index of the count of workers waiting for a unit in a tree job's shared flags. */
export const WAITING = 1;

/** What a tree job looks for: grep's files, or the entries whose path matches a glob. */
export type TreeSelect =
  | { readonly search: ScanRequest; readonly files: string | undefined }
  | { readonly matching: string };

/** A tree job, the same for every unit of it. */
export interface TreeSpec {
  /** Job id, echoed in every answer. */
  readonly id: number;
  /** The start relative to the working directory (glob matches paths relative to it). */
  readonly start: string;
  /** Whether `.gitignore` files apply (off, or the start is in the skill root). */
  readonly gitignore: boolean;
  /** What to send back. */
  readonly select: TreeSelect;
  /** Results the consumer takes at most: a unit that has found this many stops. */
  readonly limit: number;
  /** Two Int32s: {@link STOP} (1 to stop) and {@link WAITING}. */
  readonly flags: SharedArrayBuffer;
}

/** One unit of a tree job: the tree below a directory. */
export interface TreeUnit {
  /** The directory's real path (the backend took it from a checked path). */
  readonly real: string;
  /** Its path relative to the working directory: the unit's name in answers. */
  readonly display: string;
  /** The `.gitignore` files that apply in it, outermost first. */
  readonly ignoreSources: readonly IgnoreSource[];
  /** Whether it is inside a git repository. */
  readonly inRepository: boolean;
  /** A handed-on directory: check it against the rules, and list it itself (glob). */
  readonly handed: boolean;
  /**
   * Further directories of a handed-on unit, siblings of the first that
   * follow it in walk order, walked after it in turn.
   */
  readonly more?: readonly { readonly real: string; readonly display: string }[];
  /** Only the entries after this one, in walk order (the start's unit). */
  readonly after?: string;
}

/** A unit to walk. */
export interface UnitJob {
  /** Tells it from other jobs. */
  readonly kind: "unit";
  /** The job. */
  readonly spec: TreeSpec;
  /** The unit. */
  readonly unit: TreeUnit;
}

/**
 * What a unit sends: results so far (in walk order, with `frontier`, the last
 * entry met: everything the unit sends later comes after it), a unit it hands
 * on, its end, or a failure.
 */
export type UnitAnswer =
  | {
    readonly id: number;
    readonly unit: string;
    readonly displays: string[];
    readonly results: ScanResult[] | null;
    readonly frontier: string;
    readonly done: boolean;
  }
  | { readonly id: number; readonly unit: string; readonly handOn: TreeUnit }
  | { readonly id: number; readonly unit: string; readonly error: string };

/** Results in the first message of a unit; each next one doubles, up to {@link LAST_BATCH}. */
const FIRST_BATCH = 16;
const LAST_BATCH = 512;
/** Files met without a result after which a unit still reports how far it has come. */
const QUIET_FILES = 4096;

interface Frame {
  readonly real: string;
  readonly display: string;
  /** Sorted; an entry handed on is replaced by `null`. */
  readonly entries: (WalkDirEntry | null)[];
  index: number;
  /** Ignore layers in force inside this directory. */
  readonly layers: number;
  /** Whether this directory is inside a git repository. */
  readonly inRepository: boolean;
}

/** A child of a frame's directory: its real path and its path relative to the working directory. */
function childOf(frame: Frame, name: string): { real: string; display: string } {
  return {
    real: frame.real === "/" ? `/${name}` : `${frame.real}/${name}`,
    display: frame.display === "." ? name : `${frame.display}/${name}`,
  };
}

class Stopped extends Error {}

/** The walk of one unit. */
class UnitWalk {
  readonly flags: Int32Array;
  readonly stack = new IgnoreStack();
  readonly frames: Frame[] = [];
  readonly listing: boolean;
  readonly accept: (display: string) => boolean;
  readonly matches: ((relative: string) => boolean) | null;
  readonly content: boolean;
  displays: string[] = [];
  results: ScanResult[] = [];
  found = 0;
  batch = FIRST_BATCH;
  quiet = 0;
  frontier: string;
  after: string | undefined;
  /**
   * Set when the open directories held no directory to hand on: entries
   * are only ever passed, so none appears until a directory is opened.
   */
  nothingToHand = false;

  constructor(
    readonly spec: TreeSpec,
    readonly unit: TreeUnit,
    readonly scan: (real: string, request: ScanRequest) => ScanResult,
    readonly send: (answer: UnitAnswer) => void,
  ) {
    this.flags = new Int32Array(spec.flags);
    this.stack.inRepository = unit.inRepository;
    for (const source of unit.ignoreSources) this.stack.push(source);
    this.listing = "matching" in spec.select;
    if ("matching" in spec.select) {
      this.matches = globMatcher(spec.select.matching);
      this.accept = () => true;
    } else {
      this.matches = null;
      this.accept = globFilter(spec.select.files);
    }
    this.content = "search" in spec.select && spec.select.search.mode === "content";
    this.after = unit.after;
    this.frontier = unit.after ?? unit.display;
  }

  stopped(): boolean {
    return Atomics.load(this.flags, STOP) !== 0;
  }

  ignored(display: string, isDirectory: boolean): boolean {
    return this.spec.gitignore && this.stack.layers.length > 0 &&
      this.stack.ignored(display, isDirectory);
  }

  /** The path relative to the start, for glob. */
  relative(display: string): string {
    const { start } = this.spec;
    return start === "." ? display : display.slice(start.length + 1);
  }

  /** Lists a directory and enters it; `false` when it vanished or cannot be read. */
  open(real: string, display: string): boolean {
    if (this.stopped()) throw new Stopped();
    let entries: WalkDirEntry[];
    try {
      entries = listSync(real);
    } catch (error) {
      // As on the calling thread: a directory that vanished or cannot be read is passed over.
      const code = codeOfRuntimeError(error);
      if (code === "permission_denied" || code === "not_found") return false;
      throw error;
    }
    const parent = this.frames.at(-1);
    let inRepository = parent?.inRepository ?? this.stack.inRepository;
    if (sortListing(entries)) inRepository = true;
    this.stack.inRepository = inRepository;
    let layers = parent?.layers ?? this.stack.layers.length;
    if (this.spec.gitignore && inRepository && entries.some((e) => e.name === ".gitignore")) {
      const text = readSmallText(`${real}/.gitignore`);
      if (text !== null) {
        this.stack.push({ base: display === "." ? "" : display, text });
        layers++;
      }
    }
    this.frames.push({ real, display, entries, index: 0, layers, inRepository });
    this.nothingToHand = false;
    return true;
  }

  /** Leaves the innermost directory: its ignore layer and repository state go with it. */
  close(): void {
    this.frames.pop();
    const parent = this.frames.at(-1);
    // Out of the unit's directory, back to the rules of its parent: the unit's own.
    const layers = parent?.layers ?? this.unit.ignoreSources.length;
    while (this.stack.layers.length > layers) this.stack.pop();
    this.stack.inRepository = parent?.inRepository ?? this.unit.inRepository;
  }

  /** Takes one result, and sends the batch when it is full. */
  take(display: string, result: ScanResult | null): void {
    this.displays.push(display);
    if (result !== null) this.results.push(result);
    this.frontier = display;
    // Results as the consumer counts them: matching lines in content mode, else files or paths.
    if (result === null) this.found++;
    else if (result.skip === undefined) this.found += this.content ? result.matches : 1;
    this.quiet = 0;
    if (this.displays.length >= this.batch) {
      this.flush(false);
      this.batch = Math.min(this.batch * 2, LAST_BATCH);
    }
  }

  flush(done: boolean): void {
    const { id } = this.spec;
    const results = this.listing ? null : this.results;
    this.send({
      id,
      unit: this.unit.display,
      displays: this.displays,
      results,
      frontier: this.frontier,
      done,
    });
    this.displays = [];
    this.results = [];
  }

  /**
   * Hands the last half of the directories still ahead in the shallowest open
   * directory that has any to a waiting worker, as one unit, when one is
   * waiting and there is such a directory.
   */
  handOn(): void {
    const flags = this.flags;
    if (this.nothingToHand || Atomics.load(flags, WAITING) <= 0) return;
    // Claim the waiting worker first: two walkers never hand it two units.
    if (Atomics.sub(flags, WAITING, 1) <= 0) {
      Atomics.add(flags, WAITING, 1);
      return;
    }
    for (let depth = 0; depth < this.frames.length; depth++) {
      const frame = this.frames[depth];
      const ahead: number[] = [];
      for (let i = frame.index; i < frame.entries.length; i++) {
        const entry = frame.entries[i];
        if (entry === null || entry.kind !== "directory" || !isWalked(entry)) continue;
        if (isPlainChild(entry.name, entry.kind)) ahead.push(i);
      }
      if (ahead.length === 0) continue;
      // The last half of them (one of one): few hand-offs, and this unit keeps the nearest.
      const directories = ahead.slice(ahead.length >> 1).map((i) => {
        const { name } = frame.entries[i]!;
        frame.entries[i] = null;
        return childOf(frame, name);
      });
      const [first, ...more] = directories;
      this.send({
        id: this.spec.id,
        unit: this.unit.display,
        handOn: {
          ...first,
          ignoreSources: this.stack.sources.slice(0, frame.layers),
          inRepository: frame.inRepository,
          handed: true,
          ...(more.length === 0 ? {} : { more }),
        },
      });
      return;
    }
    this.nothingToHand = true;
    Atomics.add(flags, WAITING, 1);
  }

  /** Walks the unit to its end, its limit, or the job's stop. */
  run(): void {
    const { unit } = this;
    for (const directory of [unit, ...(unit.more ?? [])]) {
      if (this.found >= this.spec.limit) break;
      if (unit.handed) {
        if (this.ignored(directory.display, true)) continue;
        if (this.listing && this.matches!(this.relative(directory.display))) {
          this.take(directory.display, null);
        }
      }
      if (this.open(directory.real, directory.display)) this.walk();
    }
    this.flush(true);
  }

  /** Walks the open directories to their end, or to the unit's limit. */
  walk(): void {
    const request = "search" in this.spec.select ? this.spec.select.search : null;
    while (this.frames.length > 0 && this.found < this.spec.limit) {
      const frame = this.frames[this.frames.length - 1];
      if (frame.index === frame.entries.length) {
        this.close();
        continue;
      }
      const entry = frame.entries[frame.index++];
      if (entry === null || !isWalked(entry) || !isPlainChild(entry.name, entry.kind)) continue;
      const { real, display } = childOf(frame, entry.name);
      const isDirectory = entry.kind === "directory";
      if (this.after !== undefined) {
        if (walkOrder(display, this.after) <= 0) {
          // Met already on the calling thread; a directory that holds where that walk stopped,
          // or is where it stopped (glob meets directories), is entered for what follows.
          if (
            isDirectory && (display === this.after || this.after.startsWith(`${display}/`))
          ) this.open(real, display);
          continue;
        }
        this.after = undefined;
      }
      if (this.ignored(display, isDirectory)) continue;
      if (isDirectory) {
        if (this.listing && this.matches!(this.relative(display))) this.take(display, null);
        this.handOn();
        this.open(real, display);
        continue;
      }
      if (this.stopped()) throw new Stopped();
      if (this.listing) {
        if (this.matches!(this.relative(display))) this.take(display, null);
        continue;
      }
      if (!this.accept(display)) continue;
      // A worker that waits gets work as soon as there is some, not at the next directory.
      this.handOn();
      const result = this.scan(real, request!);
      if (result.matches > 0 || result.skip !== undefined) this.take(display, result);
      else if (++this.quiet === QUIET_FILES) {
        this.quiet = 0;
        this.frontier = display;
        this.flush(false);
      }
    }
  }
}

/** A directory's entries, in any order; throws the runtime's error. */
export type ListSync = (real: string) => WalkDirEntry[];

/** The listing of `node:fs`. */
function nodeListSync(real: string): WalkDirEntry[] {
  return readdirSync(real, { withFileTypes: true }).map((entry) => ({
    name: entry.name,
    kind: kindOf(entry),
  }));
}

let listSync: ListSync = nodeListSync;

/**
 * Sets how this worker lists directories: a runtime's own listing, where
 * `node:fs` is slower (see `src/backends/deno/scan_worker.ts`).
 */
export function setListing(list: ListSync): void {
  listSync = list;
}

/** `.gitignore` files larger than this are not read (as on the calling thread). */
const IGNORE_FILE_BYTES = 1024 * 1024;

/** A small regular file's text (a `.gitignore`), never following a symbolic link. */
function readSmallText(path: string): string | null {
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

/** Walks one unit, sending its results, the units it hands on, and its end. */
export function runUnit(
  job: UnitJob,
  scan: (real: string, request: ScanRequest) => ScanResult,
  send: (answer: UnitAnswer) => void,
): void {
  const walk = new UnitWalk(job.spec, job.unit, scan, send);
  try {
    walk.run();
  } catch (error) {
    if (error instanceof Stopped || walk.stopped()) walk.flush(true);
    else {
      send({
        id: job.spec.id,
        unit: job.unit.display,
        error: (error as Error)?.message ?? String(error),
      });
    }
  }
}
