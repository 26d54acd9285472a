/**
 * `edit`: exact replacement of one unique `old_text`, under a per-path lock
 * and committed by a compare-and-swap against the bytes read, so a version
 * written meanwhile (by this process or any other) is never overwritten.
 *
 * @module
 */
import * as v from "valibot";
import { defineTool } from "../../contract/tool.ts";
import type { Tool } from "../../contract/tool.ts";
import type { SameType } from "../../contract/schema.ts";
import { ToolError } from "../../errors.ts";
import { withPathLock } from "../../path/mod.ts";
import { byteLength, MAX_TEXT_BYTES } from "../shared/text.ts";
import { createParents, readReplaceableText } from "../shared/files.ts";
import { fileChange } from "../../artifacts/file_change.ts";
import { notFoundMessage, notUniqueMessage } from "./messages.ts";

const EditSchema = v.strictObject({
  path: v.pipe(
    v.string(),
    v.description("File to edit, relative to the working directory or absolute."),
  ),
  old_text: v.pipe(
    v.string(),
    v.description(
      "Exact text to replace; it must occur exactly once. Empty only to create a new file.",
    ),
  ),
  new_text: v.pipe(v.string(), v.description("The replacement text.")),
});

/** The input of `edit`. */
export interface EditInput {
  /** File to edit. */
  path: string;
  /** Exact text to replace (empty: create a new file). */
  old_text: string;
  /** The replacement. */
  new_text: string;
}

// The exported type is proven equal to what the schema produces.
const _inputMatchesSchema: SameType<EditInput, v.InferOutput<typeof EditSchema>> = true;

/** The structured output of `edit`. */
export interface EditOutput {
  /** The file, relative to the working directory. */
  readonly path: string;
  /** Whether the edit created the file or replaced text in it. */
  readonly status: "created" | "edited";
  /** The 1-based line where the replacement starts. */
  readonly line: number;
}

const EditOutputSchema = v.pipe(
  v.strictObject({
    path: v.pipe(v.string(), v.description("The file, relative to the working directory.")),
    status: v.pipe(
      v.picklist(["created", "edited"]),
      v.description("Whether the edit created the file or replaced text in it."),
    ),
    line: v.pipe(
      v.number(),
      v.integer(),
      v.description("The 1-based line where the replacement starts."),
    ),
  }),
  v.readonly(),
);

// The exported type is proven equal to what the output schema describes.
const _outputMatchesSchema: SameType<EditOutput, v.InferOutput<typeof EditOutputSchema>> = true;

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) found.push(i);
  return found;
}

/** The `edit` tool. */
export const editTool: Tool<EditInput, EditOutput, "edit"> = defineTool<
  EditInput,
  EditOutput,
  "edit"
>({
  id: "filesystem/edit",
  name: "edit",
  title: "Edit file",
  description:
    "Replace one exact occurrence of old_text with new_text in a UTF-8 text file. old_text must " +
    "occur exactly once (include surrounding lines to make it unique) and differ from new_text. With an empty " +
    "old_text, creates a new file holding new_text. Line endings of CRLF files are kept. When " +
    "old_text is not found, the error quotes the closest current text exactly (and says where its " +
    "whitespace differs), ready to copy as old_text; when it is not unique, the error lists each " +
    "occurrence's line with context.",
  risk: "write",
  input: EditSchema,
  output: EditOutputSchema,
  async effects(input, session) {
    const intent = input.old_text === "" ? "may_create" : "must_exist";
    // Looked up between other calls' commits to the same file, each of which moves it aside for
    // an instant: the lock is waited for, not held past the lookup.
    const located = await session.resolvePath(input.path, "write", "may_create");
    const path = await withPathLock(
      located,
      () => session.resolvePath(input.path, "write", intent),
    );
    return [{ kind: "write", path: path.display, root: path.rootKind }];
  },
  async execute(input, session) {
    if (input.old_text === input.new_text) {
      throw new ToolError(
        "no_change",
        "old_text and new_text are the same; the edit would change nothing.",
      );
    }
    // The lock is taken on where the path leads, and the path resolved again under it: what it
    // finds (whether the file exists) is not a moment of another call's commit, which moves the
    // file aside while it puts the new version in place.
    const located = await session.resolvePath(input.path, "write", "may_create");
    if (input.old_text === "") {
      return await withPathLock(located, async () => {
        const path = await session.resolvePath(input.path, "write", "may_create");
        if (path.existed) {
          throw new ToolError(
            "already_exists",
            `${path.display} exists; an empty old_text only creates new files. Give the text to replace, or use write.`,
          );
        }
        if (byteLength(input.new_text) > MAX_TEXT_BYTES) {
          throw new ToolError("too_large", "new_text is larger than 1 MiB.");
        }
        await createParents(session, path);
        await session.filesystem.writeFileAtomic(path, new TextEncoder().encode(input.new_text), {
          replaces: null,
        });
        return {
          data: { path: path.display, status: "created" as const, line: 1 },
          artifacts: [await fileChange(path.display, null, input.new_text)],
        };
      });
    }
    return await withPathLock(located, async () => {
      const path = await session.resolvePath(input.path, "write", "must_exist");
      const { text: before, bytes: read } = await readReplaceableText(session, path);
      // A CRLF file is matched and edited in CRLF, whatever line ends the model sent.
      const crlf = before.includes("\r\n") && !input.old_text.includes("\r");
      const oldText = crlf ? input.old_text.replaceAll("\n", "\r\n") : input.old_text;
      const newText = crlf ? input.new_text.replaceAll("\n", "\r\n") : input.new_text;
      const found = occurrences(before, oldText);
      if (found.length === 0) {
        throw new ToolError("old_text_not_found", notFoundMessage(path.display, before, oldText));
      }
      if (found.length > 1) {
        throw new ToolError(
          "old_text_not_unique",
          notUniqueMessage(path.display, before, oldText, found),
        );
      }
      const at = found[0];
      const after = before.slice(0, at) + newText + before.slice(at + oldText.length);
      if (byteLength(after) > MAX_TEXT_BYTES) {
        throw new ToolError("too_large", "The edited file would exceed 1 MiB.");
      }
      // A compare-and-swap against the bytes read: a version written by anyone since is kept.
      await session.filesystem.writeFileAtomic(path, new TextEncoder().encode(after), {
        replaces: read,
      });
      return {
        data: { path: path.display, status: "edited" as const, line: lineAt(before, at) },
        artifacts: [await fileChange(path.display, before, after)],
      };
    });
  },
  toText(output) {
    return output.status === "created"
      ? `Created ${output.path}.`
      : `Edited ${output.path} (replacement starts at line ${output.line}).`;
  },
});
