/**
 * The walk of `grep` and `glob`, written once: its rules, and the walk over
 * them twice, as `walk` and `walkSync` sit side by side in Deno's standard
 * library: {@link Walk} over an asynchronous {@link WalkIO} (the calling
 * thread) and {@link WalkSync} over a synchronous {@link WalkSyncIO} (search
 * workers, which may block).
 *
 * The rules: depth first, each directory's entries in code-unit order; `.git`
 * never entered; symbolic links never followed; only files and directories
 * met; a directory that vanished or cannot be read passed over. Ignore rules
 * apply only inside a git repository — at or below a directory that holds
 * `.git` — as ripgrep applies them, and in git's order: the user's global
 * excludes (`core.excludesFile`), then the repository's `.git/info/exclude`,
 * then each `.gitignore` from the repository's root down, the innermost
 * decision winning. Patterns match case-sensitively, as git does on Linux.
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

/** Ignore files larger than this are not read. */
export const IGNORE_FILE_MAX_BYTES: number = 1024 * 1024;

/**
 * Whether a directory whose listing failed with this error code is passed
 * over (it vanished, or the operating system refuses it); any other failure
 * ends the walk.
 */
export function isPassedOver(code: unknown): boolean {
  return code === "not_found" || code === "permission_denied";
}

/** How both walks name paths; `P` is the backend's path type. */
interface WalkPaths<P> {
  /** A child of a directory, or `null` when the name cannot be a path segment here. */
  child(directory: P, name: string, kind: WalkEntryKind): P | null;
}

/** How {@link Walk} reaches the file system. */
export interface WalkIO<P> extends WalkPaths<P> {
  /** A directory's entries in any order; `null` when it vanished or cannot be read. */
  readDir(directory: P): Promise<WalkDirEntry[] | null>;
  /**
   * An ignore file's text, never through a final symbolic link; `null` when
   * it is not a regular file, cannot be read, or holds more than `maxBytes`.
   */
  readText(file: P, maxBytes: number): Promise<string | null>;
}

/** How {@link WalkSync} reaches the file system: {@link WalkIO}, blocking. */
export interface WalkSyncIO<P> extends WalkPaths<P> {
  /** A directory's entries in any order; `null` when it vanished or cannot be read. */
  readDir(directory: P): WalkDirEntry[] | null;
  /**
   * An ignore file's text, never through a final symbolic link; `null` when
   * it is not a regular file, cannot be read, or holds more than `maxBytes`.
   */
  readText(file: P, maxBytes: number): string | null;
}

/** One ignore file's rules and where they apply. */
export interface IgnoreSource {
  /** The directory its patterns are relative to, from the working directory (`""` for it). */
  readonly base: string;
  /** The file's text. */
  readonly text: string;
}

/** The ignore rules in force in a directory, in plain data (it crosses to search workers). */
export interface IgnoreState {
  /** Whether the directory is inside a git repository. */
  readonly inRepository: boolean;
  /** The rules that apply there, outermost first. */
  readonly sources: readonly IgnoreSource[];
  /** The user's global excludes (`core.excludesFile`): applied at every repository's root. */
  readonly userExcludes: string | null;
}

/** Ignore layers from outermost to innermost; the innermost decision wins. */
class IgnoreStack {
  readonly layers: { readonly base: string; readonly rules: ReturnType<typeof ignore> }[] = [];
  readonly sources: IgnoreSource[] = [];

  constructor(sources: readonly IgnoreSource[]) {
    for (const source of sources) this.push(source);
  }

  push(source: IgnoreSource): void {
    // git on Linux matches case-sensitively (core.ignorecase is false there); the package does
    // not by default, and then `*.s` hides every `.S` assembly source of the Linux tree.
    this.layers.push({ base: source.base, rules: ignore({ ignorecase: false }).add(source.text) });
    this.sources.push(source);
  }

  truncate(length: number): void {
    this.layers.length = length;
    this.sources.length = length;
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

/** Options of {@link Walk} and {@link WalkSync}. */
export interface WalkOptions {
  /** The search's start, relative to the working directory (`.` for it); `relative` is relative to it. */
  readonly from: string;
  /** The ignore rules in force where the walk starts; `null`: none apply. */
  readonly ignore: IgnoreState | null;
  /** Only the entries after this one (relative to the working directory), in walk order. */
  readonly after?: string;
}

/** One entry met by the walk: a file or a directory. */
export interface WalkEntry<P> {
  /** The path, for reading. */
  readonly path: P;
  /** Path relative to the working directory, `/`-separated. */
  readonly display: string;
  /** Path relative to the search's start, `/`-separated. */
  readonly relative: string;
  /** `file` or `directory`. */
  readonly kind: "file" | "directory";
}

/** An entry the walk met: reported, or (resuming after an entry) only entered. */
interface Step<P> extends WalkEntry<P> {
  readonly passed: boolean;
}

/** A directory the walk has entered. */
interface Frame<P> {
  readonly directory: P;
  readonly display: string;
  /** Sorted; an entry handed on is replaced by `null`. */
  readonly entries: (WalkDirEntry | null)[];
  index: number;
  /** Ignore layers in force inside it. */
  readonly layers: number;
  readonly inRepository: boolean;
}

/** A listed directory about to be entered, and the ignore files to read first, in order. */
interface Opening<P> {
  readonly directory: P;
  readonly display: string;
  readonly entries: WalkDirEntry[];
  readonly inRepository: boolean;
  /** It holds `.git`: the user's global excludes apply from here. */
  readonly repositoryRoot: boolean;
  readonly reads: P[];
}

/** Directories a walk gives away: entries of one of its open directories, for another walk. */
export interface HandedOn<P> {
  /** The open directory. */
  readonly directory: P;
  /** Its path relative to the working directory. */
  readonly display: string;
  /** The names of its subdirectories given away, in walk order. */
  readonly names: string[];
  /** The ignore rules in force inside it. */
  readonly ignore: IgnoreState | null;
}

/** Code-unit order: stable and locale-free. */
function byName(a: WalkDirEntry, b: WalkDirEntry): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * The rules, with no input or output of their own: what each entry met
 * means, which ignore files a directory needs read, and the open directories.
 * {@link Walk} and {@link WalkSync} do the reading.
 */
class WalkRules<P> {
  readonly frames: Frame<P>[] = [];
  readonly stack: IgnoreStack | null;
  readonly #ignore: IgnoreState | null;
  readonly #cut: number;
  #after: string | null;
  /** Set when no open directory holds one to hand on; cleared when a directory is entered. */
  #nothingToHand = false;

  constructor(readonly paths: WalkPaths<P>, options: WalkOptions) {
    this.#ignore = options.ignore;
    this.stack = options.ignore === null ? null : new IgnoreStack(options.ignore.sources);
    this.#cut = options.from === "." ? 0 : options.from.length + 1;
    this.#after = options.after ?? null;
  }

  /** Sorts a directory's listing and says which ignore files entering it reads. */
  listed(directory: P, display: string, entries: WalkDirEntry[]): Opening<P> {
    entries.sort(byName);
    const parent = this.frames.at(-1);
    const git = entries.find((entry) => entry.name === ".git");
    const inRepository = git !== undefined ||
      (parent?.inRepository ?? this.#ignore?.inRepository ?? false);
    const reads: P[] = [];
    if (this.stack !== null && inRepository) {
      if (git?.kind === "directory") {
        const dotGit = this.paths.child(directory, ".git", "directory");
        const info = dotGit === null ? null : this.paths.child(dotGit, "info", "directory");
        const exclude = info === null ? null : this.paths.child(info, "exclude", "file");
        if (exclude !== null) reads.push(exclude);
      }
      if (entries.some((entry) => entry.name === ".gitignore" && entry.kind === "file")) {
        const file = this.paths.child(directory, ".gitignore", "file");
        if (file !== null) reads.push(file);
      }
    }
    return { directory, display, entries, inRepository, repositoryRoot: git !== undefined, reads };
  }

  /** Enters a listed directory, with the texts of its ignore files. */
  entered(opening: Opening<P>, texts: readonly (string | null)[]): void {
    const { stack } = this;
    if (stack !== null && opening.inRepository) {
      const base = opening.display === "." ? "" : opening.display;
      const user = this.#ignore?.userExcludes ?? null;
      if (opening.repositoryRoot && user !== null) stack.push({ base, text: user });
      for (const text of texts) if (text !== null) stack.push({ base, text });
    }
    this.frames.push({
      directory: opening.directory,
      display: opening.display,
      entries: opening.entries,
      index: 0,
      layers: stack?.layers.length ?? 0,
      inRepository: opening.inRepository,
    });
    this.#nothingToHand = false;
  }

  /** Enters a directory as far as the given subdirectories of it (a walk handed them on). */
  enteredWith(directory: P, display: string, names: readonly string[]): void {
    this.frames.push({
      directory,
      display,
      entries: names.map((name) => ({ name, kind: "directory" })),
      index: 0,
      layers: this.stack?.layers.length ?? 0,
      inRepository: this.#ignore?.inRepository ?? false,
    });
  }

  /** Leaves the innermost directory: its ignore layers and repository state go with it. */
  #close(): void {
    this.frames.pop();
    this.stack?.truncate(this.frames.at(-1)?.layers ?? this.#ignore?.sources.length ?? 0);
  }

  /** The next entry the walk meets, or `null` at its end; a directory is entered next. */
  step(): Step<P> | null {
    const { frames, stack } = this;
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      if (frame.index === frame.entries.length) {
        this.#close();
        continue;
      }
      const entry = frame.entries[frame.index++];
      if (entry === null || entry.name === ".git") continue;
      const { kind } = entry;
      if (kind !== "file" && kind !== "directory") continue;
      const path = this.paths.child(frame.directory, entry.name, kind);
      if (path === null) continue;
      const display = frame.display === "." ? entry.name : `${frame.display}/${entry.name}`;
      const after = this.#after;
      if (after !== null) {
        if (walkOrder(display, after) <= 0) {
          // Met already; a directory that holds the entry the walk resumes after, or is it, is
          // entered for what follows.
          if (kind === "directory" && (display === after || after.startsWith(`${display}/`))) {
            return { path, display, relative: display.slice(this.#cut), kind, passed: true };
          }
          continue;
        }
        this.#after = null;
      }
      if (
        stack !== null && stack.layers.length > 0 && stack.ignored(display, kind === "directory")
      ) {
        continue;
      }
      return { path, display, relative: display.slice(this.#cut), kind, passed: false };
    }
    return null;
  }

  /** The ignore rules in force inside an open directory. */
  #ignoreIn(frame: Frame<P>): IgnoreState | null {
    if (this.stack === null) return null;
    return {
      inRepository: frame.inRepository,
      sources: this.stack.sources.slice(0, frame.layers),
      userExcludes: this.#ignore!.userExcludes,
    };
  }

  /** The ignore rules in force inside the innermost open directory. */
  ignoreState(): IgnoreState | null {
    const frame = this.frames.at(-1);
    return frame === undefined ? this.#ignore : this.#ignoreIn(frame);
  }

  /** Whether an open directory may still hold directories ahead to hand on. */
  get mayHandOn(): boolean {
    return !this.#nothingToHand;
  }

  /**
   * Gives away the last half of the directories still ahead in the
   * shallowest open directory that has any (one of one): the largest piece
   * of work, in few hand-offs, while this walk keeps the nearest.
   */
  handOn(): HandedOn<P> | null {
    for (const frame of this.frames) {
      const ahead: number[] = [];
      for (let i = frame.index; i < frame.entries.length; i++) {
        const entry = frame.entries[i];
        if (entry === null || entry.kind !== "directory" || entry.name === ".git") continue;
        if (this.paths.child(frame.directory, entry.name, "directory") !== null) ahead.push(i);
      }
      if (ahead.length === 0) continue;
      const names = ahead.slice(ahead.length >> 1).map((i) => {
        const { name } = frame.entries[i]!;
        frame.entries[i] = null;
        return name;
      });
      return {
        directory: frame.directory,
        display: frame.display,
        names,
        ignore: this.#ignoreIn(frame),
      };
    }
    this.#nothingToHand = true;
    return null;
  }
}

/** Listings each open directory requests ahead of {@link Walk}, so the backend's latency overlaps it. */
export const WALK_READ_AHEAD: number = 8;

/** A directory's listing, once read. */
type Listing = Promise<WalkDirEntry[] | null>;

/**
 * The walk on the calling thread: entries one at a time, in walk order,
 * nothing collected ahead of what the caller asks for beyond the listings of
 * the next few subdirectories. Iterative: one object however deep the tree.
 */
export class Walk<P> {
  readonly #rules: WalkRules<P>;
  /** Listings started ahead, by open directory and entry index. */
  readonly #ahead = new WeakMap<Frame<P>, Map<number, Listing>>();
  #lookedAt: Frame<P> | null = null;
  #pending: { readonly path: P; readonly display: string; readonly listing?: Listing } | null =
    null;

  /** A walk that starts nowhere: {@link enter} its first directory. */
  constructor(readonly io: WalkIO<P>, options: WalkOptions, readonly signal: AbortSignal) {
    this.#rules = new WalkRules(io, options);
  }

  /** Enters a directory: the walk goes on with its entries. */
  async enter(directory: P, display: string, listing?: Listing): Promise<void> {
    this.signal.throwIfAborted();
    const entries = await (listing ?? this.io.readDir(directory));
    if (entries === null) return;
    const opening = this.#rules.listed(directory, display, entries);
    const texts: (string | null)[] = [];
    for (const file of opening.reads) {
      texts.push(await this.io.readText(file, IGNORE_FILE_MAX_BYTES));
    }
    this.#rules.entered(opening, texts);
  }

  /** The next entry, or `null` at the walk's end; throws the signal's reason once aborted. */
  async next(): Promise<WalkEntry<P> | null> {
    const { frames } = this.#rules;
    while (true) {
      const pending = this.#pending;
      if (pending !== null) {
        this.#pending = null;
        await this.enter(pending.path, pending.display, pending.listing);
      }
      this.signal.throwIfAborted();
      const top = frames.at(-1);
      if (top !== undefined && top !== this.#lookedAt) {
        this.#lookedAt = top;
        this.#lookAhead(top, top.index);
      }
      const step = this.#rules.step();
      if (step === null) return null;
      if (step.kind === "directory") {
        // Met in the innermost open directory (a step only leaves directories).
        const frame = frames.at(-1)!;
        const listing = this.#ahead.get(frame)?.get(frame.index - 1);
        this.#pending = { path: step.path, display: step.display, listing };
        this.#lookAhead(frame, frame.index);
      }
      if (!step.passed) return step;
    }
  }

  /** The ignore rules in force inside the innermost open directory. */
  ignoreState(): IgnoreState | null {
    return this.#rules.ignoreState();
  }

  /** Passes over the directory {@link next} just gave: the walk goes on after it, not into it. */
  skip(): void {
    this.#pending = null;
  }

  /** Keeps {@link WALK_READ_AHEAD} listings of a directory's next subdirectories in flight. */
  #lookAhead(frame: Frame<P>, from: number): void {
    let ahead = this.#ahead.get(frame);
    if (ahead === undefined) this.#ahead.set(frame, ahead = new Map());
    let next = from;
    for (const index of ahead.keys()) {
      if (index < from) ahead.delete(index); // passed: taken, or ignored
      else next = Math.max(next, index + 1);
    }
    for (let i = next; i < frame.entries.length && ahead.size < WALK_READ_AHEAD; i++) {
      const entry = frame.entries[i];
      if (entry === null || entry.kind !== "directory" || entry.name === ".git") continue;
      const path = this.io.child(frame.directory, entry.name, "directory");
      if (path === null) continue;
      const listing = this.io.readDir(path);
      listing.catch(() => {}); // awaited when the walk gets there, or dropped with the walk
      ahead.set(i, listing);
    }
  }
}

/**
 * The walk in a search worker: {@link Walk} over blocking calls, able to
 * give away part of what is ahead of it ({@link handOn}) to another walk.
 */
export class WalkSync<P> {
  readonly #rules: WalkRules<P>;
  #pending: Step<P> | null = null;

  /** A walk that starts nowhere: {@link enter} its first directory, or {@link enterWith}. */
  constructor(readonly io: WalkSyncIO<P>, options: WalkOptions) {
    this.#rules = new WalkRules(io, options);
  }

  /** Enters a directory: the walk goes on with its entries. */
  enter(directory: P, display: string): void {
    const entries = this.io.readDir(directory);
    if (entries === null) return;
    const opening = this.#rules.listed(directory, display, entries);
    const texts: (string | null)[] = [];
    for (const file of opening.reads) texts.push(this.io.readText(file, IGNORE_FILE_MAX_BYTES));
    this.#rules.entered(opening, texts);
  }

  /** Goes on with the given subdirectories of a directory, handed on by another walk. */
  enterWith(handed: Omit<HandedOn<P>, "ignore">): void {
    this.#rules.enteredWith(handed.directory, handed.display, handed.names);
  }

  /** The next entry, or `null` at the walk's end. */
  next(): WalkEntry<P> | null {
    while (true) {
      const pending = this.#pending;
      if (pending !== null) {
        this.#pending = null;
        this.enter(pending.path, pending.display);
      }
      const step = this.#rules.step();
      if (step === null) return null;
      if (step.kind === "directory") this.#pending = step;
      if (!step.passed) return step;
    }
  }

  /** The ignore rules in force inside the innermost open directory. */
  ignoreState(): IgnoreState | null {
    return this.#rules.ignoreState();
  }

  /** Whether {@link handOn} may find directories to give away. */
  get mayHandOn(): boolean {
    return this.#rules.mayHandOn;
  }

  /** Gives away the last half of the directories ahead in the shallowest open directory with any. */
  handOn(): HandedOn<P> | null {
    return this.#rules.handOn();
  }
}

/**
 * The ignore rules in force inside the last of `above`: the directories from
 * the working directory down to a walk's start, each read as a walk reads a
 * directory it enters.
 */
export async function ignoreStateBelow<P>(
  io: WalkIO<P>,
  above: readonly { readonly path: P; readonly display: string }[],
  userExcludes: string | null,
  signal: AbortSignal,
): Promise<IgnoreState> {
  const walk = new Walk(io, {
    from: ".",
    ignore: { inRepository: false, sources: [], userExcludes },
  }, signal);
  for (const { path, display } of above) await walk.enter(path, display);
  return walk.ignoreState()!;
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
