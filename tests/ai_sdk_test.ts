/**
 * The AI SDK adapter driven by the SDK's own mock model: a call whose text
 * reaches the next prompt, bad input, the approval flow (approved, denied),
 * a denied verdict, an abort that ends the command's process group, and bash
 * output as preliminary results.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generateText, type ModelMessage, stepCountIs, streamText, type ToolSet } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { toAISDKTools } from "../ai_sdk.ts";
import { diskToolset, sleeperCommand, sleeping, uniqueNap, until } from "./adapter_fixtures.ts";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model turn that calls one tool. */
function callTurn(toolName: string, input: unknown, toolCallId = "call-1") {
  return {
    content: [{ type: "tool-call" as const, toolCallId, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

/** A model turn that answers in text. */
const textTurn = {
  content: [{ type: "text" as const, text: "done" }],
  finishReason: { unified: "stop" as const, raw: "stop" },
  usage,
  warnings: [],
};

/** The tool result parts of a prompt the model received. */
function toolOutputs(prompt: readonly { role: string; content: unknown }[]): unknown[] {
  return prompt.filter((message) => message.role === "tool").flatMap((message) =>
    (message.content as { type: string; output?: unknown }[])
      .filter((part) => part.type === "tool-result").map((part) => part.output)
  );
}

test("ai-sdk: the tools are an AI SDK ToolSet, with the toolset's names and descriptions", async () => {
  const { toolset, cleanup } = await diskToolset();
  try {
    const tools: ToolSet = toAISDKTools(toolset);
    assert.deepEqual(Object.keys(tools), toolset.definitions.map((d) => d.name));
    assert.equal(tools.read.description, toolset.definitions[0].description);
  } finally {
    await cleanup();
  }
});

test("ai-sdk: a call's output text reaches the model's next prompt, verbatim", async () => {
  const { toolset, cleanup } = await diskToolset({ "notes.txt": "alpha\nbeta\n" });
  try {
    const model = new MockLanguageModelV4({
      doGenerate: [callTurn("read", { path: "notes.txt" }), textTurn],
    });
    const result = await generateText({
      model,
      tools: toAISDKTools(toolset),
      prompt: "Read notes.txt",
      stopWhen: stepCountIs(2),
    });
    assert.equal(result.text, "done");
    const direct = await toolset.call({ name: "read", input: { path: "notes.txt" }, callId: "x" });
    assert.match(direct.output, /beta/);
    assert.deepEqual(toolOutputs(model.doGenerateCalls[1].prompt), [
      { type: "text", value: direct.output },
    ]);
    // The first prompt offered the tool with its JSON Schema.
    const offered = model.doGenerateCalls[0].tools?.find((t) => t.name === "read");
    assert.deepEqual(
      (offered as { inputSchema?: unknown } | undefined)?.inputSchema,
      toolset.definitions[0].inputSchema,
    );
  } finally {
    await cleanup();
  }
});

test("ai-sdk: bad input is an error result the model sees once, not a thrown exception", async () => {
  const { toolset, cleanup } = await diskToolset();
  try {
    const model = new MockLanguageModelV4({
      doGenerate: [callTurn("read", { path: 7, extra: true }), textTurn],
    });
    await generateText({
      model,
      tools: toAISDKTools(toolset),
      prompt: "Read",
      stopWhen: stepCountIs(2),
    });
    const [output] = toolOutputs(model.doGenerateCalls[1].prompt) as {
      type: string;
      value: string;
    }[];
    assert.equal(output.type, "error-text");
    assert.match(output.value, /^Error \(invalid_input\): /);
    // The error's text appears once.
    assert.equal(output.value.split("invalid_input").length, 2);
  } finally {
    await cleanup();
  }
});

test("ai-sdk: an ask verdict is the SDK's approval request; approved, the call runs once", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const tools = toAISDKTools(toolset);
    const model = new MockLanguageModelV4({
      doGenerate: [callTurn("write", { path: "out.txt", content: "hello\n" }), textTurn],
    });
    const first = await generateText({ model, tools, prompt: "Write out.txt" });
    const request = first.content.find((part) => part.type === "tool-approval-request");
    assert.ok(request, "the write waits for approval");
    await assert.rejects(readFile(join(root, "out.txt"), "utf8"));

    const messages: ModelMessage[] = [
      { role: "user", content: "Write out.txt" },
      ...first.response.messages,
      {
        role: "tool",
        content: [{
          type: "tool-approval-response",
          approvalId: request.approvalId,
          approved: true,
        }],
      },
    ];
    await generateText({ model, tools, messages });
    assert.equal(await readFile(join(root, "out.txt"), "utf8"), "hello\n");
    const [output] = toolOutputs(model.doGenerateCalls[1].prompt) as { value: string }[];
    assert.match(output.value, /out\.txt/);
  } finally {
    await cleanup();
  }
});

test("ai-sdk: a call denied in the approval flow never runs, and the model is told", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const tools = toAISDKTools(toolset);
    const model = new MockLanguageModelV4({
      doGenerate: [callTurn("write", { path: "out.txt", content: "hello\n" }), textTurn],
    });
    const first = await generateText({ model, tools, prompt: "Write out.txt" });
    const request = first.content.find((part) => part.type === "tool-approval-request");
    assert.ok(request);
    await generateText({
      model,
      tools,
      messages: [
        { role: "user", content: "Write out.txt" },
        ...first.response.messages,
        {
          role: "tool",
          content: [{
            type: "tool-approval-response",
            approvalId: request.approvalId,
            approved: false,
            reason: "not now",
          }],
        },
      ],
    });
    await assert.rejects(readFile(join(root, "out.txt"), "utf8"));
    assert.deepEqual(toolOutputs(model.doGenerateCalls[1].prompt), [
      { type: "execution-denied", reason: "not now" },
    ]);
  } finally {
    await cleanup();
  }
});

test("ai-sdk: a deny verdict is the denied result, without an approval request", async () => {
  const { toolset, cleanup } = await diskToolset({}, "plan");
  try {
    const model = new MockLanguageModelV4({
      doGenerate: [callTurn("bash", { command: "touch made.txt" }), textTurn],
    });
    const result = await generateText({
      model,
      tools: toAISDKTools(toolset),
      prompt: "Touch",
      stopWhen: stepCountIs(2),
    });
    assert.equal(result.steps[0].content.some((p) => p.type === "tool-approval-request"), false);
    const [output] = toolOutputs(model.doGenerateCalls[1].prompt) as {
      type: string;
      value: string;
    }[];
    assert.equal(output.type, "error-text");
    assert.match(output.value, /^Error \(denied\): /);
  } finally {
    await cleanup();
  }
});

test("ai-sdk: an `approve` option decides in-process, and the SDK never pauses", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const asked: string[] = [];
    const tools = toAISDKTools(toolset, {
      approve: ({ prepared }) => {
        asked.push(prepared.name);
        return Promise.resolve(true);
      },
    });
    assert.equal(tools.write.needsApproval, undefined);
    const model = new MockLanguageModelV4({
      doGenerate: [callTurn("write", { path: "out.txt", content: "x" }), textTurn],
    });
    await generateText({ model, tools, prompt: "Write", stopWhen: stepCountIs(2) });
    assert.deepEqual(asked, ["write"]);
    assert.equal(await readFile(join(root, "out.txt"), "utf8"), "x");
  } finally {
    await cleanup();
  }
});

test("ai-sdk: aborting the generation ends a running command's whole process group", async () => {
  const { toolset, cleanup } = await diskToolset();
  try {
    const nap = uniqueNap();
    const tools = toAISDKTools(toolset, { approve: () => Promise.resolve(true) });
    const model = new MockLanguageModelV4({
      doGenerate: [callTurn("bash", { command: sleeperCommand(nap) }), textTurn],
    });
    const turn = new AbortController();
    const outcome = generateText({
      model,
      tools,
      prompt: "Sleep",
      abortSignal: turn.signal,
      stopWhen: stepCountIs(2),
    }).then(() => "finished", () => "aborted");
    await until(() => sleeping(nap), "the background sleep running");
    turn.abort();
    // Gone before the generation settles: the abort reached the command, not its timeout.
    await until(async () => !(await sleeping(nap)), "the background sleep ending");
    assert.equal(await outcome, "aborted");
  } finally {
    await cleanup();
  }
});

test("ai-sdk: bash output streams as preliminary results before the final one", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const tools = toAISDKTools(toolset, { approve: () => Promise.resolve(true) });
    const command = "echo first; while [ ! -e go ]; do sleep 0.02; done; echo second";
    const finish = (unified: "tool-calls" | "stop") => ({
      type: "finish" as const,
      finishReason: { unified, raw: unified },
      usage,
    });
    const model = new MockLanguageModelV4({
      doStream: [
        {
          stream: convertArrayToReadableStream([
            {
              type: "tool-call" as const,
              toolCallId: "call-1",
              toolName: "bash",
              input: JSON.stringify({ command }),
            },
            finish("tool-calls"),
          ]),
        },
        {
          stream: convertArrayToReadableStream([
            { type: "text-start" as const, id: "t" },
            { type: "text-delta" as const, id: "t", delta: "done" },
            { type: "text-end" as const, id: "t" },
            finish("stop"),
          ]),
        },
      ],
    });
    const stream = streamText({ model, tools, prompt: "Run", stopWhen: stepCountIs(2) });
    const preliminary: string[] = [];
    let final: { ok: boolean; output: string } | undefined;
    for await (const part of stream.fullStream) {
      if (part.type !== "tool-result") continue;
      const output = part.output as { status?: string; ok?: boolean; output: string };
      // The SDK repeats the last value yielded as a preliminary result before the final one.
      if (part.preliminary && output.status === "running") {
        preliminary.push(output.output);
        // The command finishes only once a snapshot with its first line was seen.
        if (output.output.includes("first")) await writeFile(join(root, "go"), "");
      } else if (!part.preliminary) {
        final = output as { ok: boolean; output: string };
      }
    }
    assert.ok(preliminary.some((text) => text.includes("first") && !text.includes("second")));
    assert.ok(final?.ok);
    assert.match(final.output, /first\nsecond/);
  } finally {
    await cleanup();
  }
});
