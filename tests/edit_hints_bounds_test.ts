/**
 * edit's near-miss messages on repetitive files and long old_text: the
 * message stays within a few KB however many lines differ or match, and the
 * count of places that match except for whitespace is told.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { finalizeToolset, type ToolResult } from "../mod.ts";
import { memorySession } from "./helpers.ts";

/** Quoted text (4 KiB at most) plus the notes around it. */
const MESSAGE_BOUND = 8 * 1024;

async function editFails(file: string, oldText: string): Promise<ToolResult> {
  const session = await memorySession("acceptEdits", { "repo/f.txt": file });
  const toolset = finalizeToolset({ session });
  const name: string = "edit";
  const result = await toolset.call({
    name,
    input: { path: "f.txt", old_text: oldText, new_text: "changed" },
    callId: "1",
  });
  assert.equal(result.ok, false);
  assert.equal(!result.ok && result.error.code, "old_text_not_found");
  return result;
}

test("edit hints: whitespace notes on thousands of lines name a bounded number of line ranges", async () => {
  const file = Array.from({ length: 4000 }, (_, i) => (i % 2 ? "}" : "{")).join("\n");
  // Every line differs in whitespace, alternately at its start and its end, and the last in text.
  const oldText = Array.from({ length: 3000 }, (_, i) => (i % 2 ? " }" : "{ ")).join("\n") +
    "\nQ";
  const result = await editFails(file, oldText);
  const bytes = new TextEncoder().encode(result.output).length;
  assert.ok(bytes <= MESSAGE_BOUND, `${bytes} bytes`);
  assert.match(result.output, /^- lines 1, 3, 5, .*, and \d+ more lines: old_text has a space/m);
  assert.match(result.output, /The closest text is lines 1–3001;/);
});

test("edit hints: the lines that differ beyond whitespace are named within the bound", async () => {
  const lines = Array.from({ length: 3000 }, (_, i) => `entry ${i} holds its value here`);
  const stale = lines.map((line, i) => (i % 2 ? line.replace("value", "valve") : line));
  const result = await editFails(lines.join("\n"), stale.join("\n"));
  const bytes = new TextEncoder().encode(result.output).length;
  assert.ok(bytes <= MESSAGE_BOUND, `${bytes} bytes`);
  assert.match(
    result.output,
    /differs from old_text beyond whitespace at lines 2, 4, 6, .*, and \d+ more lines \(/,
  );
});

test("edit hints: thousands of places matching except for whitespace are counted, the closest shown", async () => {
  const result = await editFails("{\n".repeat(5000), "{ \n".repeat(500));
  const bytes = new TextEncoder().encode(result.output).length;
  assert.ok(bytes <= MESSAGE_BOUND, `${bytes} bytes`);
  assert.match(result.output, /places match it except for whitespace \(the closest 3 of the first/);
  assert.match(result.output, /\b4501 places match\b|\bAt least \d+ places match\b/);
});
