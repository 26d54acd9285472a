/**
 * The ignore rules in force where `grep` or `glob` starts: those of the
 * working directory's directories above the start (see `src/search/walk.ts`
 * for the rules), computed once per call and handed to the backend's tree
 * search in plain data.
 *
 * @module
 */
import type { ToolSessionContext } from "../../contract/context.ts";
import type { CheckedPath } from "../../path/mod.ts";
import { checkedWalkIO } from "../../backends/thread_search.ts";
import { ignoreStateBelow } from "../../search/walk.ts";
import type { IgnoreState } from "../../search/walk.ts";

/**
 * The ignore rules in force at a checked start, from the working directory
 * down, with the user's global excludes; `null` in the skill root, where
 * none apply.
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
