/**
 * The spec's §11 "契约与分层" (contract and layering), and the contract's
 * error handling.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  builtinRegistry,
  defineTool,
  ERROR_CODES,
  finalizeToolset,
  RISK_HINTS,
  toAnthropicTools,
  ToolError,
  ToolRegistry,
  toOpenAITools,
} from "../mod.ts";
import type { ToolSessionContext } from "../mod.ts";
import { ALL_TOOLS, memorySession as sharedMemorySession } from "./helpers.ts";

function memorySession(
  mode: "default" | "acceptEdits" | "plan" = "default",
): Promise<ToolSessionContext> {
  return sharedMemorySession(mode, { "repo/a.txt": "alpha\nbeta\n" });
}

test("契约与分层: definitions and dispatch come from one FinalizedToolset", async () => {
  const session = await memorySession();
  const toolset = finalizeToolset({ session, select: ["read", "grep", "list"] });
  const advertised = toolset.definitions.map((d) => d.name);
  assert.deepEqual(advertised, ["read", "grep", "list"]);
  // Every advertised name dispatches; every other built-in name does not.
  for (const name of builtinRegistry().names) {
    const prepared = await toolset.prepare(name, {});
    if (advertised.includes(name)) {
      assert.notEqual(prepared.ok === false && prepared.error.code, "unknown_tool", name);
    } else {
      assert.equal(prepared.ok, false);
      assert.equal(prepared.ok === false && prepared.error.code, "unknown_tool", name);
    }
  }
  const result = await toolset.call({
    name: "write",
    input: { path: "b.txt", content: "x" },
    callId: "c1",
  });
  assert.equal(result.error?.code, "unknown_tool");
  // The definition's schema is the one validation uses.
  const read = toolset.definitions.find((d) => d.name === "read")!;
  assert.deepEqual(Object.keys(read.inputSchema.properties), ["path", "offset", "limit"]);
});

test("契约与分层: no tool can be added, removed or replaced after finalize", async () => {
  const toolset = finalizeToolset({ session: await memorySession() });
  assert.ok(Object.isFrozen(toolset));
  assert.ok(Object.isFrozen(toolset.definitions));
  assert.ok(toolset.definitions.every((d) => Object.isFrozen(d) && Object.isFrozen(d.inputSchema)));
  assert.deepEqual(Object.keys(toolset).sort(), [
    "call",
    "definitions",
    "execute",
    "prepare",
    "session",
  ]);
  assert.throws(() => (toolset.definitions as unknown[]).push({ name: "evil" }), TypeError);
  assert.throws(
    () => ((toolset as unknown as Record<string, unknown>).call = () => null),
    TypeError,
  );
  assert.throws(
    () => ((toolset.definitions[0] as unknown as Record<string, unknown>).name = "x"),
    TypeError,
  );
  // A registry change after finalize does not reach the toolset.
  const registry = new ToolRegistry().register(builtinRegistry().tools[0]);
  const small = finalizeToolset({ session: await memorySession(), registry });
  registry.register(builtinRegistry().tools[1]);
  assert.deepEqual(small.definitions.map((d) => d.name), ["read"]);
  assert.equal((await small.prepare("write", { path: "x", content: "" })).ok, false);
});

test("契约与分层: input schema and deserialization come from one type", async () => {
  const toolset = finalizeToolset({ session: await memorySession() });
  for (const definition of toolset.definitions) {
    const schema = definition.inputSchema;
    assert.equal(schema.type, "object");
    assert.equal(schema.additionalProperties, false);
    assert.equal("$schema" in schema, false);
    // Every field the schema advertises carries a description.
    for (const [field, property] of Object.entries(schema.properties)) {
      assert.equal(
        typeof (property as { description?: unknown }).description,
        "string",
        `${definition.name}.${field}`,
      );
    }
    // An unknown key is rejected, naming the key.
    const unknown = await toolset.prepare(definition.name, { surely_not_a_field: 1 });
    assert.equal(unknown.ok, false);
    assert.match(unknown.ok ? "" : unknown.error.message, /surely_not_a_field: not a field/);
    // Every required field is required by validation too.
    for (const field of schema.required ?? []) {
      const missing = await toolset.prepare(definition.name, {});
      assert.match(missing.ok ? "" : missing.error.message, new RegExp(`${field}: required`));
    }
    // Every field rejects a value of the wrong type, naming the field.
    for (const field of Object.keys(schema.properties)) {
      const wrong = await toolset.prepare(definition.name, { [field]: { nested: true } });
      assert.equal(wrong.ok, false);
      assert.match(
        wrong.ok ? "" : wrong.error.message,
        new RegExp(`^${field}: `, "m"),
        `${definition.name}.${field}`,
      );
    }
  }
});

test("契约与分层: a tool hidden by permissions is neither advertised nor executable", async () => {
  const session = await memorySession("plan");
  const toolset = finalizeToolset({ session });
  const names = toolset.definitions.map((d) => d.name);
  assert.deepEqual(names, ["read", "grep", "glob", "list", "bash"]);
  for (const hidden of ["write", "edit"]) {
    const result = await toolset.call({
      name: hidden,
      input: { path: "a.txt", content: "x" },
      callId: "c",
    });
    assert.equal(result.error?.code, "unknown_tool");
  }
  const bash = await toolset.call({ name: "bash", input: { command: "touch a.txt" }, callId: "c" });
  assert.equal(bash.error?.code, "denied");
  const read = await toolset.call({ name: "read", input: { path: "a.txt" }, callId: "c" });
  assert.equal(read.ok, true);
});

test("契约与分层: definition order is stable for the same selection", async () => {
  const session = await memorySession();
  const a = finalizeToolset({ session, select: ["bash", "read", "glob"] });
  const b = finalizeToolset({ session, select: ["glob", "bash", "read"] });
  assert.deepEqual(a.definitions.map((d) => d.name), ["read", "glob", "bash"]);
  assert.equal(JSON.stringify(a.definitions), JSON.stringify(b.definitions));
  const all1 = JSON.stringify(finalizeToolset({ session }).definitions);
  const all2 = JSON.stringify(finalizeToolset({ session }).definitions);
  assert.equal(all1, all2);
  assert.deepEqual(JSON.parse(all1).map((d: { name: string }) => d.name), ALL_TOOLS);
});

test("contract: invalid input names each bad field", async () => {
  const toolset = finalizeToolset({ session: await memorySession() });
  const result = await toolset.call({
    name: "read",
    input: { path: 7, limit: 0, extra: true },
    callId: "c",
  });
  assert.equal(result.ok, false);
  assert.equal(result.error?.code, "invalid_input");
  assert.match(result.output, /path: expected string/);
  assert.match(result.output, /limit: expected >=1/);
  assert.match(result.output, /extra: not a field of read; its fields are path, offset, limit/);
  const notObject = await toolset.call({ name: "read", input: "a.txt", callId: "c" });
  assert.equal(notObject.error?.code, "invalid_input");
});

test("contract: a throwing tool becomes a backend_failure result, never an exception", async () => {
  const boom = defineTool<{ mode: string }, string>({
    id: "test/boom",
    name: "boom",
    description: "Fails.",
    risk: "read",
    input: v.strictObject({ mode: v.pipe(v.string(), v.description("How to fail.")) }),
    effects: () => Promise.resolve([]),
    execute: (input) => {
      if (input.mode === "tool") throw new ToolError("not_found", "No such thing.");
      throw new RangeError("kaput");
    },
    toText: (s) => s,
  });
  const toolset = finalizeToolset({
    session: await memorySession(),
    registry: new ToolRegistry().register(boom),
  });
  const crashed = await toolset.call({ name: "boom", input: { mode: "crash" }, callId: "c" });
  assert.equal(crashed.ok, false);
  assert.equal(crashed.error?.code, "backend_failure");
  assert.match(crashed.output, /kaput/);
  const failed = await toolset.call({ name: "boom", input: { mode: "tool" }, callId: "c" });
  assert.equal(failed.error?.code, "not_found");
  assert.ok(Object.keys(ERROR_CODES).includes(failed.error!.code));
});

test("contract: the registry refuses duplicate ids and names", () => {
  const registry = builtinRegistry();
  assert.throws(() => registry.register(registry.tools[0]), /registered already/);
  const renamed = { ...registry.tools[0], id: "other/read" };
  assert.throws(() => registry.register(renamed), /named read is registered already/);
  assert.throws(
    () => finalizeToolset({ session: {} as ToolSessionContext, select: ["nope"] }),
    /no tool named nope/,
  );
});

test("contract: execute accepts only calls prepared by the same toolset", async () => {
  const session = await memorySession();
  const a = finalizeToolset({ session });
  const b = finalizeToolset({ session, select: ["read"] });
  const prepared = await a.prepare("read", { path: "a.txt" });
  assert.equal(prepared.ok, true);
  assert.equal((await a.execute(prepared, { callId: "1" })).ok, true);
  assert.equal((await b.execute(prepared, { callId: "2" })).error?.code, "invalid_input");
  const forged = { ...prepared, input: { path: "/etc/passwd" } };
  assert.equal((await a.execute(forged, { callId: "3" })).error?.code, "invalid_input");
});

test("contract: converters produce the OpenAI and Anthropic tool formats from definitions", async () => {
  const toolset = finalizeToolset({ session: await memorySession() });
  const openai = toOpenAITools(toolset.definitions);
  const anthropic = toAnthropicTools(toolset.definitions);
  assert.equal(openai.length, 7);
  for (let i = 0; i < 7; i++) {
    const d = toolset.definitions[i];
    assert.equal(openai[i].type, "function");
    assert.equal(openai[i].function.name, d.name);
    assert.deepEqual(openai[i].function.parameters, d.inputSchema);
    assert.equal(anthropic[i].name, d.name);
    assert.deepEqual(anthropic[i].input_schema, d.inputSchema);
    assert.equal(anthropic[i].input_schema.additionalProperties, false);
  }
});

test("contract: definitions carry a title, the annotations of the tool's risk, and its output schema", async () => {
  const toolset = finalizeToolset({ session: await memorySession() });
  const risks = new Map(builtinRegistry().tools.map((t) => [t.name, t.risk]));
  for (const d of toolset.definitions) {
    assert.deepEqual(d.annotations, { title: d.title, ...RISK_HINTS[risks.get(d.name)!] });
    assert.equal(d.outputSchema?.type, "object", d.name);
    assert.equal(d.outputSchema?.additionalProperties, false, d.name);
    assert.ok(Object.isFrozen(d.annotations) && Object.isFrozen(d.outputSchema), d.name);
    // Every top-level output field carries a description, as input fields do.
    for (const [field, property] of Object.entries(d.outputSchema!.properties)) {
      assert.equal(typeof (property as { description?: unknown }).description, "string", field);
    }
  }
  // A tool without an output schema has none in its definition, and its title is its name.
  const bare = defineTool<Record<string, never>, string>({
    id: "test/bare",
    name: "bare",
    description: "Returns nothing much.",
    risk: "execute",
    input: v.strictObject({}),
    effects: () => Promise.resolve([]),
    execute: () => Promise.resolve({ data: "x" }),
    toText: (x) => x,
  });
  const session = await memorySession();
  const [definition] = finalizeToolset({
    session,
    registry: new ToolRegistry().register(bare),
  }).definitions;
  assert.equal("outputSchema" in definition, false);
  assert.equal(definition.title, "bare");
  assert.equal(definition.annotations.openWorldHint, true);
  assert.throws(
    () =>
      defineTool<Record<string, never>, { a: string }>({
        ...bare,
        id: "test/loose",
        output: v.object({ a: v.string() }),
        execute: () => Promise.resolve({ data: { a: "x" } }),
        toText: (x) => x.a,
      }),
    /output must be a v\.strictObject/,
  );
});

test("contract: the call's deadline stops a call as timed_out", async () => {
  const slow = defineTool<Record<string, never>, string>({
    id: "test/slow",
    name: "slow",
    description: "Waits for its signal.",
    risk: "read",
    input: v.strictObject({}),
    effects: () => Promise.resolve([]),
    execute: (_input, _session, call) =>
      new Promise((_resolve, reject) =>
        call.signal.addEventListener("abort", () => reject(call.signal.reason))
      ),
    toText: (s) => s,
  });
  const toolset = finalizeToolset({
    session: await memorySession(),
    registry: new ToolRegistry().register(slow),
  });
  const timed = await toolset.call({
    name: "slow",
    input: {},
    callId: "c",
    deadline: Date.now() + 30,
  });
  assert.equal(timed.error?.code, "timed_out");
  const turn = new AbortController();
  const pending = toolset.call({ name: "slow", input: {}, callId: "c", signal: turn.signal });
  turn.abort();
  assert.equal((await pending).error?.code, "cancelled");
});
