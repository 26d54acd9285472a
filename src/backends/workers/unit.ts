/**
 * The walking half of a tree search or listing, run in the search workers:
 * the walk of `src/search/walk.ts` over synchronous calls ({@link WalkSync}),
 * split into units of work. A unit is the tree below one directory (or below
 * some subdirectories of one), less the subdirectories it hands on. A worker
 * walks its unit and scans its files as it goes; while the other worker
 * waits for work, it hands on the last half of the directories still ahead
 * in its shallowest open directory (the largest piece of work it can give,
 * in few hand-offs). The main thread puts the units' results back in walk
 * order.
 *
 * @module
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from "node:fs";
import type { Stats } from "node:fs";
import { resultCount, ScanStopped } from "../../search/scan.ts";
import type { ScanRequest, ScanResult } from "../../search/scan.ts";
import { codeOfRuntimeError } from "../errors.ts";
import { answersAt, descriptorPath, holdsSync, OPEN_RESOLVES_ITSELF } from "../descriptors.ts";
import { ToolError } from "../../errors.ts";
import type { DescriptorRoute } from "../descriptors.ts";
import type { Routes } from "../descriptor_route.ts";
import { isPlainChild } from "../../path/mod.ts";
import { globFilter, globMatcher } from "../../search/glob_filter.ts";
import { isPassedOver, WalkSync } from "../../search/walk.ts";
import type { IgnoreState, WalkDirEntry, WalkEntry, WalkSyncIO } from "../../search/walk.ts";

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
  /** What to send back. */
  readonly select: TreeSelect;
  /** Results the consumer takes at most: a unit that has found this many stops. */
  readonly limit: number;
  /** Two Int32s: {@link STOP} (1 to stop) and {@link WAITING}. */
  readonly flags: SharedArrayBuffer;
  /** Where descriptors may be reached by path (see `descriptors.ts`), in order. */
  readonly routes: readonly string[];
}

/** One unit of a tree job: the tree below a directory, or below some subdirectories of one. */
export interface TreeUnit {
  /** The directory's real path (the backend took it from a checked path). */
  readonly real: string;
  /** Its path relative to the working directory. */
  readonly display: string;
  /** The ignore rules in force inside it; `null` when none apply. */
  readonly ignore: IgnoreState | null;
  /** Only these of its subdirectories, in walk order (a unit handed on); else all its entries. */
  readonly names?: readonly string[];
  /** Only the entries after this one, in walk order (the start's unit). */
  readonly after?: string;
}

/** A unit's name in answers: the first path it may send. */
export function unitName(unit: TreeUnit): string {
  if (unit.names === undefined) return unit.display;
  return unit.display === "." ? unit.names[0] : `${unit.display}/${unit.names[0]}`;
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

/**
 * What a worker posts once, when its module has loaded and it listens for
 * jobs (a worker module that never posts it is simply never known ready).
 */
export interface WorkerReady {
  /** Always `true`. */
  readonly ready: true;
}

/** Results in the first message of a unit; each next one doubles, up to {@link LAST_BATCH}. */
const FIRST_BATCH = 16;
const LAST_BATCH = 512;
/** Files met without a result after which a unit still reports how far it has come. */
const QUIET_FILES = 4096;

/** Entries walked between two questions whether to stop for now, less one (a power of two). */
const PAUSE_EVERY = 31;

class Stopped extends Error {}

/**
 * Thrown by a scan that leaves its file to the workers (see `scan_file.ts`):
 * the unit stops before that file, to go on from it.
 */
export class LeftToWorkers extends Error {}

/** The walk of one unit. */
class UnitWalk {
  readonly flags: Int32Array;
  readonly walk: WalkSync<string>;
  readonly name: string;
  readonly listing: boolean;
  readonly accept: (display: string) => boolean;
  readonly matches: ((relative: string) => boolean) | null;
  displays: string[] = [];
  results: ScanResult[] = [];
  found = 0;
  batch = FIRST_BATCH;
  quiet = 0;
  frontier: string;
  /** The last entry this unit is through with (see {@link walkOn}). */
  through: string | undefined;
  #entered = false;
  #pending: WalkEntry<string> | null = null;
  #steps = 0;

  constructor(
    readonly spec: TreeSpec,
    readonly unit: TreeUnit,
    io: WalkSyncIO<string>,
    readonly scan: (real: string, request: ScanRequest, stopped: () => boolean) => ScanResult,
    readonly send: (answer: UnitAnswer) => void,
    readonly confirm: () => void,
  ) {
    this.flags = new Int32Array(spec.flags);
    this.walk = new WalkSync(io, {
      from: spec.start,
      ignore: unit.ignore,
      ...(unit.after === undefined ? {} : { after: unit.after }),
    });
    this.name = unitName(unit);
    this.listing = "matching" in spec.select;
    if ("matching" in spec.select) {
      this.matches = globMatcher(spec.select.matching);
      this.accept = () => true;
    } else {
      this.matches = null;
      this.accept = globFilter(spec.select.files);
    }
    this.frontier = unit.after ?? this.name;
    this.through = unit.after;
  }

  stopped(): boolean {
    return Atomics.load(this.flags, STOP) !== 0;
  }

  /** Takes one result, and sends the batch when it is full. */
  take(display: string, result: ScanResult | null): void {
    this.displays.push(display);
    if (result !== null) this.results.push(result);
    this.frontier = display;
    // Results as the consumer counts them: paths, or what a scanned file gives.
    const { select } = this.spec;
    this.found += result === null || !("search" in select)
      ? 1
      : resultCount(result, select.search.mode);
    this.quiet = 0;
    if (this.displays.length >= this.batch) {
      this.flush(false);
      this.batch = Math.min(this.batch * 2, LAST_BATCH);
    }
  }

  flush(done: boolean): void {
    // What the batch rests on (listings, files opened) came through a route checked here.
    this.confirm();
    const { id } = this.spec;
    const results = this.listing ? null : this.results;
    this.send({
      id,
      unit: this.name,
      displays: this.displays,
      results,
      frontier: this.frontier,
      done,
    });
    this.displays = [];
    this.results = [];
  }

  /** Hands directories ahead of this unit to a waiting worker, when one waits and there are some. */
  handOn(): void {
    const flags = this.flags;
    if (!this.walk.mayHandOn || Atomics.load(flags, WAITING) <= 0) return;
    // Claim the waiting worker first: two walkers never hand it two units.
    if (Atomics.sub(flags, WAITING, 1) <= 0) {
      Atomics.add(flags, WAITING, 1);
      return;
    }
    const handed = this.walk.handOn();
    if (handed === null) {
      Atomics.add(flags, WAITING, 1);
      return;
    }
    const { directory: real, display, names, ignore } = handed;
    this.confirm();
    this.send({ id: this.spec.id, unit: this.name, handOn: { real, display, ignore, names } });
  }

  /** Walks the unit to its end, its limit, or the job's stop. */
  run(): void {
    this.walkOn(() => false);
  }

  /**
   * Walks on from where the walk stopped: to the unit's end, its limit or
   * the job's stop (`"done"`; a stop throws {@link Stopped}), or until
   * `pause` (asked every few entries) says to stop for now (`"paused"`), or
   * a scan leaves its file to the workers (`"left"`). A walk stopped for now
   * has sent what it found, and goes on from the entry it stopped before;
   * {@link through} is the last entry it is through with.
   */
  walkOn(pause: () => boolean): "done" | "paused" | "left" {
    const { unit, walk } = this;
    if (this.stopped()) throw new Stopped();
    if (!this.#entered) {
      this.#entered = true;
      if (unit.names === undefined) walk.enter(unit.real, unit.display);
      else walk.enterWith({ directory: unit.real, display: unit.display, names: [...unit.names] });
    }
    const request = "search" in this.spec.select ? this.spec.select.search : null;
    // Each walk on takes one entry at least, however soon `pause` says to stop.
    let taken = 0;
    for (let entry; this.found < this.spec.limit && (entry = this.#next()) !== null; taken++) {
      if (this.stopped()) throw new Stopped();
      if ((++this.#steps & PAUSE_EVERY) === 0 && taken > 0 && pause()) {
        return this.#stopBefore(entry, "paused");
      }
      if (entry.kind === "directory") {
        if (this.listing && this.matches!(entry.relative)) this.take(entry.display, null);
        this.handOn();
        this.through = entry.display;
        continue;
      }
      if (this.listing) {
        if (this.matches!(entry.relative)) this.take(entry.display, null);
        this.through = entry.display;
        continue;
      }
      if (!this.accept(entry.display)) {
        this.through = entry.display;
        continue;
      }
      // A worker that waits gets work as soon as there is some, not at the next directory.
      this.handOn();
      // A scan takes longer than an entry: asked before each.
      if (taken > 0 && pause()) return this.#stopBefore(entry, "paused");
      // A stop during a long file's scan takes effect there, not at the next file.
      let result: ScanResult;
      try {
        result = this.scan(entry.path, request!, () => this.stopped());
      } catch (error) {
        if (error instanceof LeftToWorkers) return this.#stopBefore(entry, "left");
        throw error;
      }
      this.through = entry.display;
      if (result.matches > 0 || result.skip !== undefined) this.take(entry.display, result);
      else if (++this.quiet === QUIET_FILES) {
        this.quiet = 0;
        this.frontier = entry.display;
        this.flush(false);
      }
    }
    this.flush(true);
    return "done";
  }

  #next(): WalkEntry<string> | null {
    const pending = this.#pending;
    this.#pending = null;
    return pending ?? this.walk.next();
  }

  /** Stops the walk for now before `entry`, the next it gives, having sent what it found. */
  #stopBefore(entry: WalkEntry<string>, state: "paused" | "left"): "paused" | "left" {
    this.#pending = entry;
    if (this.displays.length > 0) this.flush(false);
    return state;
  }
}

/**
 * One unit walked on the calling thread in steps, between which the thread
 * serves its host: the start of a tree job while the workers start (all of
 * it where they cannot run), through the same walk and verified directories
 * as a worker's. Each step answers what the unit sent during it, in order;
 * the directories it opened are closed at the end of each step.
 */
export class UnitSteps {
  readonly #walk: UnitWalk;
  readonly #directories: VerifiedDirectories;
  #answers: UnitAnswer[] = [];
  #leaveLarge = true;
  #failure: { error: unknown } | null = null;
  #until = 0;

  /**
   * A unit of the job `spec`, reaching descriptors through `routes`, listing
   * directories with `list`; `scan` scans a file as `scan_file.ts` does.
   */
  constructor(
    spec: TreeSpec,
    unit: TreeUnit,
    routes: Routes,
    list: ListSync,
    scan: (
      directories: VerifiedDirectories,
      real: string,
      request: ScanRequest,
      stopped: () => boolean,
      leaveLarge: boolean,
    ) => ScanResult,
  ) {
    const directories = new VerifiedDirectories(routes);
    this.#directories = directories;
    this.#walk = new UnitWalk(
      spec,
      unit,
      workerWalkIO(list, directories),
      (real, request, stopped) => {
        // A scan that runs past the step's time (a costly pattern) is left to the workers.
        const overdue = () => this.#leaveLarge && performance.now() >= this.#until;
        try {
          return scan(directories, real, request, () => stopped() || overdue(), this.#leaveLarge);
        } catch (error) {
          if (error instanceof ScanStopped && !stopped()) throw new LeftToWorkers();
          throw error;
        }
      },
      (answer) => this.#answers.push(answer),
      () => directories.confirm(),
    );
  }

  /** Results the unit has found so far, as the job's limit counts them. */
  get found(): number {
    return this.#walk.found;
  }

  /** The last entry the unit is through with (another walk may go on after it). */
  get through(): string | undefined {
    return this.#walk.through;
  }

  /**
   * Walks on until the unit ends (or its job stops: `"stopped"`), or until
   * `until` (a `performance.now()` time) is past, or, with `leaveLarge`,
   * before a file too large to scan here or whose scan ran past `until`
   * (`"left"`). Throws what the walk
   * throws, once the route the unit's answers rest on passed its check (else
   * the check's refusal).
   */
  step(
    until: number,
    leaveLarge: boolean,
  ): { answers: UnitAnswer[]; state: "done" | "paused" | "left" | "stopped" } {
    // A unit that failed stays failed: its walk holds what the failed check was to vouch for.
    if (this.#failure !== null) throw this.#failure.error;
    this.#leaveLarge = leaveLarge;
    this.#until = until;
    let state: "done" | "paused" | "left" | "stopped";
    try {
      state = this.#walk.walkOn(() => performance.now() >= until);
      // The walk goes on from listings made through the route in this step, whose answers may
      // leave only in a later one: they are relied on once the route passed its check here, as
      // the check is forgotten when the directories are closed.
      this.#directories.confirm();
    } catch (error) {
      if (!(error instanceof Stopped)) {
        // As a worker's failure: its message may name what came through the route.
        let failure = error;
        try {
          this.#directories.confirm();
        } catch (refusal) {
          failure = refusal;
        }
        this.#failure = { error: failure };
        throw failure;
      }
      state = "stopped";
    } finally {
      this.#directories.release();
    }
    const answers = this.#answers;
    this.#answers = [];
    return { answers, state };
  }
}

/** A directory's entries, in any order; throws the runtime's error. */
export type ListSync = (real: string) => WalkDirEntry[];

/** What the search index's stamps take of an object's metadata (see `index/stamps.ts`). */
export interface StampStat {
  /** What the object is, its final link not followed. */
  readonly kind: "file" | "directory" | "other";
  /** Device. */
  readonly dev: number;
  /** Inode. */
  readonly ino: number;
  /** Size in bytes. */
  readonly size: number;
  /** Modification time, in milliseconds since the epoch. */
  readonly mtimeMs: number;
  /** Change time, in milliseconds since the epoch. */
  readonly ctimeMs: number;
}

/**
 * The metadata of a real path, not following a final link, or `null` when it
 * cannot be looked up; the runtime's own call.
 */
export type StatSync = (real: string) => StampStat | null;

/** Opening a file to read: never through a final link, never blocking on a FIFO. */
export const READ_FLAGS: number = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) |
  (constants.O_NOFOLLOW ?? 0);
const DIRECTORY_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) |
  (constants.O_NOFOLLOW ?? 0);
/** Verified directory descriptors a worker keeps open at once. */
const KEPT_DIRECTORIES = 64;

/**
 * A worker's verified directories (see `descriptors.ts`): each opened by its
 * real path and verified to be there once, then kept open (the last few), so
 * that the files of a directory are opened inside exactly it
 * (`/proc/self/fd/N/name`) with no check of their own. Walking the Linux
 * tree, verifying each file where it was opened instead cost a fifth more
 * time. Where the runtime's open resolves a path itself (Deno), a path
 * inside a directory's descriptor is turned back into a plain one before the
 * open, so it gains nothing there: each file is opened by its real path and
 * verified where it was opened, with one call, and a directory walked is
 * closed once listed (see {@link list}). Without a route, each file is
 * verified where it is opened (best effort). {@link release} closes the
 * directories, at the end of each unit.
 *
 * The answers that come through a link route (a descriptor's path, a
 * listing, a lookup) are relied on only once a check of the link after them
 * passed: the link was the verified one from its verification to that check,
 * so one check covers every answer before it. {@link confirm} makes that
 * check; a worker calls it before anything that rests on those answers
 * leaves it (a batch of results, a unit handed on, an answer to a job).
 */
export class VerifiedDirectories {
  readonly #routes: Routes;
  // In the order used, the most recent last.
  readonly #open = new Map<string, number>();
  /** The directory used last (the last in {@link #open}): the files of one come in a row. */
  #recent: string | null = null;
  /** The route whose answers were used since it was last checked. */
  #unchecked: DescriptorRoute | null = null;

  /** Directories reached through `routes`. */
  constructor(routes: Routes) {
    this.#routes = routes;
  }

  /**
   * Notes that an answer of `route` was used: it is relied on once
   * {@link confirm} has checked the route.
   */
  used(route: DescriptorRoute): void {
    if (this.#unchecked !== null && this.#unchecked !== route) this.confirm();
    this.#unchecked = route;
  }

  /**
   * Checks the route whose answers were used since the last check that
   * passed; throws a `RouteChanged` when it is not the verified one any more
   * (nothing that rests on those answers may then be used, and every later
   * call throws again until {@link release}).
   */
  confirm(): void {
    const route = this.#unchecked;
    if (route === null) return;
    // Cleared only once the check passed: after a failed one, every later check before the job
    // ends fails too, so that nothing resting on those answers leaves by a later send (a stopped
    // unit's last batch, say).
    route.check();
    this.#unchecked = null;
  }

  /** The verified descriptor of directory `real`, or `null` when something else is there. */
  directory(real: string): { fd: number; route: DescriptorRoute | null } | null {
    const kept = this.#open.get(real);
    if (kept !== undefined) {
      if (this.#recent !== real) {
        this.#open.delete(real);
        this.#open.set(real, kept);
        this.#recent = real;
      }
      return { fd: kept, route: this.#routes.of(kept) };
    }
    // A subdirectory of a kept directory is opened inside it, which needs no check of its own
    // (except where the runtime's open resolves the path itself); any other is opened by its real
    // path and asked where it is.
    const slash = real.lastIndexOf("/");
    const parentPath = slash === 0 ? "/" : real.slice(0, slash);
    const parent = OPEN_RESOLVES_ITSELF ? undefined : this.#open.get(parentPath);
    if (parent !== undefined) {
      // Used again: the parent goes to the recent end, as its later children will need it.
      this.#open.delete(parentPath);
      this.#open.set(parentPath, parent);
      this.#recent = parentPath;
    }
    const parentRoute = parent === undefined ? null : this.#routes.of(parent);
    let fd: number;
    let route: DescriptorRoute | null;
    if (parentRoute !== null) {
      fd = openSync(
        descriptorPath(parentRoute.path, parent!, real.slice(slash + 1)),
        DIRECTORY_FLAGS,
      );
      this.used(parentRoute);
      route = parentRoute;
    } else {
      fd = this.#openByPath(real, DIRECTORY_FLAGS);
      if (fd === -1) return null;
      route = this.#routes.of(fd);
    }
    this.#open.set(real, fd);
    this.#recent = real;
    if (this.#open.size > KEPT_DIRECTORIES) {
      const [oldest, descriptor] = this.#open.entries().next().value!;
      this.#open.delete(oldest);
      closeSync(descriptor);
    }
    return { fd, route };
  }

  /**
   * The entries of directory `real`, in any order, listed with `list`
   * through its verified descriptor (by its path where there is no route);
   * `null` when something else is there. Where the runtime's open resolves
   * a path itself, nothing is ever opened inside a directory's descriptor
   * and a walk lists each directory once: the descriptor is closed as soon
   * as it is listed, not kept.
   */
  list(real: string, list: ListSync): WalkDirEntry[] | null {
    if (!OPEN_RESOLVES_ITSELF) {
      const directory = this.directory(real);
      return directory === null ? null : this.#listThrough(directory, real, list);
    }
    const fd = this.#openByPath(real, DIRECTORY_FLAGS);
    if (fd === -1) return null;
    try {
      return this.#listThrough({ fd, route: this.#routes.of(fd) }, real, list);
    } finally {
      closeSync(fd);
    }
  }

  #listThrough(
    directory: { fd: number; route: DescriptorRoute | null },
    real: string,
    list: ListSync,
  ): WalkDirEntry[] {
    const { fd, route } = directory;
    if (route === null) return list(real);
    const entries = list(descriptorPath(route.path, fd));
    // The names came through the route: they are this directory's only if it did not change.
    this.used(route);
    return entries;
  }

  /**
   * Opens `real` by its path and asks where what it opened is: its
   * descriptor, or -1 (closed) when it is not at `real`. Throws what the open
   * throws.
   */
  #openByPath(real: string, flags: number): number {
    const fd = openSync(real, flags);
    let there: boolean;
    try {
      const route = this.#routes.of(fd);
      if (route === null) there = holdsSync(null, fd, real);
      else {
        there = answersAt(route, fd, real);
        this.used(route);
      }
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    if (there) return fd;
    closeSync(fd);
    return -1;
  }

  /**
   * The descriptor of file `real` opened for `flags` inside its verified
   * directory (by its real path and verified there, where the runtime's open
   * resolves paths itself), or `null` when it cannot be opened or is not
   * where it was.
   */
  openFile(real: string, flags: number): number | null {
    const slash = real.lastIndexOf("/");
    const parent = slash === 0 ? "/" : real.slice(0, slash);
    try {
      if (!OPEN_RESOLVES_ITSELF) {
        const directory = this.directory(parent);
        if (directory === null) return null;
        if (directory.route !== null) {
          const inside = descriptorPath(directory.route.path, directory.fd, real.slice(slash + 1));
          const fd = openSync(inside, flags);
          this.used(directory.route);
          return fd;
        }
      }
      const fd = this.#openByPath(real, flags);
      return fd === -1 ? null : fd;
    } catch (error) {
      // A changed route fails the search; anything else passes the file over.
      if (error instanceof ToolError) throw error;
      return null;
    }
  }

  /**
   * The metadata of file `real`, looked up without following a link, inside
   * its verified directory where the runtime can name it (elsewhere by its
   * real path), or `null` when it cannot be looked up. Relied on once
   * {@link confirm} passed.
   */
  statFile(real: string): Stats | null {
    const slash = real.lastIndexOf("/");
    try {
      const directory = this.directory(slash === 0 ? "/" : real.slice(0, slash));
      if (directory === null) return null;
      if (directory.route === null) return lstatSync(real);
      const stats = lstatSync(
        descriptorPath(directory.route.path, directory.fd, real.slice(slash + 1)),
      );
      this.used(directory.route);
      return stats;
    } catch {
      return null;
    }
  }

  /**
   * Closes every kept directory, at the end of a job: what the job's answers
   * rested on was checked before they left, or they did not leave, so no
   * answer used so far waits for a check any more.
   */
  release(): void {
    for (const fd of this.#open.values()) closeSync(fd);
    this.#open.clear();
    this.#recent = null;
    this.#unchecked = null;
  }
}

/** A small regular file's text (an ignore file), opened inside its verified directory. */
function readSmallText(
  directories: VerifiedDirectories,
  path: string,
  maxBytes: number,
): string | null {
  const fd = directories.openFile(path, READ_FLAGS);
  if (fd === null) return null;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > maxBytes) return null;
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

/**
 * The walk's view of the file system in a worker: real paths, a runtime's
 * own listing, and every directory verified where it is opened (one that
 * another object, a link, took the place of is passed over); files are
 * opened inside their verified directories.
 */
export function workerWalkIO(
  list: ListSync,
  directories: VerifiedDirectories,
): WalkSyncIO<string> {
  return {
    readDir(real) {
      try {
        return directories.list(real, list);
      } catch (error) {
        const code = codeOfRuntimeError(error);
        if (isPassedOver(code) || code === "invalid_path") return null;
        throw error;
      }
    },
    // Plain concatenation: the directory is real and the name one segment.
    child: (real, name, kind) =>
      isPlainChild(name, kind) ? (real === "/" ? `/${name}` : `${real}/${name}`) : null,
    readText: (path, maxBytes) => readSmallText(directories, path, maxBytes),
  };
}

/**
 * Walks one unit, sending its results, the units it hands on, and its end;
 * `confirm` checks the route the answers sent rest on, before each send
 * (see {@link VerifiedDirectories.confirm}).
 */
export function runUnit(
  job: UnitJob,
  io: WalkSyncIO<string>,
  scan: (real: string, request: ScanRequest, stopped: () => boolean) => ScanResult,
  send: (answer: UnitAnswer) => void,
  confirm: () => void,
): void {
  const walk = new UnitWalk(job.spec, job.unit, io, scan, send, confirm);
  const fail = (error: unknown) => {
    // An error's message may name what came through the route (a path made of a listed name):
    // it leaves only once the route passed its check, else the route's own refusal does.
    try {
      confirm();
    } catch (refusal) {
      error = refusal;
    }
    send({ id: job.spec.id, unit: walk.name, error: (error as Error)?.message ?? String(error) });
  };
  try {
    walk.run();
  } catch (error) {
    if (!(error instanceof Stopped || walk.stopped())) return fail(error);
    try {
      walk.flush(true);
    } catch (failure) {
      fail(failure);
    }
  }
}
