/**
 * `grep`: search file contents with a linear-time regular expression,
 * streaming the walk, reading a few files at once, and stopping at
 * `max_results`. Over-size, binary and unreadable files are counted.
 *
 * @module
 */
import * as v from "valibot";
import picomatch from "picomatch";
import { defineTool } from "../contract/tool.ts";
import type { Tool } from "../contract/tool.ts";
import type { SameType } from "../contract/schema.ts";
import { ToolError } from "../contract/errors.ts";
import type { ToolSessionContext } from "../contract/context.ts";
import type { CheckedPath } from "../path/mod.ts";
import { walk } from "./shared/walk.ts";
import { compileMatcher } from "../search/matcher.ts";
import type { LineMatcher } from "../search/matcher.ts";
import { cutUtf8 } from "./shared/text.ts";
import { scanBytes } from "../search/scan.ts";
import type { ScanRequest, ScanResult } from "../search/scan.ts";

/** Files larger than this are skipped and counted as `too_large`. */
export const GREP_MAX_FILE_BYTES: number = 32 * 1024 * 1024;
/** The whole text output stays under this many bytes. */
export const GREP_OUTPUT_BYTES: number = 256 * 1024;
/** Files read at once while scanning file by file. */
const READ_AHEAD = 8;
/** Files scanned one by one before a backend's batch scanner takes over. */
const SINGLE_FILES_FIRST = 64;
/** Files per batch, and batches in flight, for a backend's batch scanner. */
const BATCH_FILES = 256;
const BATCHES_AHEAD = 4;

const GrepSchema = v.strictObject({
  pattern: v.pipe(
    v.string(),
    v.minLength(1),
    v.description("Regular expression in RE2 syntax (as ripgrep)."),
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
      v.description(
        "Only files matching this glob: without a slash it matches file names at any depth " +
          "(`*.ts`); with one, paths relative to the working directory (`src/**/*.ts`). A leading ! excludes.",
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
  max_results: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(2000),
      v.description("Most results: lines in content mode, files otherwise (default 200)."),
    ),
  ),
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
  /** Larger than the 32 MiB cap. */
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

interface FileResult extends ScanResult {
  readonly path: string;
}

/** Scans one file through the backend's plain read. */
async function scanFile(
  session: ToolSessionContext,
  path: CheckedPath,
  matcher: LineMatcher,
  request: ScanRequest,
  signal: AbortSignal,
): Promise<FileResult> {
  let bytes: Uint8Array;
  try {
    bytes = await session.filesystem.readFile(path, { maxBytes: request.maxBytes, signal });
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof ToolError && error.code === "too_large") {
      return { path: path.display, skip: "too_large", matches: 0, lines: [] };
    }
    if (error instanceof ToolError && error.code !== "backend_failure") {
      return { path: path.display, skip: "unreadable", matches: 0, lines: [] };
    }
    throw error;
  }
  return { path: path.display, ...scanBytes(bytes, matcher, request) };
}

function globFilter(glob: string | undefined): (display: string) => boolean {
  if (glob === undefined) return () => true;
  const negated = glob.startsWith("!");
  const pattern = negated ? glob.slice(1) : glob;
  let test: (path: string) => boolean;
  try {
    test = picomatch(pattern, { dot: true, basename: !pattern.includes("/") });
  } catch (error) {
    throw new ToolError(
      "invalid_input",
      `glob is not a valid pattern: ${(error as Error).message}`,
    );
  }
  return negated ? (path) => !test(path) : test;
}

/** The `grep` tool. */
export const grepTool: Tool<GrepInput, GrepOutput> = defineTool<GrepInput, GrepOutput>({
  id: "filesystem/grep",
  name: "grep",
  description:
    "Search file contents with a regular expression (RE2 syntax, linear time). Walks `path` " +
    "(default: the working directory), honouring .gitignore, skipping .git/, binary files and files over 32 MiB " +
    "(all counted). Modes: files_with_matches (default), content (path:line:text, optional context lines), " +
    "count. Stops at max_results (default 200).",
  risk: "read",
  input: GrepSchema,
  async effects(input, session) {
    const path = await session.resolvePath(input.path ?? ".", "read", "must_exist");
    return [{ kind: "read", path: path.display, root: path.rootKind }];
  },
  async execute(input, session, call) {
    const matcher = compileMatcher(input.pattern, input.case_insensitive ?? false);
    const accept = globFilter(input.glob);
    const start = await session.resolvePath(input.path ?? ".", "read", "must_exist");
    const mode = input.mode ?? "files_with_matches";
    const max = input.max_results ?? 200;
    const context = input.context ?? 0;
    const skipped = { too_large: 0, binary: 0, unreadable: 0 };
    const files: string[] = [];
    const counts: { path: string; count: number }[] = [];
    const lines: GrepLine[] = [];
    let results = 0;
    let truncated = false;

    const take = (result: FileResult): void => {
      if (result.skip !== undefined) {
        skipped[result.skip]++;
        return;
      }
      if (result.matches === 0 || truncated) return;
      if (mode === "files_with_matches") files.push(result.path);
      else if (mode === "count") counts.push({ path: result.path, count: result.matches });
      else {
        for (const line of result.lines) {
          if (!line.context && results === max) {
            truncated = true;
            break;
          }
          lines.push({ path: result.path, ...line });
          if (!line.context) results++;
        }
        if (results === max) truncated = true;
        return;
      }
      results++;
      if (results === max) truncated = true;
    };

    // Results are taken in walk order. The first files are scanned one by
    // one, up to READ_AHEAD ahead, so a small max_results stops at once; a
    // large search then goes to the backend's batch scanner, if it has one.
    const request: ScanRequest = {
      pattern: input.pattern,
      caseInsensitive: input.case_insensitive ?? false,
      mode,
      context,
      maxBytes: GREP_MAX_FILE_BYTES,
    };
    let batchScan = session.filesystem.scanFiles?.bind(session.filesystem);
    const pending: Promise<FileResult[]>[] = [];
    let batch: CheckedPath[] = [];
    let queued = 0;
    const enqueue = (job: Promise<FileResult[]>) => {
      // Marked handled at once: a job that fails while queued is still awaited below.
      job.catch(() => {});
      pending.push(job);
    };
    const flush = () => {
      if (batch.length === 0) return;
      const paths = batch;
      batch = [];
      if (batchScan === undefined) {
        enqueue(
          Promise.all(paths.map((path) => scanFile(session, path, matcher, request, call.signal))),
        );
        return;
      }
      enqueue(
        batchScan(paths, request, call.signal).then(
          (results) => results.map((result, i) => ({ ...result, path: paths[i].display })),
          (error) => {
            if (call.signal.aborted) throw error;
            // The batch scanner could not run (e.g. the runtime may not read its worker
            // module): this batch and the rest are scanned file by file instead.
            batchScan = undefined;
            return Promise.all(
              paths.map((path) => scanFile(session, path, matcher, request, call.signal)),
            );
          },
        ),
      );
    };
    const takeOldest = async () => {
      for (const result of await pending.shift()!) take(result);
    };
    try {
      for await (const entry of walk(session, start, { signal: call.signal, directories: false })) {
        if (!accept(entry.path.display)) continue;
        if (batchScan !== undefined && ++queued > SINGLE_FILES_FIRST) {
          batch.push(entry.path);
          if (batch.length === BATCH_FILES) flush();
        } else {
          enqueue(
            scanFile(session, entry.path, matcher, request, call.signal).then((result) => [result]),
          );
        }
        while (pending.length >= (queued > SINGLE_FILES_FIRST ? BATCHES_AHEAD : READ_AHEAD)) {
          await takeOldest();
        }
        if (truncated) break;
      }
      if (!truncated) flush();
      while (pending.length > 0 && !truncated) await takeOldest();
    } finally {
      // Reads already in flight are awaited, never left floating.
      await Promise.allSettled(pending);
    }
    return { data: { mode, files, counts, lines, skipped, truncated } };
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
        `[Skipped files: ${too_large} over 32 MiB, ${binary} binary, ${unreadable} unreadable.]`,
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
