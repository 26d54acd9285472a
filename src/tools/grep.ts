/**
 * `grep`: search file contents with a linear-time regular expression, in
 * the backend's tree search, taking its results in walk order and stopping
 * at `max_results`. Over-size, binary and unreadable files are counted.
 *
 * @module
 */
import * as v from "valibot";
import { defineTool } from "../contract/tool.ts";
import type { Tool } from "../contract/tool.ts";
import type { SameType } from "../contract/schema.ts";
import type { TreeHit, TreeSearch } from "../backends/filesystem.ts";
import { compileMatcher } from "../search/matcher.ts";
import { MAX_PATTERN_LENGTH, MAX_PATTERN_PROGRAM } from "../search/pattern_bounds.ts";
import { globFilter, MAX_GLOB_LENGTH } from "../search/glob_filter.ts";
import type { ScanMode } from "../search/scan.ts";
import { cutUtf8 } from "./shared/text.ts";
import { ignoreStateAt } from "./shared/ignore_state.ts";
import { readEffects, readStart } from "./shared/reads.ts";
import { optionalCount, tooLong } from "./shared/inputs.ts";

/** Files larger than this are skipped and counted as `too_large`. */
export const GREP_MAX_FILE_BYTES: number = 32 * 1024 * 1024;
const MAX_FILE_SIZE = `${GREP_MAX_FILE_BYTES / (1024 * 1024)} MiB`;
/** The whole text output stays under this many bytes. */
export const GREP_OUTPUT_BYTES: number = 256 * 1024;

const GrepSchema = v.strictObject({
  pattern: v.pipe(
    v.string(),
    v.minLength(1),
    v.maxLength(
      MAX_PATTERN_LENGTH,
      tooLong(MAX_PATTERN_LENGTH, "search for a shorter, distinctive part of the text"),
    ),
    v.description(
      `Regular expression in RE2 syntax (as ripgrep). At most ${MAX_PATTERN_LENGTH} characters.`,
    ),
  ),
  path: v.optional(
    v.pipe(
      v.string(),
      v.description("File or directory to search (default: the working directory)."),
    ),
  ),
  glob: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(MAX_GLOB_LENGTH, tooLong(MAX_GLOB_LENGTH, "use a shorter glob")),
      v.description(
        "Only files matching this glob: without a slash it matches file names at any depth " +
          "(`*.ts`); with one, paths relative to the working directory (`src/**/*.ts`). A leading ! excludes. " +
          `At most ${MAX_GLOB_LENGTH} characters.`,
      ),
    ),
  ),
  mode: v.optional(
    v.pipe(
      v.picklist(["content", "files_with_matches", "count"]),
      v.description(
        "content: matching lines as path:line:text; files_with_matches (default): paths; " +
          "count: matching lines per file.",
      ),
    ),
  ),
  case_insensitive: v.optional(
    v.pipe(v.boolean(), v.description("Match regardless of case (default false).")),
  ),
  context: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.maxValue(20),
      v.description("Lines of context in content mode."),
    ),
  ),
  max_results: optionalCount("Most results: lines in content mode, files otherwise (default 200)."),
});

/** The input of `grep`. */
export interface GrepInput {
  /** RE2 regular expression. */
  pattern: string;
  /** File or directory to search. */
  path?: string;
  /** File filter glob. */
  glob?: string;
  /** Output mode. */
  mode?: "content" | "files_with_matches" | "count";
  /** Match regardless of case. */
  case_insensitive?: boolean;
  /** Context lines in content mode. */
  context?: number;
  /** Most results (1–2000). */
  max_results?: number;
}

// The exported type is proven equal to what the schema produces.
const _inputMatchesSchema: SameType<GrepInput, v.InferOutput<typeof GrepSchema>> = true;

/** One line of content-mode output. */
export interface GrepLine {
  /** The file, relative to the working directory. */
  readonly path: string;
  /** 1-based line number. */
  readonly line: number;
  /** The line, cut at 500 characters with a marker. */
  readonly text: string;
  /** Whether this is a context line rather than a match. */
  readonly context: boolean;
}

/** Files passed over, by reason. */
export interface GrepSkipped {
  /** Larger than the size cap ({@link GREP_MAX_FILE_BYTES}). */
  readonly too_large: number;
  /** Holding a NUL byte in the first 8 KiB. */
  readonly binary: number;
  /** Refused by the OS or runtime, or not regular. */
  readonly unreadable: number;
}

/** The structured output of `grep`. */
export interface GrepOutput {
  /** The mode that ran. */
  readonly mode: "content" | "files_with_matches" | "count";
  /** files_with_matches: matching files in walk order. */
  readonly files: readonly string[];
  /** count: matching line counts per file. */
  readonly counts: readonly { readonly path: string; readonly count: number }[];
  /** content: matching lines with context. */
  readonly lines: readonly GrepLine[];
  /** Files passed over. */
  readonly skipped: GrepSkipped;
  /** Whether the search stopped at `max_results`. */
  readonly truncated: boolean;
}

const count = v.pipe(v.number(), v.integer());

const GrepOutputSchema = v.pipe(
  v.strictObject({
    mode: v.pipe(
      v.picklist(["content", "files_with_matches", "count"]),
      v.description("The mode that ran."),
    ),
    files: v.pipe(
      v.array(v.string()),
      v.readonly(),
      v.description("files_with_matches: matching files in walk order."),
    ),
    counts: v.pipe(
      v.array(v.pipe(v.strictObject({ path: v.string(), count }), v.readonly())),
      v.readonly(),
      v.description("count: matching line counts per file."),
    ),
    lines: v.pipe(
      v.array(
        v.pipe(
          v.strictObject({
            path: v.pipe(v.string(), v.description("The file, relative to the working directory.")),
            line: v.pipe(count, v.description("1-based line number.")),
            text: v.pipe(v.string(), v.description("The line, cut at 500 characters.")),
            context: v.pipe(
              v.boolean(),
              v.description("Whether this is a context line rather than a match."),
            ),
          }),
          v.readonly(),
        ),
      ),
      v.readonly(),
      v.description("content: matching lines with context."),
    ),
    skipped: v.pipe(
      v.strictObject({ too_large: count, binary: count, unreadable: count }),
      v.readonly(),
      v.description("Files passed over: over the size cap, binary, unreadable."),
    ),
    truncated: v.pipe(v.boolean(), v.description("Whether the search stopped at max_results.")),
  }),
  v.readonly(),
);

// The exported type is proven equal to what the output schema describes.
const _outputMatchesSchema: SameType<GrepOutput, v.InferOutput<typeof GrepOutputSchema>> = true;

/** Takes scan results in walk order and builds the output, up to `max` results. */
class Collector {
  readonly skipped = { too_large: 0, binary: 0, unreadable: 0 };
  readonly files: string[] = [];
  readonly counts: { path: string; count: number }[] = [];
  readonly lines: GrepLine[] = [];
  results = 0;
  truncated = false;

  /** Starts empty. */
  constructor(readonly mode: ScanMode, readonly max: number) {}

  /** Takes one file's result; `true` once `max` results are taken (enough). */
  take({ display: path, result }: TreeHit): boolean {
    if (result.skip !== undefined) {
      this.skipped[result.skip]++;
      return false;
    }
    if (result.matches === 0 || this.truncated) return this.truncated;
    if (this.mode === "files_with_matches") this.files.push(path);
    else if (this.mode === "count") this.counts.push({ path, count: result.matches });
    else {
      for (const line of result.lines) {
        if (!line.context && this.results === this.max) {
          this.truncated = true;
          break;
        }
        this.lines.push({ path, ...line });
        if (!line.context) this.results++;
      }
      if (this.results === this.max) this.truncated = true;
      return this.truncated;
    }
    this.results++;
    if (this.results === this.max) this.truncated = true;
    return this.truncated;
  }

  output(): GrepOutput {
    const { mode, files, counts, lines, skipped, truncated } = this;
    return { mode, files, counts, lines, skipped, truncated };
  }
}

/** The `grep` tool. */
export const grepTool: Tool<GrepInput, GrepOutput, "grep"> = defineTool<
  GrepInput,
  GrepOutput,
  "grep"
>({
  id: "filesystem/grep",
  name: "grep",
  title: "Search file contents",
  description:
    "Search file contents with a regular expression (RE2 syntax, linear time). Walks `path` " +
    `(default: the working directory), honouring .gitignore, skipping .git/, binary files and files over ${MAX_FILE_SIZE} ` +
    "(all counted). Modes: files_with_matches (default), content (path:line:text, optional context lines), " +
    `count. Stops at max_results (default 200). A pattern is at most ${MAX_PATTERN_LENGTH} ` +
    `characters and expands to at most ${MAX_PATTERN_PROGRAM} items once its counted ` +
    "repetitions ({n}) are multiplied out, a Unicode class such as \\pL counting as 100.",
  risk: "read",
  input: GrepSchema,
  output: GrepOutputSchema,
  effects: (input, session) => readEffects(session, input.path),
  async execute(input, session, call) {
    const caseInsensitive = input.case_insensitive ?? false;
    // Checked first: a bad pattern or glob is invalid_input whatever the path.
    compileMatcher(input.pattern, { caseInsensitive });
    globFilter(input.glob);
    const start = await readStart(session, input.path);
    const out = new Collector(input.mode ?? "files_with_matches", input.max_results ?? 200);
    const search: TreeSearch = {
      request: {
        pattern: input.pattern,
        caseInsensitive,
        mode: out.mode,
        context: input.context ?? 0,
        maxBytes: GREP_MAX_FILE_BYTES,
      },
      ...(input.glob === undefined ? {} : { glob: input.glob }),
      ignore: await ignoreStateAt(session, start, call.signal),
      limit: out.max,
    };
    search: for await (const hits of session.filesystem.searchTree(start, search, call.signal)) {
      for (const hit of hits) if (out.take(hit)) break search;
    }
    return { data: out.output() };
  },
  toText(output) {
    let body: string[];
    if (output.mode === "files_with_matches") body = [...output.files];
    else if (output.mode === "count") body = output.counts.map((c) => `${c.path}:${c.count}`);
    else {
      body = [];
      let previous: GrepLine | undefined;
      for (const line of output.lines) {
        if (
          previous !== undefined && (previous.path !== line.path || previous.line + 1 !== line.line)
        ) body.push("--");
        body.push(
          `${line.path}${line.context ? "-" : ":"}${line.line}${
            line.context ? "-" : ":"
          }${line.text}`,
        );
        previous = line;
      }
    }
    const notes: string[] = [];
    if (output.truncated) {
      notes.push("[Stopped at max_results; more matches may exist. Narrow the search.]");
    }
    const { too_large, binary, unreadable } = output.skipped;
    if (too_large + binary + unreadable > 0) {
      notes.push(
        `[Skipped files: ${too_large} over ${MAX_FILE_SIZE}, ${binary} binary, ${unreadable} unreadable.]`,
      );
    }
    let text = body.length === 0 ? "No matches." : body.join("\n");
    const cut = cutUtf8(text, GREP_OUTPUT_BYTES);
    if (cut.cut) {
      text = `${
        cut.text.slice(0, cut.text.lastIndexOf("\n"))
      }\n[Output cut at 256 KiB; narrow the search.]`;
    }
    return [text, ...notes].join("\n");
  },
});
