/**
 * `grep`: search file contents with a linear-time regular expression,
 * streaming the walk, reading a few files at once, and stopping at
 * `max_results`. Over-size, binary and unreadable files are counted.
 *
 * @module
 */
import * as v from "valibot";
import { defineTool } from "../contract/tool.ts";
import type { Tool } from "../contract/tool.ts";
import type { SameType } from "../contract/schema.ts";
import { ToolError } from "../contract/errors.ts";
import type { ToolSessionContext } from "../contract/context.ts";
import type { CheckedPath } from "../path/mod.ts";
import { ignoreStateAt, takeFromTree, walk } from "./shared/walk.ts";
import type { TreeSearch } from "../backends/filesystem.ts";
import { compileMatcher } from "../search/matcher.ts";
import type { LineMatcher } from "../search/matcher.ts";
import { cutUtf8 } from "./shared/text.ts";
import { scanBytes } from "../search/scan.ts";
import { globFilter } from "../search/glob_filter.ts";
import type { ScanMode, ScanRequest, ScanResult } from "../search/scan.ts";
import type { IgnoreState } from "../search/walk.ts";

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

/** One grep call's inputs, as the search phases need them. */
interface Search {
  readonly session: ToolSessionContext;
  readonly start: CheckedPath;
  readonly matcher: LineMatcher;
  readonly accept: (display: string) => boolean;
  readonly glob: string | undefined;
  readonly signal: AbortSignal;
  readonly request: ScanRequest;
  /** The ignore rules in force at the start, computed once for the call. */
  readonly ignore: IgnoreState | null;
}

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

  take(result: FileResult): void {
    if (result.skip !== undefined) {
      this.skipped[result.skip]++;
      return;
    }
    if (result.matches === 0 || this.truncated) return;
    if (this.mode === "files_with_matches") this.files.push(result.path);
    else if (this.mode === "count") this.counts.push({ path: result.path, count: result.matches });
    else {
      for (const line of result.lines) {
        if (!line.context && this.results === this.max) {
          this.truncated = true;
          break;
        }
        this.lines.push({ path: result.path, ...line });
        if (!line.context) this.results++;
      }
      if (this.results === this.max) this.truncated = true;
      return;
    }
    this.results++;
    if (this.results === this.max) this.truncated = true;
  }

  output(): GrepOutput {
    const { mode, files, counts, lines, skipped, truncated } = this;
    return { mode, files, counts, lines, skipped, truncated };
  }
}

/**
 * Walks and scans on this thread, taking results in walk order. The first
 * files are scanned one by one, up to READ_AHEAD ahead, so a small
 * max_results stops at once. A larger search then goes to the backend: when
 * `handOff` is set and the backend has a tree search, this returns the last
 * file searched here, for the tree search to go on after it; otherwise the
 * walk goes on here, with the backend's batch scanner if it has one. Returns
 * `null` when the search is over.
 */
async function searchHere(
  search: Search,
  out: Collector,
  handOff: boolean,
): Promise<string | null> {
  const { session, start, matcher, request, signal } = search;
  const treeSearch = handOff && session.filesystem.searchTree !== undefined;
  let batchScan = session.filesystem.scanFiles?.bind(session.filesystem);
  const pending: Promise<FileResult[]>[] = [];
  let batch: CheckedPath[] = [];
  let queued = 0;
  let last: string | null = null;
  let handedOff = false;
  const enqueue = (job: Promise<FileResult[]>) => {
    // Marked handled at once: a job that fails while queued is still awaited below.
    job.catch(() => {});
    pending.push(job);
  };
  const scanHere = (paths: CheckedPath[]) =>
    Promise.all(paths.map((path) => scanFile(session, path, matcher, request, signal)));
  const flush = () => {
    if (batch.length === 0) return;
    const paths = batch;
    batch = [];
    if (batchScan === undefined) {
      enqueue(scanHere(paths));
      return;
    }
    enqueue(
      batchScan(paths, request, signal).then(
        (results) => results.map((result, i) => ({ ...result, path: paths[i].display })),
        (error) => {
          if (signal.aborted) throw error;
          // The batch scanner could not run (e.g. the runtime may not read its worker
          // module): this batch and the rest are scanned file by file instead.
          batchScan = undefined;
          return scanHere(paths);
        },
      ),
    );
  };
  const takeOldest = async () => {
    for (const result of await pending.shift()!) out.take(result);
  };
  try {
    for await (const entry of walk(session, start, search.ignore, signal)) {
      if (entry.kind !== "file" || !search.accept(entry.display)) continue;
      if (++queued > SINGLE_FILES_FIRST) {
        if (treeSearch) {
          handedOff = true;
          break;
        }
        if (batchScan !== undefined) {
          batch.push(entry.path);
          if (batch.length === BATCH_FILES) flush();
        } else enqueue(scanHere([entry.path]));
      } else enqueue(scanHere([entry.path]));
      last = entry.path.display;
      const ahead = queued > SINGLE_FILES_FIRST && batchScan !== undefined
        ? BATCHES_AHEAD
        : READ_AHEAD;
      while (pending.length >= ahead) await takeOldest();
      if (out.truncated) break;
    }
    if (!out.truncated) flush();
    while (pending.length > 0 && !out.truncated) await takeOldest();
  } finally {
    // Reads already in flight are awaited, never left floating.
    await Promise.allSettled(pending);
  }
  return handedOff && !out.truncated ? last : null;
}

/**
 * Goes on with the backend's tree search after the file `after` (in walk
 * order). Returns `false`, having taken nothing, when it could not run.
 */
async function searchTreeAfter(search: Search, out: Collector, after: string): Promise<boolean> {
  const { session, start, signal } = search;
  const tree: TreeSearch = {
    ignore: search.ignore,
    after,
    limit: out.max - out.results,
    request: search.request,
    ...(search.glob === undefined ? {} : { glob: search.glob }),
  };
  return await takeFromTree(
    () => session.filesystem.searchTree!(start, tree, signal),
    signal,
    (hit) => {
      out.take({ path: hit.display, ...hit.result });
      return out.truncated;
    },
  );
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
    const matcher = compileMatcher(input.pattern, {
      caseInsensitive: input.case_insensitive ?? false,
    });
    const accept = globFilter(input.glob);
    const start = await session.resolvePath(input.path ?? ".", "read", "must_exist");
    const search: Search = {
      session,
      start,
      matcher,
      accept,
      glob: input.glob,
      signal: call.signal,
      ignore: await ignoreStateAt(session, start, call.signal),
      request: {
        pattern: input.pattern,
        caseInsensitive: input.case_insensitive ?? false,
        mode: input.mode ?? "files_with_matches",
        context: input.context ?? 0,
        maxBytes: GREP_MAX_FILE_BYTES,
      },
    };
    const max = input.max_results ?? 200;
    const out = new Collector(search.request.mode, max);
    const handOff = await searchHere(search, out, true);
    if (handOff === null) return { data: out.output() };
    // A large search goes on off this thread, after the files already searched.
    if (await searchTreeAfter(search, out, handOff)) return { data: out.output() };
    // The backend's tree search could not run: the whole search runs here instead.
    const here = new Collector(search.request.mode, max);
    await searchHere(search, here, false);
    return { data: here.output() };
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
