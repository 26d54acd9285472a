/**
 * The README's LangChain recipe, run with LangChain's own fake chat models:
 * the model is offered each tool's schema, a call's output comes back as a
 * tool message that reaches the next prompt, bad input and a strict caller's
 * nulls are tool messages too, and the README shows the tested code.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AIMessageChunk, HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { FakeChatModel, FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { langChainTools } from "./fixtures/langchain_recipe.ts";
import { diskToolset } from "./adapter_fixtures.ts";
import { underDeno } from "./helpers.ts";

test("langchain recipe: a call's output is a tool message that reaches the next prompt", async () => {
  const { toolset, cleanup } = await diskToolset({ "notes.txt": "alpha\nbeta\n" });
  try {
    const tools = langChainTools(toolset, () => Promise.resolve(false));
    const byName = new Map(tools.map((t) => [t.name, t]));
    const calls = [
      { id: "call-1", name: "read", args: { path: "notes.txt" } },
      // A strict-mode caller sends null for the optional fields.
      { id: "call-2", name: "read", args: { path: "notes.txt", offset: null, limit: null } },
      { id: "call-3", name: "read", args: { path: 7 } },
      { id: "call-4", name: "write", args: { path: "out.txt", content: "x" } },
    ];
    const model = new FakeStreamingChatModel({
      chunks: [new AIMessageChunk({ content: "", tool_calls: calls })],
    });
    const bound = model.bindTools(tools);
    // The model is offered the tool's own JSON Schema.
    const offered = (bound as unknown as {
      config: { tools: { function: { name: string; parameters: unknown } }[] };
    }).config.tools;
    assert.deepEqual(offered.map((t) => t.function.name), toolset.definitions.map((d) => d.name));
    assert.deepEqual(offered[0].function.parameters, toolset.definitions[0].inputSchema);

    const prompt = [new HumanMessage("Read notes.txt")];
    const reply = await bound.invoke(prompt);
    assert.equal(reply.tool_calls?.length, 4);
    const results: ToolMessage[] = [];
    for (const call of reply.tool_calls ?? []) {
      // Invoked with a tool call, a LangChain tool answers with a ToolMessage.
      const message: unknown = await byName.get(call.name)!.invoke({ ...call, type: "tool_call" });
      results.push(message as ToolMessage);
    }
    const direct = await toolset.call({ name: "read", input: { path: "notes.txt" }, callId: "x" });
    assert.deepEqual(results.map((m) => m.tool_call_id), ["call-1", "call-2", "call-3", "call-4"]);
    assert.equal(results[0].content, direct.output);
    assert.equal(results[1].content, direct.output);
    assert.match(String(results[2].content), /^Error \(invalid_input\): /);
    // The approver said no: the write is a denied result, and nothing was written.
    assert.match(String(results[3].content), /^Error \(denied\): /);

    // FakeChatModel answers with the text of the prompt it received.
    const echo = await new FakeChatModel({}).invoke([...prompt, reply, ...results]);
    assert.ok(String(echo.content).includes(direct.output));
  } finally {
    await cleanup();
  }
});

test("langchain recipe: the README shows the tested code", { skip: !underDeno }, async () => {
  // The sources (and so the recipe's TypeScript) are only here under Deno.
  const here = dirname(fileURLToPath(import.meta.url));
  const fixture = await readFile(join(here, "fixtures/langchain_recipe.ts"), "utf8");
  const readme = await readFile(join(here, "../README.md"), "utf8");
  const region = (name: string) =>
    new RegExp(`// ${name}:start\n([\\s\\S]*?)\\s*// ${name}:end`).exec(fixture)?.[1]
      .replace(/^ {2}/gm, "");
  const imports = region("recipe-imports");
  const body = region("recipe");
  assert.ok(imports && body);
  assert.ok(readme.includes(imports), "README.md quotes the recipe's imports");
  assert.ok(readme.includes(body), "README.md quotes the recipe");
});
