/**
 * The OpenAI Agents SDK adapter driven by a fake `Model` through the SDK's
 * own `Runner`: a call whose text reaches the next model request, strict
 * schemas and a strict caller's nulls, bad input, the interruption flow
 * (approved, rejected), and an abort that ends the command's process group.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  type StreamEvent,
  type Tool,
  Usage,
} from "@openai/agents";
import { toOpenAIAgentsTools } from "../openai_agents.ts";
import { diskToolset, sleeperCommand, sleeping, uniqueNap, until } from "./adapter_fixtures.ts";

/** A model that answers from a script and records every request. */
class ScriptModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly turns: ((request: ModelRequest) => ModelResponse)[]) {}
  getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const turn = this.turns.shift();
    if (turn === undefined) throw new Error("the script has no more turns");
    return Promise.resolve(turn(request));
  }
  // deno-lint-ignore require-yield
  async *getStreamedResponse(_request: ModelRequest): AsyncIterable<StreamEvent> {
    throw new Error("these tests do not stream");
  }
}

/** A model turn that calls one tool with these arguments. */
function callTurn(name: string, args: unknown, callId = "call-1") {
  return (): ModelResponse => ({
    usage: new Usage(),
    output: [{
      type: "function_call",
      callId,
      name,
      arguments: JSON.stringify(args),
      status: "completed",
    }],
  });
}

/** A model turn that answers in text. */
const textTurn = (): ModelResponse => ({
  usage: new Usage(),
  output: [{
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "done" }],
  }],
});

/** The outputs of the function call results in a request's input. */
function callOutputs(request: ModelRequest): unknown[] {
  const input = typeof request.input === "string" ? [] : request.input;
  return input.filter((item: AgentInputItem) => item.type === "function_call_result")
    .map((item) => (item as { output: unknown }).output);
}

/** The text of a function call result's output (a string or a text part). */
function textOf(output: unknown): string {
  if (typeof output === "string") return output;
  return (output as { type: string; text: string }).text;
}

test("openai-agents: the tools are strict function tools the SDK's Agent accepts", async () => {
  const { toolset, cleanup } = await diskToolset();
  try {
    const tools: Tool[] = toOpenAIAgentsTools(toolset);
    const agent = new Agent({ name: "coder", instructions: "Work.", tools });
    assert.deepEqual(agent.tools.map((t) => t.name), toolset.definitions.map((d) => d.name));
    for (const tool of toOpenAIAgentsTools(toolset)) {
      assert.equal(tool.strict, true);
      assert.equal(tool.parameters.additionalProperties, false);
      assert.deepEqual(
        [...tool.parameters.required].sort(),
        Object.keys(tool.parameters.properties).sort(),
      );
    }
  } finally {
    await cleanup();
  }
});

test("openai-agents: a call's output reaches the next model request; a strict caller's nulls are absent fields", async () => {
  const { toolset, cleanup } = await diskToolset({ "notes.txt": "alpha\nbeta\n" });
  try {
    // Strict mode makes optional fields required and nullable: the model sends null.
    const model = new ScriptModel([
      callTurn("read", { path: "notes.txt", offset: null, limit: null }),
      textTurn,
    ]);
    const agent = new Agent({ name: "coder", tools: toOpenAIAgentsTools(toolset), model });
    const result = await new Runner().run(agent, "Read notes.txt");
    assert.equal(result.finalOutput, "done");
    const direct = await toolset.call({ name: "read", input: { path: "notes.txt" }, callId: "x" });
    assert.match(direct.output, /beta/);
    assert.deepEqual(callOutputs(model.requests[1]).map(textOf), [direct.output]);
    // The model was offered the strict schema.
    const offered = model.requests[0].tools.find((t) => "name" in t && t.name === "read");
    assert.equal((offered as { strict?: boolean }).strict, true);
  } finally {
    await cleanup();
  }
});

test("openai-agents: bad input is a tool result the model sees, not a thrown exception", async () => {
  const { toolset, cleanup } = await diskToolset();
  try {
    const model = new ScriptModel([callTurn("read", { path: 7 }), textTurn]);
    const agent = new Agent({ name: "coder", tools: toOpenAIAgentsTools(toolset), model });
    const result = await new Runner().run(agent, "Read");
    assert.equal(result.finalOutput, "done");
    const [output] = callOutputs(model.requests[1]).map(textOf);
    assert.match(output, /^Error \(invalid_input\): /);
  } finally {
    await cleanup();
  }
});

test("openai-agents: an ask verdict interrupts the run; approved, the call runs once", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const seen: string[] = [];
    const model = new ScriptModel([
      callTurn("write", { path: "out.txt", content: "hello\n" }),
      textTurn,
    ]);
    const agent = new Agent({
      name: "coder",
      tools: toOpenAIAgentsTools(toolset, { onResult: (r) => seen.push(r.name) }),
      model,
    });
    const runner = new Runner();
    const first = await runner.run(agent, "Write out.txt");
    assert.equal(first.interruptions.length, 1);
    assert.equal(first.interruptions[0].name, "write");
    await assert.rejects(readFile(join(root, "out.txt"), "utf8"));

    first.state.approve(first.interruptions[0]);
    const second = await runner.run(agent, first.state);
    assert.equal(second.finalOutput, "done");
    assert.equal(await readFile(join(root, "out.txt"), "utf8"), "hello\n");
    assert.deepEqual(seen, ["write"]);
    assert.match(textOf(callOutputs(model.requests[1])[0]), /out\.txt/);
  } finally {
    await cleanup();
  }
});

test("openai-agents: a rejected call never runs, and the model is told", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const model = new ScriptModel([
      callTurn("write", { path: "out.txt", content: "hello\n" }),
      textTurn,
    ]);
    const agent = new Agent({ name: "coder", tools: toOpenAIAgentsTools(toolset), model });
    const runner = new Runner();
    const first = await runner.run(agent, "Write out.txt");
    first.state.reject(first.interruptions[0]);
    const second = await runner.run(agent, first.state);
    assert.equal(second.finalOutput, "done");
    await assert.rejects(readFile(join(root, "out.txt"), "utf8"));
    assert.equal(callOutputs(model.requests[1]).length, 1);
  } finally {
    await cleanup();
  }
});

test("openai-agents: a deny verdict is the denied result, without an interruption", async () => {
  const { toolset, cleanup } = await diskToolset({}, "plan");
  try {
    const model = new ScriptModel([callTurn("bash", { command: "touch made.txt" }), textTurn]);
    const agent = new Agent({ name: "coder", tools: toOpenAIAgentsTools(toolset), model });
    const result = await new Runner().run(agent, "Touch");
    assert.equal(result.interruptions.length, 0);
    assert.match(textOf(callOutputs(model.requests[1])[0]), /^Error \(denied\): /);
  } finally {
    await cleanup();
  }
});

test("openai-agents: aborting the run ends a running command's whole process group", async () => {
  const { toolset, cleanup } = await diskToolset();
  try {
    const nap = uniqueNap();
    const model = new ScriptModel([
      callTurn("bash", { command: sleeperCommand(nap), timeout_ms: null }),
      textTurn,
    ]);
    const tools = toOpenAIAgentsTools(toolset, { approve: () => Promise.resolve(true) });
    const agent = new Agent({ name: "coder", tools, model });
    const turn = new AbortController();
    const outcome = new Runner().run(agent, "Sleep", { signal: turn.signal })
      .then(() => "finished", () => "aborted");
    await until(() => sleeping(nap), "the background sleep running");
    turn.abort();
    // Gone before the run settles: the abort reached the command, not its timeout.
    await until(async () => !(await sleeping(nap)), "the background sleep ending");
    assert.equal(await outcome, "aborted");
  } finally {
    await cleanup();
  }
});
