/**
 * The start of the read-only tools (`read`, `list`, `grep`, `glob`): the
 * checked path they read from, and the one `read` effect they declare.
 *
 * @module
 */
import type { ToolSessionContext } from "../../contract/context.ts";
import type { ToolEffect } from "../../contract/effects.ts";
import type { CheckedPath } from "../../path/mod.ts";

/** The existing path a read-only tool starts at: `path`, or the working directory. */
export function readStart(
  session: ToolSessionContext,
  path: string | undefined,
): Promise<CheckedPath> {
  return session.resolvePath(path ?? ".", "read", "must_exist");
}

/** The effects of a read-only tool: one `read` of its start. */
export async function readEffects(
  session: ToolSessionContext,
  path: string | undefined,
): Promise<ToolEffect[]> {
  const start = await readStart(session, path);
  return [{ kind: "read", path: start.display, root: start.rootKind }];
}
