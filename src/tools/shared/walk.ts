/**
 * The streaming directory walk shared by `grep` and `glob`: depth first,
 * entries sorted per directory, `.git/` never entered, symbolic links never
 * followed, `.gitignore` files honoured the way git reads them, and the
 * call's signal checked at every entry.
 *
 * @module
 */
import ignore from "ignore";
import { posix } from "node:path";
import type { ToolSessionContext } from "../../contract/context.ts";
import { ToolError } from "../../contract/errors.ts";
import type { DirEntry, EntryKind } from "../../backends/filesystem.ts";
import { checkedChild } from "../../path/mod.ts";
import type { CheckedPath } from "../../path/mod.ts";

/** One entry met by the walk. */
export interface WalkEntry {
  /** The checked path, for reading. */
  readonly path: CheckedPath;
  /** Path relative to the walk's start, `/`-separated. */
  readonly relative: string;
  /** `file` or `directory`. */
  readonly kind: EntryKind;
}

interface IgnoreLayer {
  /** Directory of the `.gitignore`, relative to the working directory (`""` for it). */
  readonly base: string;
  readonly rules: ReturnType<typeof ignore>;
}

/**
 * `.gitignore` layers from outermost to innermost; the innermost decision
 * wins. As ripgrep does, they apply only inside a git repository: at or
 * below a directory that holds `.git`.
 */
class IgnoreStack {
  readonly layers: IgnoreLayer[] = [];
  inRepository = false;

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

/** Whether a directory holds `.git` (a directory, or a file as in worktrees). */
async function holdsGit(session: ToolSessionContext, directory: CheckedPath): Promise<boolean> {
  const git = checkedChild(directory, ".git", "directory");
  if (git === null) return false;
  try {
    await session.filesystem.stat(git);
    return true;
  } catch {
    return false;
  }
}

async function loadIgnore(
  session: ToolSessionContext,
  directory: CheckedPath,
): Promise<IgnoreLayer | null> {
  const file = checkedChild(directory, ".gitignore", "file");
  if (file === null) return null;
  try {
    const bytes = await session.filesystem.readFile(file, { maxBytes: 1024 * 1024 });
    const base = directory.display === "." ? "" : directory.display;
    return { base, rules: ignore().add(new TextDecoder().decode(bytes)) };
  } catch {
    return null;
  }
}

/** Code-unit order: stable and locale-free. */
function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Options of {@link walk}. */
export interface WalkOptions {
  /** Aborts the walk. */
  readonly signal: AbortSignal;
  /** Whether to yield directories too (glob) or only files (grep). */
  readonly directories: boolean;
  /** Honour `.gitignore` files (default true). */
  readonly gitignore?: boolean;
}

/**
 * Walks from `start` (a checked directory or file), yielding entries lazily:
 * nothing is collected ahead of what the consumer asks for.
 */
export async function* walk(
  session: ToolSessionContext,
  start: CheckedPath,
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  const info = await session.filesystem.stat(start);
  if (info.kind === "file") {
    yield { path: start, relative: posix.basename(start.display), kind: "file" };
    return;
  }
  if (info.kind !== "directory") {
    throw new ToolError(
      "not_a_regular_file",
      `${start.display} is neither a file nor a directory.`,
    );
  }
  const stack = new IgnoreStack();
  if (options.gitignore !== false && start.rootKind === "working_directory") {
    // The working directory's .gitignore files above the start apply too.
    const segments = start.display === "." ? [] : start.display.split("/");
    for (let depth = 0; depth < segments.length; depth++) {
      const directory = await session.resolvePath(
        segments.slice(0, depth).join("/") || ".",
        "read",
        "must_exist",
      );
      if (await holdsGit(session, directory)) stack.inRepository = true;
      const layer = stack.inRepository ? await loadIgnore(session, directory) : null;
      if (layer !== null) stack.layers.push(layer);
    }
  }
  yield* walkDirectory(session, start, "", stack, options);
}

/** Subdirectory listings each open directory requests ahead of the walk. */
export const WALK_READ_AHEAD = 8;

/** One open directory of the depth-first walk. */
interface Frame {
  readonly directory: CheckedPath;
  readonly relative: string;
  readonly entries: readonly { name: string; kind: EntryKind }[];
  index: number;
  readonly pushedLayer: boolean;
  readonly wasInRepository: boolean;
  /** Listings of the next few subdirectories, started so the backend's latency overlaps the walk. */
  readonly ahead: Map<string, Promise<DirEntry[]>>;
  /** Where the look-ahead has reached in `entries`. */
  aheadIndex: number;
}

/** Starts listings of this frame's next subdirectories, keeping WALK_READ_AHEAD in flight. */
function readAhead(session: ToolSessionContext, frame: Frame): void {
  while (frame.ahead.size < WALK_READ_AHEAD && frame.aheadIndex < frame.entries.length) {
    const entry = frame.entries[frame.aheadIndex++];
    if (entry.kind !== "directory" || entry.name === ".git") continue;
    const path = checkedChild(frame.directory, entry.name, "directory");
    if (path === null) continue;
    const listing = session.filesystem.readDir(path);
    listing.catch(() => {}); // awaited when the walk gets there, or dropped with the walk
    frame.ahead.set(entry.name, listing);
  }
}

/** Opens a directory: its sorted entries, and its .gitignore layer when inside a repository. */
async function openFrame(
  session: ToolSessionContext,
  directory: CheckedPath,
  relative: string,
  stack: IgnoreStack,
  options: WalkOptions,
  listing: Promise<DirEntry[]> = session.filesystem.readDir(directory),
): Promise<Frame | null> {
  options.signal.throwIfAborted();
  let entries;
  try {
    entries = await listing;
  } catch (error) {
    if (
      error instanceof ToolError &&
      (error.code === "permission_denied" || error.code === "not_found")
    ) {
      return null;
    }
    throw error;
  }
  entries.sort(byName);
  const wasInRepository = stack.inRepository;
  if (entries.some((entry) => entry.name === ".git")) stack.inRepository = true;
  const layer =
    options.gitignore === false || !stack.inRepository || directory.rootKind !== "working_directory"
      ? null
      : await loadIgnore(session, directory);
  if (layer !== null) stack.layers.push(layer);
  const frame: Frame = {
    directory,
    relative,
    entries,
    index: 0,
    pushedLayer: layer !== null,
    wasInRepository,
    ahead: new Map(),
    aheadIndex: 0,
  };
  readAhead(session, frame);
  return frame;
}

/** Leaves a directory: its .gitignore layer and repository state go with it. */
function closeFrame(frame: Frame, stack: IgnoreStack): void {
  if (frame.pushedLayer) stack.layers.pop();
  stack.inRepository = frame.wasInRepository;
}

/**
 * The depth-first walk itself, iterative: one generator however deep the
 * tree, so each entry costs one hop to the consumer, not one per level.
 */
async function* walkDirectory(
  session: ToolSessionContext,
  start: CheckedPath,
  relative: string,
  stack: IgnoreStack,
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  const frames: Frame[] = [];
  const first = await openFrame(session, start, relative, stack, options);
  if (first !== null) frames.push(first);
  try {
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      if (frame.index === frame.entries.length) {
        closeFrame(frames.pop()!, stack);
        continue;
      }
      const entry = frame.entries[frame.index++];
      options.signal.throwIfAborted();
      if (entry.name === ".git" || (entry.kind !== "file" && entry.kind !== "directory")) continue;
      const path = checkedChild(frame.directory, entry.name, entry.kind);
      if (path === null) continue;
      const isDirectory = entry.kind === "directory";
      // Taken before the ignore check, so an ignored directory frees its look-ahead slot.
      const started = isDirectory ? frame.ahead.get(entry.name) : undefined;
      if (started !== undefined) {
        frame.ahead.delete(entry.name);
        readAhead(session, frame);
      }
      if (
        stack.layers.length > 0 && path.rootKind === "working_directory" &&
        stack.ignored(path.display, isDirectory)
      ) {
        continue;
      }
      const childRelative = frame.relative === "" ? entry.name : `${frame.relative}/${entry.name}`;
      if (isDirectory) {
        if (options.directories) yield { path, relative: childRelative, kind: "directory" };
        const child = await openFrame(
          session,
          path,
          childRelative,
          stack,
          options,
          started,
        );
        if (child !== null) frames.push(child);
      } else {
        yield { path, relative: childRelative, kind: "file" };
      }
    }
  } finally {
    // An early stop leaves the stack as it was found.
    for (const frame of frames.reverse()) closeFrame(frame, stack);
  }
}
