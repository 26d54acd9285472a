/**
 * `read`: a text file's lines with line numbers, streamed so that `offset`
 * and `limit` work on a file of any size without loading it.
 *
 * @module
 */
import * as v from "valibot";
import { defineTool } from "../contract/tool.ts";
import type { Tool } from "../contract/tool.ts";
import type { SameType } from "../contract/schema.ts";
import { ToolError } from "../errors.ts";
import {
  BINARY_SNIFF_BYTES,
  byteLength,
  cutUtf8,
  MAX_TEXT_BYTES,
  numberedLine,
} from "./shared/text.ts";
import { readEffects, readStart } from "./shared/reads.ts";
import { optionalCount } from "./shared/inputs.ts";

const ReadSchema = v.strictObject({
  path: v.pipe(
    v.string(),
    v.description("File to read, relative to the working directory or absolute."),
  ),
  offset: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.description("First line to return, 0-based (default 0)."),
    ),
  ),
  limit: optionalCount("Most lines to return (1–2000)."),
});

/** The input of `read`. */
export interface ReadInput {
  /** File to read. */
  path: string;
  /** First line, 0-based. */
  offset?: number;
  /** Most lines (1–2000). */
  limit?: number;
}

// The exported type is proven equal to what the schema produces.
const _inputMatchesSchema: SameType<ReadInput, v.InferOutput<typeof ReadSchema>> = true;

/** The structured output of `read`. */
export interface ReadOutput {
  /** The file, relative to the working directory. */
  readonly path: string;
  /** The first line returned (0-based). */
  readonly offset: number;
  /** The returned lines, without their numbers. */
  readonly lines: readonly string[];
  /** Where to continue, or `null` when the end of the file was reached. */
  readonly nextOffset: number | null;
  /** Why the output stopped before the end: the `limit`, the 1 MiB cap, or not at all. */
  readonly stoppedBy: "limit" | "byte_cap" | null;
  /** Lines in the file, when the read reached its end. */
  readonly totalLines: number | null;
}

const ReadOutputSchema = v.pipe(
  v.strictObject({
    path: v.pipe(v.string(), v.description("The file, relative to the working directory.")),
    offset: v.pipe(v.number(), v.integer(), v.description("The first line returned (0-based).")),
    lines: v.pipe(
      v.array(v.string()),
      v.readonly(),
      v.description("The returned lines, without their numbers."),
    ),
    nextOffset: v.pipe(
      v.nullable(v.pipe(v.number(), v.integer())),
      v.description("Where to continue, or null when the end of the file was reached."),
    ),
    stoppedBy: v.pipe(
      v.nullable(v.picklist(["limit", "byte_cap"])),
      v.description("Why the output stopped before the end, or null."),
    ),
    totalLines: v.pipe(
      v.nullable(v.pipe(v.number(), v.integer())),
      v.description("Lines in the file, when the read reached its end."),
    ),
  }),
  v.readonly(),
);

// The exported type is proven equal to what the output schema describes.
const _outputMatchesSchema: SameType<ReadOutput, v.InferOutput<typeof ReadOutputSchema>> = true;

/** The `read` tool. */
export const readTool: Tool<ReadInput, ReadOutput, "read"> = defineTool<
  ReadInput,
  ReadOutput,
  "read"
>({
  id: "filesystem/read",
  name: "read",
  title: "Read file",
  description:
    "Read a UTF-8 text file. Returns numbered lines (1-based numbers in the text; `offset` is " +
    "0-based). Use offset and limit to page through large files; output is capped at 1 MiB and says where " +
    "to continue. Binary files, invalid UTF-8 and directories are reported as errors (use list for directories).",
  risk: "read",
  input: ReadSchema,
  output: ReadOutputSchema,
  effects: (input, session) => readEffects(session, input.path),
  async execute(input, session, call) {
    const path = await readStart(session, input.path);
    const info = await session.filesystem.stat(path);
    if (info.kind === "directory") {
      throw new ToolError(
        "is_directory",
        `${path.display} is a directory; use list to see its entries.`,
      );
    }
    if (info.kind !== "file") {
      throw new ToolError(
        "not_a_regular_file",
        `${path.display} is not a regular file; it is not opened.`,
      );
    }
    const offset = input.offset ?? 0;
    const limit = input.limit ?? Number.POSITIVE_INFINITY;
    const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    const lines: string[] = [];
    let outputBytes = 0;
    let lineIndex = 0;
    let partial = "";
    let sniffed = 0;
    let stoppedBy: ReadOutput["stoppedBy"] = null;

    // Returns false once no more lines are wanted.
    const take = (line: string): boolean => {
      if (lineIndex >= offset) {
        if (lines.length >= limit) {
          stoppedBy = "limit";
          return false;
        }
        const cost = byteLength(line) + 8;
        if (outputBytes + cost > MAX_TEXT_BYTES) {
          if (lines.length === 0) {
            // A single line over the cap is cut, so paging always moves on.
            lines.push(cutUtf8(line, MAX_TEXT_BYTES - 64).text + " [line cut at 1 MiB]");
            lineIndex++;
          }
          stoppedBy = "byte_cap";
          return false;
        }
        outputBytes += cost;
        lines.push(line);
      }
      lineIndex++;
      return true;
    };

    let reachedEnd = true;
    try {
      outer: for await (
        const chunk of session.filesystem.readChunks(path, { signal: call.signal })
      ) {
        if (sniffed < BINARY_SNIFF_BYTES) {
          if (chunk.subarray(0, BINARY_SNIFF_BYTES - sniffed).includes(0)) {
            throw new ToolError(
              "binary_file",
              `${path.display} is a binary file (it holds a NUL byte).`,
            );
          }
          sniffed += chunk.length;
        }
        const pieces = (partial + decoder.decode(chunk, { stream: true })).split("\n");
        partial = pieces.pop()!;
        for (const piece of pieces) {
          if (!take(piece)) {
            reachedEnd = false;
            break outer;
          }
        }
        if (partial.length > MAX_TEXT_BYTES) {
          // An endless line: skip it when before the offset, else cut it.
          if (lineIndex < offset) partial = "";
          else {
            take(partial);
            reachedEnd = false;
            break;
          }
        }
      }
      if (reachedEnd) {
        partial += decoder.decode();
        if (partial !== "" && !take(partial)) reachedEnd = false;
      }
    } catch (error) {
      if (error instanceof TypeError && /encoded data|decode/i.test(error.message)) {
        throw new ToolError(
          "invalid_utf8",
          `${path.display} is not valid UTF-8 (near line ${
            lineIndex + 1
          }); it cannot be shown as text.`,
        );
      }
      throw error;
    }
    if (reachedEnd && offset > lineIndex) {
      throw new ToolError(
        "invalid_input",
        `offset ${offset} is past the end of ${path.display}, which has ${lineIndex} lines.`,
      );
    }
    return {
      data: {
        path: path.display,
        offset,
        lines,
        nextOffset: reachedEnd ? null : offset + lines.length,
        stoppedBy: reachedEnd ? null : stoppedBy,
        totalLines: reachedEnd ? lineIndex : null,
      },
    };
  },
  toText(output) {
    if (output.totalLines === 0) return `${output.path} is empty.`;
    const body = output.lines.map((line, i) => numberedLine(output.offset + i, line)).join("\n");
    if (output.nextOffset === null) return body;
    const why = output.stoppedBy === "byte_cap"
      ? "Output reached the 1 MiB cap"
      : "More lines follow";
    return `${body}\n[${why}; continue with offset=${output.nextOffset}.]`;
  },
});
