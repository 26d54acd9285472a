/**
 * Typed calls and the discriminated `ToolResult`. Each test is checked twice:
 * by the type checker (every `@ts-expect-error` line must be an error, or the
 * file stops compiling, under `deno check` and under the npm build's `tsc`)
 * and at run time (what the same call does when it reaches the toolset).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  defineTool,
  type FinalizedToolset,
  finalizeToolset,
  type GrepOutput,
  type ReadInput,
  type ReadOutput,
  ToolRegistry,
  type ToolResult,
} from "../mod.ts";
import type { SameType } from "../src/contract/schema.ts";
import { memorySession } from "./helpers.ts";

function session() {
  return memorySession("default", { "repo/a.txt": "alpha\nbeta\n" });
}

const echo = defineTool({
  id: "example/echo",
  name: "echo",
  description: "Returns its text, repeated.",
  risk: "read",
  input: v.strictObject({
    text: v.pipe(v.string(), v.description("Text to return.")),
    times: v.optional(v.pipe(v.number(), v.integer(), v.description("Repeats (default 1)."))),
  }),
  effects: () => Promise.resolve([]),
  execute: (input) => Promise.resolve({ data: { echoed: input.text.repeat(input.times ?? 1) } }),
  toText: (data) => data.echoed,
});

test("typed calls: a built-in call's name, input and data are typed", async () => {
  const toolset = finalizeToolset({ session: await session() });
  const result = await toolset.call({ name: "read", input: { path: "a.txt" }, callId: "1" });
  const dataIsReadOutput: SameType<typeof result.data, ReadOutput | undefined> = true;
  assert.ok(dataIsReadOutput);
  assert.ok(result.ok, result.output);
  assert.deepEqual(result.data?.lines, ["alpha", "beta"]);

  const grep = await toolset.call({ name: "grep", input: { pattern: "beta" }, callId: "2" });
  const dataIsGrepOutput: SameType<typeof grep.data, GrepOutput | undefined> = true;
  assert.ok(dataIsGrepOutput && grep.ok, grep.output);
});

test("typed calls: a misspelt name is a type error, and unknown_tool at run time", async () => {
  const toolset = finalizeToolset({ session: await session() });
  // @ts-expect-error: "grepp" is not a tool of this toolset.
  const result = await toolset.call({ name: "grepp", input: { pattern: "x" }, callId: "1" });
  assert.equal(result.error?.code, "unknown_tool");
  // @ts-expect-error: the same check applies to prepare.
  const prepared = await toolset.prepare("grepp", { pattern: "x" });
  assert.equal(prepared.ok, false);
});

test("typed calls: input of the wrong shape is a type error, and invalid_input at run time", async () => {
  const toolset = finalizeToolset({ session: await session() });
  // @ts-expect-error: read's path is a string.
  const wrongType = await toolset.call({ name: "read", input: { path: 1 }, callId: "1" });
  assert.equal(wrongType.error?.code, "invalid_input");
  // @ts-expect-error: read has no field `file`.
  const unknownField = await toolset.call({ name: "read", input: { file: "a.txt" }, callId: "2" });
  assert.equal(unknownField.error?.code, "invalid_input");
  // @ts-expect-error: edit needs old_text and new_text.
  const missing = await toolset.prepare("edit", { path: "a.txt" });
  assert.equal(missing.ok, false);
});

test("typed calls: result.error needs narrowing on ok, and is there whenever ok is false", async () => {
  const toolset = finalizeToolset({ session: await session() });
  const result: ToolResult = await toolset.call({
    name: "read",
    input: { path: "missing.txt" },
    callId: "1",
  });
  // @ts-expect-error: without narrowing, error may be undefined.
  assert.equal(result.error.code, "not_found");
  if (!result.ok) {
    assert.equal(result.error.code, "not_found");
  } else {
    // A success's error is `never`: reading it gives undefined, and nothing can set it.
    const none: undefined = result.error;
    assert.fail(`expected a failure, got ${String(none)}`);
  }
});

test("typed calls: a model's JSON (string name, unknown input) needs no cast", async () => {
  const toolset = finalizeToolset({ session: await session() });
  const fromModel = JSON.parse('{"name":"read","arguments":{"path":"a.txt","limit":1}}') as {
    name: string;
    arguments: unknown;
  };
  const raw = await toolset.call({ name: fromModel.name, input: fromModel.arguments, callId: "1" });
  const dataIsUnknown: SameType<typeof raw.data, unknown> = true;
  assert.ok(dataIsUnknown && raw.ok, raw.output);
  assert.match(raw.output, /alpha/);
  const prepared = await toolset.prepare(fromModel.name, fromModel.arguments);
  assert.ok(prepared.ok);
  const executed = await toolset.execute(prepared, { callId: "2" });
  assert.ok(executed.ok, executed.output);
  const misspelt: string = "grepp";
  const unknown = await toolset.call({ name: misspelt, input: {}, callId: "3" });
  assert.equal(unknown.error?.code, "unknown_tool");
});

test("typed calls: prepare and execute carry the tool's input and output types", async () => {
  const toolset = finalizeToolset({ session: await session() });
  const prepared = await toolset.prepare("read", { path: "a.txt", offset: 1 });
  assert.ok(prepared.ok);
  const inputIsReadInput: SameType<typeof prepared.input, ReadInput> = true;
  assert.ok(inputIsReadInput);
  assert.equal(prepared.input.offset, 1);
  const result = await toolset.execute(prepared, { callId: "1" });
  const dataIsReadOutput: SameType<typeof result.data, ReadOutput | undefined> = true;
  assert.ok(dataIsReadOutput && result.ok);
  assert.deepEqual(result.data?.lines, ["beta"]);
});

test("typed calls: select narrows the names a toolset accepts", async () => {
  const current = await session();
  const toolset = finalizeToolset({ session: current, select: ["read", "grep"] });
  // @ts-expect-error: write was not selected.
  const write = await toolset.prepare("write", { path: "b", content: "" });
  assert.ok(!write.ok);
  assert.equal(write.error.code, "unknown_tool");
  assert.throws(
    // @ts-expect-error: a misspelt selection is a type error, and a TypeError at run time.
    () => finalizeToolset({ session: current, select: ["read", "grepp"] }),
    /no tool named grepp/,
  );
});

test("typed calls: a custom registry types its own tools", async () => {
  const registry = new ToolRegistry().register(echo);
  const toolset = finalizeToolset({ session: await session(), registry });
  const result = await toolset.call({
    name: "echo",
    input: { text: "ab", times: 2 },
    callId: "1",
  });
  const dataIsEchoOutput: SameType<typeof result.data, { echoed: string } | undefined> = true;
  assert.ok(dataIsEchoOutput && result.ok);
  assert.equal(result.data?.echoed, "abab");
  // @ts-expect-error: this registry holds no read.
  const read = await toolset.call({ name: "read", input: { path: "a.txt" }, callId: "2" });
  assert.equal(read.error?.code, "unknown_tool");
  // @ts-expect-error: echo's text is a string.
  const bad = await toolset.call({ name: "echo", input: { text: 3 }, callId: "3" });
  assert.equal(bad.error?.code, "invalid_input");
});

test("typed calls: the built-in registry extended with a custom tool types all eight", async () => {
  const { builtinRegistry } = await import("../mod.ts");
  const toolset = finalizeToolset({
    session: await session(),
    registry: builtinRegistry().register(echo),
  });
  const read = await toolset.call({ name: "read", input: { path: "a.txt" }, callId: "1" });
  const echoed = await toolset.call({ name: "echo", input: { text: "x" }, callId: "2" });
  assert.ok(read.ok && echoed.ok);
  assert.equal(echoed.data?.echoed, "x");
  // @ts-expect-error: still no tool named grepp.
  await toolset.prepare("grepp", {});
});

test("typed calls: any typed toolset is a FinalizedToolset, which takes raw calls", async () => {
  const typed = finalizeToolset({ session: await session(), select: ["read"] });
  const untyped: FinalizedToolset = typed;
  const result = await untyped.call({ name: "list", input: {}, callId: "1" });
  assert.equal(result.error?.code, "unknown_tool");
  const explicit = defineTool<{ text: string }, string>({
    id: "example/plain",
    name: "plain",
    description: "Returns its text.",
    risk: "read",
    input: v.strictObject({ text: v.pipe(v.string(), v.description("Text to return.")) }),
    effects: () => Promise.resolve([]),
    execute: (input) => Promise.resolve({ data: input.text }),
    toText: (text) => text,
  });
  // A tool defined with explicit input and output types but no name type has a `string`
  // name, so its toolset takes any name and checks it at run time.
  const open = finalizeToolset({
    session: await session(),
    registry: new ToolRegistry().register(explicit),
  });
  const plain = await open.call({ name: "plain", input: { text: "p" }, callId: "2" });
  assert.equal(plain.output, "p");
});
