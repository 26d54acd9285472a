/**
 * The walk of `grep` and `glob` over the session's file system: the tree
 * below a checked start (see `src/search/walk.ts` for its rules), with the
 * working directory's `.gitignore` files above the start applied too.
 *
 * @module
 */
import { posix } from "node:path";
import type { ToolSessionContext } from "../../contract/context.ts";
import { ToolError } from "../../errors.ts";
import { checkedChild } from "../../path/mod.ts";
import type { CheckedPath } from "../../path/mod.ts";
import type { TreeWalk } from "../../backends/filesystem.ts";
import { ignoreSource, IgnoreStack, walkTree } from "../../search/walk.ts";
import type { WalkedEntry, WalkIO } from "../../search/walk.ts";

export { WALK_READ_AHEAD } from "../../search/walk.ts";

/** One entry met by the walk. */
export type WalkEntry = WalkedEntry<CheckedPath>;

/** Options of {@link walk}. */
export interface WalkOptions {
  /** Aborts the walk. */
  readonly signal: AbortSignal;
  /** Whether to yield directories too (glob) or only files (grep). */
  readonly directories: boolean;
  /** Honour `.gitignore` files (default true). */
  readonly gitignore?: boolean;
}

/** The walk's view of the session's file system. */
function sessionWalkIO(session: ToolSessionContext): WalkIO<CheckedPath> {
  return {
    readDir: (directory) => session.filesystem.readDir(directory),
    child: (directory, name, kind) => checkedChild(directory, name, kind),
    async readText(file) {
      try {
        const bytes = await session.filesystem.readFile(file, { maxBytes: 1024 * 1024 });
        return new TextDecoder().decode(bytes);
      } catch {
        return null;
      }
    },
    display: (path) => path.display,
    ignorable: (path) => path.rootKind === "working_directory",
  };
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

/**
 * The `.gitignore` state at a checked directory: the working directory's
 * files above it (inside a repository), outermost first.
 */
async function ignoreStackAt(
  session: ToolSessionContext,
  start: CheckedPath,
  options: { readonly gitignore?: boolean },
): Promise<IgnoreStack> {
  const stack = new IgnoreStack();
  if (options.gitignore === false || start.rootKind !== "working_directory") return stack;
  const io = sessionWalkIO(session);
  const segments = start.display === "." ? [] : start.display.split("/");
  for (let depth = 0; depth < segments.length; depth++) {
    const directory = await session.resolvePath(
      segments.slice(0, depth).join("/") || ".",
      "read",
      "must_exist",
    );
    if (await holdsGit(session, directory)) stack.inRepository = true;
    const source = stack.inRepository ? await ignoreSource(io, directory) : null;
    if (source !== null) stack.push(source);
  }
  return stack;
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
  // A large walk goes on in the backend's workers: they start while this one begins.
  session.filesystem.prepareSearch?.();
  const stack = await ignoreStackAt(session, start, options);
  for await (const batch of walkTree(sessionWalkIO(session), start, stack, options)) yield* batch;
}

/**
 * What a backend's tree walk needs to go on below `start` after the entry
 * `after`, which the walk on this thread reached.
 */
export async function treeWalkAfter(
  session: ToolSessionContext,
  start: CheckedPath,
  after: string,
): Promise<TreeWalk> {
  const stack = await ignoreStackAt(session, start, {});
  return { gitignore: true, ignoreSources: stack.sources, inRepository: stack.inRepository, after };
}

/**
 * Takes the items of a backend's tree walk in order, until `take` returns
 * `true` (enough). Returns `false`, having taken nothing, when the tree walk
 * fails before its first batch (the runtime may not read its worker
 * module), so the caller can do the work on this thread; a later failure, or
 * the call's cancellation, is thrown.
 */
export async function takeFromTree<T>(
  open: () => AsyncIterable<readonly T[]>,
  signal: AbortSignal,
  take: (item: T) => boolean,
): Promise<boolean> {
  let started = false;
  try {
    for await (const batch of open()) {
      started = true;
      for (const item of batch) if (take(item)) return true;
    }
    return true;
  } catch (error) {
    if (started || signal.aborted) throw error;
    return false;
  }
}
