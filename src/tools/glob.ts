/**
 * `glob`: files and directories whose path relative to `path` matches a
 * picomatch pattern; streaming, cancellable, stopped at `max_results`.
 *
 * @module
 */
import * as v from "valibot";
import { defineTool } from "../contract/tool.ts";
import type { Tool } from "../contract/tool.ts";
import type { SameType } from "../contract/schema.ts";
import { ToolError } from "../contract/errors.ts";
import { ignoreStateAt, takeFromTree, walk } from "./shared/walk.ts";
import type { IgnoreState } from "../search/walk.ts";
import { globMatcher } from "../search/glob_filter.ts";
import type { ToolSessionContext } from "../contract/context.ts";
import type { CheckedPath } from "../path/mod.ts";
import type { TreeGlob } from "../backends/filesystem.ts";

const GlobSchema = v.strictObject({
  pattern: v.pipe(
    v.string(),
    v.minLength(1),
    v.description(
      "Glob pattern (`**`, `*`, `?`, braces, extglobs), matched against paths relative to `path`.",
    ),
  ),
  path: v.optional(
    v.pipe(v.string(), v.description("Directory to search from (default: the working directory).")),
  ),
  max_results: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(2000),
      v.description("Most paths (default 200)."),
    ),
  ),
});

/** The input of `glob`. */
export interface GlobInput {
  /** The glob pattern. */
  pattern: string;
  /** Directory to search from. */
  path?: string;
  /** Most paths (1–2000). */
  max_results?: number;
}

// The exported type is proven equal to what the schema produces.
const _inputMatchesSchema: SameType<GlobInput, v.InferOutput<typeof GlobSchema>> = true;

/** The structured output of `glob`. */
export interface GlobOutput {
  /** Matching paths relative to the working directory, in walk (segment) order. */
  readonly paths: readonly string[];
  /** Whether the walk stopped at `max_results` (more paths may match). */
  readonly truncated: boolean;
}

/** Entries walked on the calling thread before a large glob goes to the backend's tree walk. */
const ENTRIES_HERE_FIRST = 256;

/**
 * Walks and matches on this thread. With `handOff`, and a backend that walks
 * trees, stops after ENTRIES_HERE_FIRST entries and returns the last one as
 * `after`, for the backend to go on from; `after` is `null` when the glob is
 * over.
 */
async function globHere(
  session: ToolSessionContext,
  start: CheckedPath,
  matches: (path: string) => boolean,
  max: number,
  signal: AbortSignal,
  ignore: IgnoreState | null,
  handOff: boolean,
): Promise<{ paths: string[]; truncated: boolean; after: string | null }> {
  const paths: string[] = [];
  const limit = handOff && session.filesystem.globTree !== undefined
    ? ENTRIES_HERE_FIRST
    : Number.POSITIVE_INFINITY;
  let met = 0;
  let last: string | null = null;
  for await (const entry of walk(session, start, ignore, signal)) {
    if (met++ === limit) return { paths, truncated: false, after: last };
    last = entry.display;
    if (!matches(entry.relative)) continue;
    paths.push(entry.display);
    if (paths.length === max) return { paths, truncated: true, after: null };
  }
  return { paths, truncated: false, after: null };
}

/** The `glob` tool. */
export const globTool: Tool<GlobInput, GlobOutput> = defineTool<GlobInput, GlobOutput>({
  id: "filesystem/glob",
  name: "glob",
  description:
    "Find files and directories by glob pattern, e.g. `**/*.ts` or `src/{a,b}/*.md`, matched against " +
    "paths relative to `path`. `*.ts` matches only at the top level; use `**/` for any depth. Hidden files are " +
    "included; .gitignore rules apply; .git/ is skipped. Results are sorted and stop at max_results (default 200).",
  risk: "read",
  input: GlobSchema,
  async effects(input, session) {
    const path = await session.resolvePath(input.path ?? ".", "read", "must_exist");
    return [{ kind: "read", path: path.display, root: path.rootKind }];
  },
  async execute(input, session, call) {
    const start = await session.resolvePath(input.path ?? ".", "read", "must_exist");
    if (input.pattern.startsWith("/")) {
      throw new ToolError(
        "invalid_input",
        "pattern is matched against paths relative to `path`; put the directory in `path` and a relative pattern here.",
      );
    }
    const matches = globMatcher(input.pattern);
    const max = input.max_results ?? 200;
    // The walk visits entries sorted by name, depth first: its order is already the
    // segment-by-segment sorted order, so the paths need no sort of their own.
    const ignore = await ignoreStateAt(session, start, call.signal);
    const here = await globHere(session, start, matches, max, call.signal, ignore, true);
    if (here.after === null) return { data: { paths: here.paths, truncated: here.truncated } };
    const glob: TreeGlob = {
      ignore,
      after: here.after,
      limit: max - here.paths.length,
      pattern: input.pattern,
    };
    const { paths } = here;
    const done = await takeFromTree(
      () => session.filesystem.globTree!(start, glob, call.signal),
      call.signal,
      (path) => paths.push(path) === max,
    );
    if (done) return { data: { paths, truncated: paths.length === max } };
    // The backend's tree walk could not run: the whole glob runs here instead.
    const whole = await globHere(session, start, matches, max, call.signal, ignore, false);
    return { data: { paths: whole.paths, truncated: whole.truncated } };
  },
  toText(output) {
    if (output.paths.length === 0) return "No paths match.";
    const more = output.truncated
      ? `\n[Stopped at max_results (${output.paths.length}); more paths may match. Narrow the pattern or path.]`
      : "";
    return output.paths.join("\n") + more;
  },
});
