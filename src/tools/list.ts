/**
 * `list`: one directory level, sorted by name, paged with offset and limit.
 *
 * @module
 */
import * as v from "valibot";
import { defineTool } from "../contract/tool.ts";
import type { Tool } from "../contract/tool.ts";
import type { SameType } from "../contract/schema.ts";
import { ToolError } from "../errors.ts";
import type { EntryKind } from "../backends/filesystem.ts";
import { readEffects, readStart } from "./shared/reads.ts";
import { optionalCount } from "./shared/inputs.ts";

const ListSchema = v.strictObject({
  path: v.optional(
    v.pipe(
      v.string(),
      v.description("Directory to list, relative to the working directory (default: it)."),
    ),
  ),
  offset: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.description("First entry, 0-based (default 0)."),
    ),
  ),
  limit: optionalCount("Most entries (default 200)."),
});

/** The input of `list`. */
export interface ListInput {
  /** Directory to list. */
  path?: string;
  /** First entry, 0-based. */
  offset?: number;
  /** Most entries (1–2000). */
  limit?: number;
}

// The exported type is proven equal to what the schema produces.
const _inputMatchesSchema: SameType<ListInput, v.InferOutput<typeof ListSchema>> = true;

/** One listed entry. */
export interface ListEntry {
  /** The entry's name. */
  readonly name: string;
  /** What it is; symbolic links are not followed. */
  readonly kind: EntryKind;
}

/** The structured output of `list`. */
export interface ListOutput {
  /** The directory, relative to the working directory. */
  readonly path: string;
  /** The entries of this page. */
  readonly entries: readonly ListEntry[];
  /** The first entry's index. */
  readonly offset: number;
  /** Entries in the directory. */
  readonly total: number;
  /** Where the next page starts, or `null`. */
  readonly nextOffset: number | null;
}

const ListOutputSchema = v.pipe(
  v.strictObject({
    path: v.pipe(v.string(), v.description("The directory, relative to the working directory.")),
    entries: v.pipe(
      v.array(
        v.pipe(
          v.strictObject({
            name: v.pipe(v.string(), v.description("The entry's name.")),
            kind: v.pipe(
              v.picklist(["file", "directory", "symlink", "other"]),
              v.description("What it is; symbolic links are not followed."),
            ),
          }),
          v.readonly(),
        ),
      ),
      v.readonly(),
      v.description("The entries of this page, sorted by name."),
    ),
    offset: v.pipe(v.number(), v.integer(), v.description("The first entry's index.")),
    total: v.pipe(v.number(), v.integer(), v.description("Entries in the directory.")),
    nextOffset: v.pipe(
      v.nullable(v.pipe(v.number(), v.integer())),
      v.description("Where the next page starts, or null."),
    ),
  }),
  v.readonly(),
);

// The exported type is proven equal to what the output schema describes.
const _outputMatchesSchema: SameType<ListOutput, v.InferOutput<typeof ListOutputSchema>> = true;

const SUFFIX: Record<EntryKind, string> = { file: "", directory: "/", symlink: "@", other: "|" };

/** Byte-wise (code unit) order: stable and locale-free. */
function byName(a: ListEntry, b: ListEntry): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The `list` tool. */
export const listTool: Tool<ListInput, ListOutput, "list"> = defineTool<
  ListInput,
  ListOutput,
  "list"
>({
  id: "filesystem/list",
  name: "list",
  title: "List directory",
  description:
    "List one directory level, sorted by name. Directories end with /, symbolic links with @ " +
    "(not followed), other special files with |. Pages with offset and limit (default 200, max 2000).",
  risk: "read",
  input: ListSchema,
  output: ListOutputSchema,
  effects: (input, session) => readEffects(session, input.path),
  async execute(input, session) {
    const path = await readStart(session, input.path);
    const info = await session.filesystem.stat(path);
    if (info.kind !== "directory") {
      throw new ToolError(
        "not_a_directory",
        `${path.display} is not a directory; use read for files.`,
      );
    }
    const all = (await session.filesystem.readDir(path)).map(({ name, kind }) => ({ name, kind }))
      .sort(byName);
    const offset = input.offset ?? 0;
    const limit = input.limit ?? 200;
    const entries = all.slice(offset, offset + limit);
    const next = offset + entries.length;
    return {
      data: {
        path: path.display,
        entries,
        offset,
        total: all.length,
        nextOffset: next < all.length ? next : null,
      },
    };
  },
  toText(output) {
    if (output.total === 0) return `${output.path} is empty.`;
    if (output.entries.length === 0) {
      return `offset ${output.offset} is past the last entry of ${output.path} (${output.total} entries).`;
    }
    const lines = output.entries.map((e) => e.name + SUFFIX[e.kind]);
    const last = output.offset + output.entries.length;
    const header = `${output.path}: entries ${output.offset + 1}–${last} of ${output.total}`;
    const more = output.nextOffset === null
      ? ""
      : `\n[More entries; continue with offset=${output.nextOffset}.]`;
    return `${header}\n${lines.join("\n")}${more}`;
  },
});
