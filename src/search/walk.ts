/**
 * The streaming directory walk of `grep` and `glob`, over any way of listing
 * directories: depth first, entries sorted per directory, `.git/` never
 * entered, symbolic links never followed, and `.gitignore` files honoured the
 * way git reads them. The tools run it over the session's file system on the
 * calling thread; a backend may run it over synchronous calls in a worker.
 *
 * @module
 */
import ignore from "ignore";

/** What a directory entry is; symbolic links are reported, not followed (as a backend's `EntryKind`). */
export type WalkEntryKind = "file" | "directory" | "symlink" | "other";

/** One entry of a directory listing (as a backend's `DirEntry`). */
export interface WalkDirEntry {
  /** The entry's name (one path segment). */
  readonly name: string;
  /** What the entry is. */
  readonly kind: WalkEntryKind;
}

/** How the walk reaches the file system; `P` is the backend's path type. */
export interface WalkIO<P> {
  /** The entries of a directory, in any order. */
  readDir(directory: P): Promise<WalkDirEntry[]>;
  /** A child of a directory, or `null` when the name cannot be a path segment here. */
  child(directory: P, name: string, kind: WalkEntryKind): P | null;
  /** A small file's text (a `.gitignore`), or `null` when it cannot be read. */
  readText(file: P): Promise<string | null>;
  /** The path relative to the working directory, `/`-separated (`.` for it). */
  display(path: P): string;
  /** Whether `.gitignore` files apply here: paths in the working directory, not the skill root. */
  ignorable(path: P): boolean;
}

/** One entry met by the walk. */
export interface WalkedEntry<P> {
  /** The path, for reading. */
  readonly path: P;
  /** Path relative to the walk's start, `/`-separated. */
  readonly relative: string;
  /** `file` or `directory`. */
  readonly kind: WalkEntryKind;
}

/** A `.gitignore` file's rules and where it sits. */
export interface IgnoreSource {
  /** Directory of the `.gitignore`, relative to the working directory (`""` for it). */
  readonly base: string;
  /** The file's text. */
  readonly text: string;
}

interface IgnoreLayer {
  readonly base: string;
  readonly rules: ReturnType<typeof ignore>;
}

/**
 * `.gitignore` layers from outermost to innermost; the innermost decision
 * wins. As ripgrep does, they apply only inside a git repository: at or
 * below a directory that holds `.git`.
 */
export class IgnoreStack {
  /** The layers, outermost first. */
  readonly layers: IgnoreLayer[] = [];
  /** The files of the layers, outermost first. */
  readonly sources: IgnoreSource[] = [];
  /** Whether the walk is inside a git repository. */
  inRepository = false;

  /** Adds the rules of one `.gitignore`. */
  push(source: IgnoreSource): void {
    this.layers.push({ base: source.base, rules: ignore().add(source.text) });
    this.sources.push(source);
  }

  /** Removes the innermost layer. */
  pop(): void {
    this.layers.pop();
    this.sources.pop();
  }

  /** Whether a path (relative to the working directory) is ignored. */
  ignored(display: string, isDirectory: boolean): boolean {
    for (let i = this.layers.length - 1; i >= 0; i--) {
      const { base, rules } = this.layers[i];
      const relative = base === "" ? display : display.slice(base.length + 1);
      const verdict = rules.test(isDirectory ? relative + "/" : relative);
      if (verdict.ignored) return true;
      if (verdict.unignored) return false;
    }
    return false;
  }
}

/** The `.gitignore` of a directory, when it has one that can be read. */
export async function ignoreSource<P>(io: WalkIO<P>, directory: P): Promise<IgnoreSource | null> {
  const file = io.child(directory, ".gitignore", "file");
  if (file === null) return null;
  const text = await io.readText(file);
  if (text === null) return null;
  const display = io.display(directory);
  return { base: display === "." ? "" : display, text };
}

/** Code-unit order: stable and locale-free. */
function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * A directory's listing in walk order (sorted in place), and whether it makes
 * the walk inside a git repository (it holds `.git`).
 */
export function sortListing<E extends WalkDirEntry>(entries: E[]): boolean {
  entries.sort(byName);
  return entries.some((entry) => entry.name === ".git");
}

/** Whether the walk meets an entry at all: files and directories, never `.git`. */
export function isWalked(entry: WalkDirEntry): boolean {
  return entry.name !== ".git" && (entry.kind === "file" || entry.kind === "directory");
}

/** Options of {@link walkTree}. */
export interface WalkTreeOptions {
  /** Checked before every entry; the walk throws its reason once aborted. */
  readonly signal: AbortSignal;
  /** Whether to yield directories too (glob) or only files (grep). */
  readonly directories: boolean;
  /** Honour `.gitignore` files (default true). */
  readonly gitignore?: boolean;
  /** Subdirectory listings each open directory requests ahead (default {@link WALK_READ_AHEAD}). */
  readonly readAhead?: number;
}

/** Subdirectory listings each open directory requests ahead of the walk. */
export const WALK_READ_AHEAD = 8;

/** One open directory of the depth-first walk. */
interface Frame<P> {
  readonly directory: P;
  readonly relative: string;
  readonly entries: readonly WalkDirEntry[];
  index: number;
  readonly pushedLayer: boolean;
  readonly wasInRepository: boolean;
  /** Listings of the next few subdirectories, started so the backend's latency overlaps the walk. */
  readonly ahead: Map<string, Promise<WalkDirEntry[]>>;
  /** Where the look-ahead has reached in `entries`. */
  aheadIndex: number;
}

/** Walks one directory tree; see {@link walkTree}. */
class TreeWalk<P> {
  readonly readAhead: number;

  constructor(
    readonly io: WalkIO<P>,
    readonly stack: IgnoreStack,
    readonly options: WalkTreeOptions,
  ) {
    this.readAhead = options.readAhead ?? WALK_READ_AHEAD;
  }

  /** Starts listings of a frame's next subdirectories, keeping `readAhead` in flight. */
  lookAhead(frame: Frame<P>): void {
    while (frame.ahead.size < this.readAhead && frame.aheadIndex < frame.entries.length) {
      const entry = frame.entries[frame.aheadIndex++];
      if (entry.kind !== "directory" || entry.name === ".git") continue;
      const path = this.io.child(frame.directory, entry.name, "directory");
      if (path === null) continue;
      const listing = this.io.readDir(path);
      listing.catch(() => {}); // awaited when the walk gets there, or dropped with the walk
      frame.ahead.set(entry.name, listing);
    }
  }

  /** Opens a directory: its sorted entries, and its .gitignore layer when inside a repository. */
  async open(
    directory: P,
    relative: string,
    listing: Promise<WalkDirEntry[]> = this.io.readDir(directory),
  ): Promise<Frame<P> | null> {
    this.options.signal.throwIfAborted();
    let entries;
    try {
      entries = await listing;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === "permission_denied" || code === "not_found") return null;
      throw error;
    }
    const { stack } = this;
    const wasInRepository = stack.inRepository;
    if (sortListing(entries)) stack.inRepository = true;
    const source = this.options.gitignore === false || !stack.inRepository ||
        !this.io.ignorable(directory)
      ? null
      : await ignoreSource(this.io, directory);
    if (source !== null) stack.push(source);
    const frame: Frame<P> = {
      directory,
      relative,
      entries,
      index: 0,
      pushedLayer: source !== null,
      wasInRepository,
      ahead: new Map(),
      aheadIndex: 0,
    };
    this.lookAhead(frame);
    return frame;
  }

  /** Leaves a directory: its .gitignore layer and repository state go with it. */
  close(frame: Frame<P>): void {
    if (frame.pushedLayer) this.stack.pop();
    this.stack.inRepository = frame.wasInRepository;
  }
}

/**
 * Walks the tree below the directory `start`, yielding entries lazily, in
 * walk order, a batch at a time: the entries met before the walk next waits
 * to open a directory. Nothing is collected ahead of what the consumer asks
 * for, beyond the batch and the listings read ahead. Iterative: one generator
 * however deep the tree. `stack` holds the `.gitignore` layers that apply at
 * `start`; an early stop leaves it as it was found.
 */
export async function* walkTree<P>(
  io: WalkIO<P>,
  start: P,
  stack: IgnoreStack,
  options: WalkTreeOptions,
): AsyncGenerator<WalkedEntry<P>[]> {
  const walk = new TreeWalk(io, stack, options);
  const frames: Frame<P>[] = [];
  let batch: WalkedEntry<P>[] = [];
  const first = await walk.open(start, "");
  if (first !== null) frames.push(first);
  try {
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      if (frame.index === frame.entries.length) {
        walk.close(frames.pop()!);
        continue;
      }
      const entry = frame.entries[frame.index++];
      options.signal.throwIfAborted();
      if (!isWalked(entry)) continue;
      const path = io.child(frame.directory, entry.name, entry.kind);
      if (path === null) continue;
      const isDirectory = entry.kind === "directory";
      // Taken before the ignore check, so an ignored directory frees its look-ahead slot.
      const started = isDirectory ? frame.ahead.get(entry.name) : undefined;
      if (started !== undefined) {
        frame.ahead.delete(entry.name);
        walk.lookAhead(frame);
      }
      if (
        stack.layers.length > 0 && io.ignorable(path) &&
        stack.ignored(io.display(path), isDirectory)
      ) {
        continue;
      }
      const relative = frame.relative === "" ? entry.name : `${frame.relative}/${entry.name}`;
      if (isDirectory) {
        if (options.directories) batch.push({ path, relative, kind: "directory" });
        if (batch.length > 0) {
          yield batch;
          batch = [];
        }
        const child = await walk.open(path, relative, started);
        if (child !== null) frames.push(child);
      } else {
        batch.push({ path, relative, kind: "file" });
      }
    }
    if (batch.length > 0) yield batch;
  } finally {
    for (const frame of frames.reverse()) walk.close(frame);
  }
}

/** The code unit of `/`. */
const SLASH = 0x2f;

/**
 * The walk's order of two paths: segment by segment in code-unit order, a
 * directory before what it holds. Negative when `a` comes first.
 *
 * One pass, no allocation (it runs for every result put back in order): at
 * the first differing code unit, a `/` ends its side's segment first, so it
 * sorts before any other unit; otherwise code units decide; a path that is a
 * prefix of the other comes first.
 */
export function walkOrder(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const left = a.charCodeAt(i);
    const right = b.charCodeAt(i);
    if (left === right) continue;
    if (left === SLASH) return -1;
    if (right === SLASH) return 1;
    return left - right;
  }
  return a.length - b.length;
}
