/**
 * `glob`: files and directories whose path relative to `path` matches a
 * picomatch pattern, from the backend's tree glob in walk order; cancellable,
 * stopped at `max_results`.
 *
 * @module
 */
import * as v from "valibot";
import { defineTool } from "../contract/tool.ts";
import type { Tool } from "../contract/tool.ts";
import type { SameType } from "../contract/schema.ts";
import { ToolError } from "../errors.ts";
import { globMatcher, MAX_GLOB_LENGTH } from "../search/glob_filter.ts";
import { ignoreStateAt } from "./shared/ignore_state.ts";
import { readEffects, readStart } from "./shared/reads.ts";
import { optionalCount, tooLong } from "./shared/inputs.ts";

const GlobSchema = v.strictObject({
  pattern: v.pipe(
    v.string(),
    v.minLength(1),
    v.maxLength(MAX_GLOB_LENGTH, tooLong(MAX_GLOB_LENGTH, "use a shorter pattern")),
    v.description(
      "Glob pattern (`**`, `*`, `?`, braces, extglobs), matched against paths relative to `path`. " +
        `At most ${MAX_GLOB_LENGTH} characters.`,
    ),
  ),
  path: v.optional(
    v.pipe(v.string(), v.description("Directory to search from (default: the working directory).")),
  ),
  max_results: optionalCount("Most paths (default 200)."),
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

const GlobOutputSchema = v.pipe(
  v.strictObject({
    paths: v.pipe(
      v.array(v.string()),
      v.readonly(),
      v.description("Matching paths relative to the working directory, in walk order."),
    ),
    truncated: v.pipe(
      v.boolean(),
      v.description("Whether the walk stopped at max_results (more paths may match)."),
    ),
  }),
  v.readonly(),
);

// The exported type is proven equal to what the output schema describes.
const _outputMatchesSchema: SameType<GlobOutput, v.InferOutput<typeof GlobOutputSchema>> = true;

/** The `glob` tool. */
export const globTool: Tool<GlobInput, GlobOutput, "glob"> = defineTool<
  GlobInput,
  GlobOutput,
  "glob"
>({
  id: "filesystem/glob",
  name: "glob",
  title: "Find files by pattern",
  description:
    "Find files and directories by glob pattern, e.g. `**/*.ts` or `src/{a,b}/*.md`, matched against " +
    "paths relative to `path`. `*.ts` matches only at the top level; use `**/` for any depth. Hidden files are " +
    "included; .gitignore rules apply; .git/ is skipped. Results are sorted and stop at max_results (default 200).",
  risk: "read",
  input: GlobSchema,
  output: GlobOutputSchema,
  effects: (input, session) => readEffects(session, input.path),
  async execute(input, session, call) {
    const start = await readStart(session, input.path);
    if (input.pattern.startsWith("/")) {
      throw new ToolError(
        "invalid_input",
        "pattern is matched against paths relative to `path`; put the directory in `path` and a relative pattern here.",
      );
    }
    globMatcher(input.pattern); // a bad pattern is invalid_input before any walk
    const max = input.max_results ?? 200;
    const glob = {
      pattern: input.pattern,
      ignore: await ignoreStateAt(session, start, call.signal),
      limit: max,
    };
    // The walk visits entries sorted by name, depth first: its order is already the
    // segment-by-segment sorted order, so the paths need no sort of their own.
    const paths: string[] = [];
    walk: for await (const batch of session.filesystem.globTree(start, glob, call.signal)) {
      for (const path of batch) if (paths.push(path) === max) break walk;
    }
    return { data: { paths, truncated: paths.length === max } };
  },
  toText(output) {
    if (output.paths.length === 0) return "No paths match.";
    const more = output.truncated
      ? `\n[Stopped at max_results (${output.paths.length}); more paths may match. Narrow the pattern or path.]`
      : "";
    return output.paths.join("\n") + more;
  },
});
