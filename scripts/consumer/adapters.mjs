// Runs in a fresh Node project that installed the packed tarball and the frameworks: each adapter
// entry point driven by its framework's own run loop with a scripted model (the AI SDK's mock
// language model; the Agents SDK's Runner with a Model of ours), on whatever versions of the
// frameworks the project holds. Prints the versions it ran with.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText, stepCountIs, streamText } from "ai";
import * as aiTest from "ai/test";
import { Agent, Runner, Usage } from "@openai/agents";
import { createSession, finalizeToolset } from "@openwork/tools";
import { toAISDKTools } from "@openwork/tools/ai-sdk";
import { toOpenAIAgentsTools } from "@openwork/tools/openai-agents";

/** The version of an installed package, from its manifest in this project. */
const installed = async (name) =>
  JSON.parse(await readFile(join("node_modules", name, "package.json"), "utf8")).version;

/** A session on a fresh directory holding notes.txt, in the default mode (writes ask). */
async function fresh() {
  const dir = await mkdtemp(join(tmpdir(), "owt-adapters-"));
  await writeFile(join(dir, "notes.txt"), "alpha\nbeta\n");
  const toolset = finalizeToolset({ session: await createSession({ workingDirectory: dir }) });
  return { dir, toolset };
}

// --- The AI SDK. Its mock model implements the model specification of its major (V3 in AI SDK 6,
// V4 in AI SDK 7); the turns below read the same in both.
const MockLanguageModel = aiTest.MockLanguageModelV4 ?? aiTest.MockLanguageModelV3;
assert.ok(MockLanguageModel, "ai/test exports a mock language model");
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const callTurn = (toolName, input) => ({
  content: [{ type: "tool-call", toolCallId: "call-1", toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: "tool_calls" },
  usage,
  warnings: [],
});
const textTurn = {
  content: [{ type: "text", text: "done" }],
  finishReason: { unified: "stop", raw: "stop" },
  usage,
  warnings: [],
};
/** The tool results of a prompt the model received. */
const toolOutputs = (prompt) =>
  prompt.filter((message) => message.role === "tool").flatMap((message) =>
    message.content.filter((part) => part.type === "tool-result").map((part) => part.output)
  );

{
  const { dir, toolset } = await fresh();
  try {
    // A call's output reaches the next prompt verbatim.
    const tools = toAISDKTools(toolset);
    const reading = new MockLanguageModel({
      doGenerate: [callTurn("read", { path: "notes.txt" }), textTurn],
    });
    const read = await generateText({
      model: reading,
      tools,
      prompt: "Read notes.txt",
      stopWhen: stepCountIs(2),
    });
    assert.equal(read.text, "done");
    const direct = await toolset.call({ name: "read", input: { path: "notes.txt" }, callId: "x" });
    assert.deepEqual(toolOutputs(reading.doGenerateCalls[1].prompt), [
      { type: "text", value: direct.output },
    ]);

    // Bad input is an error result the model sees.
    const bad = new MockLanguageModel({ doGenerate: [callTurn("read", { path: 7 }), textTurn] });
    await generateText({ model: bad, tools, prompt: "Read", stopWhen: stepCountIs(2) });
    const [error] = toolOutputs(bad.doGenerateCalls[1].prompt);
    assert.equal(error.type, "error-text");
    assert.match(error.value, /^Error \(invalid_input\): /);

    // An ask verdict is the SDK's approval request; approved, the call runs.
    const writing = new MockLanguageModel({
      doGenerate: [callTurn("write", { path: "out.txt", content: "hello\n" }), textTurn],
    });
    const asked = await generateText({ model: writing, tools, prompt: "Write out.txt" });
    const request = asked.content.find((part) => part.type === "tool-approval-request");
    assert.ok(request, "the write waits for approval");
    await assert.rejects(readFile(join(dir, "out.txt"), "utf8"));
    await generateText({
      model: writing,
      tools,
      messages: [
        { role: "user", content: "Write out.txt" },
        ...asked.response.messages,
        {
          role: "tool",
          content: [{
            type: "tool-approval-response",
            approvalId: request.approvalId,
            approved: true,
          }],
        },
      ],
    });
    assert.equal(await readFile(join(dir, "out.txt"), "utf8"), "hello\n");

    // Bash output streams as preliminary results, then the final result.
    const command = "echo first; while [ ! -e go ]; do sleep 0.02; done; echo second";
    const finish = (unified) => ({
      type: "finish",
      finishReason: { unified, raw: unified },
      usage,
    });
    const streaming = new MockLanguageModel({
      doStream: [
        {
          stream: aiTest.convertArrayToReadableStream([
            {
              type: "tool-call",
              toolCallId: "call-1",
              toolName: "bash",
              input: JSON.stringify({ command }),
            },
            finish("tool-calls"),
          ]),
        },
        {
          stream: aiTest.convertArrayToReadableStream([
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "done" },
            { type: "text-end", id: "t" },
            finish("stop"),
          ]),
        },
      ],
    });
    const approving = toAISDKTools(toolset, { approve: () => Promise.resolve(true) });
    const stream = streamText({
      model: streaming,
      tools: approving,
      prompt: "Run",
      stopWhen: stepCountIs(2),
    });
    const preliminary = [];
    let final;
    for await (const part of stream.fullStream) {
      if (part.type !== "tool-result") continue;
      if (part.preliminary && part.output.status === "running") {
        preliminary.push(part.output.output);
        // The command finishes only once a snapshot with its first line was seen.
        if (part.output.output.includes("first")) await writeFile(join(dir, "go"), "");
      } else if (!part.preliminary) {
        final = part.output;
      }
    }
    assert.ok(preliminary.some((text) => text.includes("first") && !text.includes("second")));
    assert.equal(final?.ok, true);
    assert.match(final.output, /first\nsecond/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
console.log(
  `adapters: ai ${await installed("ai")}: a read reaches the next prompt, bad input is an ` +
    "error result, an ask is an approval request and runs once approved, bash streams",
);

// --- The OpenAI Agents SDK, through its Runner, with a model that answers from a script.
class ScriptModel {
  requests = [];
  constructor(turns) {
    this.turns = turns;
  }
  getResponse(request) {
    this.requests.push(request);
    const turn = this.turns.shift();
    if (turn === undefined) throw new Error("the script has no more turns");
    return Promise.resolve(turn);
  }
  // deno-lint-ignore require-yield
  async *getStreamedResponse() {
    throw new Error("this script does not stream");
  }
}
const agentsCall = (name, args) => ({
  usage: new Usage(),
  output: [{
    type: "function_call",
    callId: "call-1",
    name,
    arguments: JSON.stringify(args),
    status: "completed",
  }],
});
const agentsText = () => ({
  usage: new Usage(),
  output: [{
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "done" }],
  }],
});
/** The text of each function call result in a request's input. */
const callOutputs = (request) =>
  (typeof request.input === "string" ? [] : request.input)
    .filter((item) => item.type === "function_call_result")
    .map(({ output }) => typeof output === "string" ? output : output.text);

// A run exports its trace to OpenAI unless told not to; nothing here has a key.
const runner = new Runner({ tracingDisabled: true });
{
  const { dir, toolset } = await fresh();
  try {
    // Strict mode: the model sends null for the fields it does not use.
    const reading = new ScriptModel([
      agentsCall("read", { path: "notes.txt", offset: null, limit: null }),
      agentsText(),
    ]);
    const reader = new Agent({
      name: "coder",
      tools: toOpenAIAgentsTools(toolset),
      model: reading,
    });
    const read = await runner.run(reader, "Read notes.txt");
    assert.equal(read.finalOutput, "done");
    const direct = await toolset.call({ name: "read", input: { path: "notes.txt" }, callId: "x" });
    assert.deepEqual(callOutputs(reading.requests[1]), [direct.output]);

    // An ask verdict interrupts the run; approved, the call runs.
    const writing = new ScriptModel([
      agentsCall("write", { path: "out.txt", content: "hello\n" }),
      agentsText(),
    ]);
    const writer = new Agent({
      name: "coder",
      tools: toOpenAIAgentsTools(toolset),
      model: writing,
    });
    const first = await runner.run(writer, "Write out.txt");
    assert.deepEqual(first.interruptions.map((item) => item.name), ["write"]);
    await assert.rejects(readFile(join(dir, "out.txt"), "utf8"));
    first.state.approve(first.interruptions[0]);
    const second = await runner.run(writer, first.state);
    assert.equal(second.finalOutput, "done");
    assert.equal(await readFile(join(dir, "out.txt"), "utf8"), "hello\n");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
console.log(
  `adapters: @openai/agents ${await installed("@openai/agents")}: a read reaches the next ` +
    "request, an ask interrupts the run and runs once approved",
);
