/**
 * Input as a model may send it, including keys that are special to
 * JavaScript objects: a call means what its JSON says on every runtime, and
 * a key that is not a field is an error, never a way to supply fields.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { defineTool, finalizeToolset, ToolRegistry } from "../mod.ts";
import { memorySession } from "./helpers.ts";

test("input boundary: a __proto__ key is an unknown field, not a source of fields", async () => {
  const toolset = finalizeToolset({
    session: await memorySession("default", { "repo/a.txt": "1\n2\n3\n4\n" }),
  });
  // JSON.parse makes `__proto__` an own key, as a model's call arrives.
  for (
    const raw of [
      '{"path":"a.txt","__proto__":{"limit":1}}',
      '{"path":"a.txt","limit":null,"__proto__":{"limit":1}}',
      '{"__proto__":{"path":"a.txt"}}',
    ]
  ) {
    const prepared = await toolset.prepare("read", JSON.parse(raw));
    assert.equal(prepared.ok, false, raw);
    assert.equal(!prepared.ok && prepared.error.code, "invalid_input", raw);
    assert.match(!prepared.ok ? prepared.error.message : "", /__proto__: not a field of read/, raw);
  }
  const bash = await toolset.prepare("bash", JSON.parse('{"__proto__":{"command":"echo hi"}}'));
  assert.equal(!bash.ok && bash.error.code, "invalid_input");
});

test("input boundary: a __proto__ key inside a nested object lends it no fields", async () => {
  const seen: unknown[] = [];
  const probe = defineTool({
    id: "test/mode_probe",
    name: "mode_probe",
    description: "Records its input.",
    risk: "read",
    input: v.strictObject({
      options: v.object({ mode: v.optional(v.picklist(["safe", "unsafe"])) }),
    }),
    effects: (input) => {
      seen.push(input);
      return Promise.resolve([]);
    },
    execute: (input) => {
      seen.push(input);
      return Promise.resolve({ data: "ok" });
    },
    toText: (text) => text,
  });
  const toolset = finalizeToolset({
    session: await memorySession(),
    registry: new ToolRegistry().register(probe),
  });
  const raw = JSON.parse('{"options":{"__proto__":{"mode":"unsafe"}}}');
  const result = await toolset.call({ name: "mode_probe", input: raw, callId: "1" });
  assert.equal(result.ok, true, result.output);
  assert.deepEqual(seen, [{ options: {} }, { options: {} }]);
  const { mode } = (seen[1] as { options: { mode?: string } }).options;
  assert.equal(mode, undefined);
});
