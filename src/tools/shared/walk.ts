/**
 * The walk of `grep` and `glob` over the session's file system: the tree
 * below a checked start (see `src/search/walk.ts` for its rules), with the
 * ignore rules of the working directory's directories above the start
 * applied too.
 *
 * @module
 */
import { posix } from "node:path";
import type { ToolSessionContext } from "../../contract/context.ts";
import { ToolError } from "../../contract/errors.ts";
import { checkedChild } from "../../path/mod.ts";
import type { CheckedPath } from "../../path/mod.ts";
import type { AsyncFileSystem } from "../../backends/filesystem.ts";
import { ignoreStateBelow, isPassedOver, Walk } from "../../search/walk.ts";
import type { IgnoreState, WalkEntry, WalkIO } from "../../search/walk.ts";

export { WALK_READ_AHEAD } from "../../search/walk.ts";

/** The walk's view of a file system, over checked paths. */
function checkedWalkIO(filesystem: AsyncFileSystem): WalkIO<CheckedPath> {
  return {
    async readDir(directory) {
      try {
        return await filesystem.readDir(directory);
      } catch (error) {
        if (isPassedOver((error as { code?: unknown }).code)) return null;
        throw error;
      }
    },
    child: (directory, name, kind) => checkedChild(directory, name, kind),
    async readText(file, maxBytes) {
      try {
        return new TextDecoder().decode(await filesystem.readFile(file, { maxBytes }));
      } catch {
        return null;
      }
    },
  };
}

/**
 * The ignore rules in force at a checked start, from the working directory
 * down: computed once per call, for the walk here and a backend's tree walk.
 * `null` in the skill root, where none apply.
 */
export async function ignoreStateAt(
  session: ToolSessionContext,
  start: CheckedPath,
  signal: AbortSignal,
): Promise<IgnoreState | null> {
  if (start.rootKind !== "working_directory") return null;
  const userExcludes = await session.filesystem.readGitExcludes?.(session.environment) ?? null;
  const segments = start.display === "." ? [] : start.display.split("/");
  const above: { path: CheckedPath; display: string }[] = [];
  for (let depth = 0; depth < segments.length; depth++) {
    const display = segments.slice(0, depth).join("/") || ".";
    above.push({ path: await session.resolvePath(display, "read", "must_exist"), display });
  }
  return await ignoreStateBelow(checkedWalkIO(session.filesystem), above, userExcludes, signal);
}

/**
 * Walks from `start` (a checked directory or file), yielding entries lazily:
 * nothing is collected ahead of what the consumer asks for.
 */
export async function* walk(
  session: ToolSessionContext,
  start: CheckedPath,
  ignore: IgnoreState | null,
  signal: AbortSignal,
): AsyncGenerator<WalkEntry<CheckedPath>> {
  const info = await session.filesystem.stat(start);
  if (info.kind === "file") {
    const name = posix.basename(start.display);
    yield { path: start, display: start.display, relative: name, kind: "file" };
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
  const walk = new Walk(checkedWalkIO(session.filesystem), { from: start.display, ignore }, signal);
  await walk.enter(start, start.display);
  for (let entry; (entry = await walk.next()) !== null;) yield entry;
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
