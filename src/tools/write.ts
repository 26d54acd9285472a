/**
 * `write`: a whole text file, created or overwritten atomically, with a
 * `file_change` artifact that can undo it.
 *
 * @module
 */
import * as v from "valibot";
import { defineTool } from "../contract/tool.ts";
import type { Tool } from "../contract/tool.ts";
import type { SameType } from "../contract/schema.ts";
import { ToolError } from "../errors.ts";
import { withPathLock } from "../path/mod.ts";
import { byteLength, MAX_TEXT_BYTES } from "./shared/text.ts";
import { createParents, readReplaceableText } from "./shared/files.ts";
import { fileChange } from "../artifacts/file_change.ts";

const WriteSchema = v.strictObject({
  path: v.pipe(
    v.string(),
    v.description("File to write, relative to the working directory or absolute."),
  ),
  content: v.pipe(
    v.string(),
    v.description("The whole new content of the file (UTF-8 text, at most 1 MiB)."),
  ),
});

/** The input of `write`. */
export interface WriteInput {
  /** File to write. */
  path: string;
  /** The whole new content. */
  content: string;
}

// The exported type is proven equal to what the schema produces.
const _inputMatchesSchema: SameType<WriteInput, v.InferOutput<typeof WriteSchema>> = true;

/** The structured output of `write`. */
export interface WriteOutput {
  /** The file, relative to the working directory. */
  readonly path: string;
  /** Whether the file was created, overwritten, or already held exactly this content. */
  readonly status: "created" | "overwritten" | "unchanged";
  /** Bytes written. */
  readonly bytes: number;
}

const WriteOutputSchema = v.pipe(
  v.strictObject({
    path: v.pipe(v.string(), v.description("The file, relative to the working directory.")),
    status: v.pipe(
      v.picklist(["created", "overwritten", "unchanged"]),
      v.description("Whether the file was created, overwritten, or already held this content."),
    ),
    bytes: v.pipe(v.number(), v.integer(), v.description("Bytes written.")),
  }),
  v.readonly(),
);

// The exported type is proven equal to what the output schema describes.
const _outputMatchesSchema: SameType<WriteOutput, v.InferOutput<typeof WriteOutputSchema>> = true;

/** The `write` tool. */
export const writeTool: Tool<WriteInput, WriteOutput, "write"> = defineTool<
  WriteInput,
  WriteOutput,
  "write"
>({
  id: "filesystem/write",
  name: "write",
  title: "Write file",
  description:
    "Write a whole UTF-8 text file (at most 1 MiB), creating it and its missing parent " +
    "directories, or replacing an existing text file. For a local change to an existing file prefer edit.",
  risk: "write",
  input: WriteSchema,
  output: WriteOutputSchema,
  async effects(input, session) {
    const path = await session.resolvePath(input.path, "write", "may_create");
    return [{ kind: "write", path: path.display, root: path.rootKind }];
  },
  async execute(input, session) {
    const bytes = byteLength(input.content);
    if (bytes > MAX_TEXT_BYTES) {
      throw new ToolError("too_large", `content has ${bytes} bytes; write takes at most 1 MiB.`);
    }
    const located = await session.resolvePath(input.path, "write", "may_create");
    return await withPathLock(located, async () => {
      // Resolved again under the lock: whether the file exists is not read in the moment of
      // another call's commit, which moves the file aside while it puts its version in place.
      const path = await session.resolvePath(input.path, "write", "may_create");
      let before: string | null = null;
      let read: Uint8Array | null = null;
      if (path.existed) {
        const info = await session.filesystem.stat(path);
        if (info.kind === "directory") {
          throw new ToolError("is_directory", `${path.display} is a directory.`);
        }
        if (info.kind !== "file") {
          throw new ToolError(
            "not_a_regular_file",
            `${path.display} is not a regular file; it is not replaced.`,
          );
        }
        ({ text: before, bytes: read } = await readReplaceableText(session, path));
      } else {
        await createParents(session, path);
      }
      const data = { path: path.display, bytes };
      if (before === input.content) return { data: { ...data, status: "unchanged" as const } };
      // Only over the version read, or where nothing is: a newer one is kept (`stale_edit`).
      await session.filesystem.writeFileAtomic(path, new TextEncoder().encode(input.content), {
        replaces: read,
      });
      const artifact = await fileChange(path.display, before, input.content);
      return {
        data: { ...data, status: before === null ? "created" as const : "overwritten" as const },
        artifacts: [artifact],
      };
    });
  },
  toText(output) {
    if (output.status === "unchanged") {
      return `${output.path} already held this content; nothing changed.`;
    }
    return `${
      output.status === "created" ? "Created" : "Overwrote"
    } ${output.path} (${output.bytes} bytes).`;
  },
});
