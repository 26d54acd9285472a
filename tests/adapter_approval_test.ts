/**
 * The adapters' approval under a changing file system: a call the
 * framework's approval check let through unasked (its effects then asked for
 * nothing) is refused, not approved, when its effects ask once it runs. An
 * approval runs only the input it was asked about: two calls sharing an id
 * with different inputs are both refused. And a call whose progress nobody
 * reads any more is cancelled, not left running.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { Agent, RunContext, Runner } from "@openai/agents";
import { type AISDKTool, describeApprovalRequest, toAISDKTools } from "../ai_sdk.ts";
import { type OpenAIAgentsTool, toOpenAIAgentsTools } from "../openai_agents.ts";
import {
  callsOnceLanguageModel,
  CallsOnceModel,
  diskToolset,
  sleeperCommand,
  sleeping,
  uniqueNap,
  until,
} from "./adapter_fixtures.ts";

/** An edit of a file that does not exist yet: its preparation fails, so nothing is asked. */
const EDIT = { path: "config.txt", old_text: "safe", new_text: "changed" };

test("ai-sdk: a call that asked for nothing when checked, and asks when it runs, is refused", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const tools = toAISDKTools(toolset);
    const checked = tools.edit.needsApproval!;
    const edit: AISDKTool = {
      ...tools.edit,
      // The file appears between the SDK's approval check and the call's run.
      needsApproval: async (input, options) => {
        const answer = await checked(input, options);
        await writeFile(join(root, "config.txt"), "safe\n");
        return answer;
      },
    };
    const model = callsOnceLanguageModel([{ name: "edit", args: EDIT }]);
    const result = await generateText({
      model,
      tools: { ...tools, edit },
      prompt: "Edit",
      stopWhen: stepCountIs(2),
    });
    assert.equal(result.steps[0].content.some((p) => p.type === "tool-approval-request"), false);
    assert.equal(await readFile(join(root, "config.txt"), "utf8"), "safe\n");
    const outputs = model.doGenerateCalls[1].prompt.filter((m) => m.role === "tool")
      .flatMap((m) => m.content as { type: string; output?: { type: string; value: string } }[])
      .map((part) => part.output);
    assert.equal(outputs[0]?.type, "error-text");
    assert.match(outputs[0]?.value ?? "", /^Error \(denied\): /);
  } finally {
    await cleanup();
  }
});

test("openai-agents: a call that asked for nothing when checked, and asks when it runs, is refused", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const results: { ok: boolean; output: string }[] = [];
    const tools = toOpenAIAgentsTools(toolset, { onResult: (r) => results.push(r) });
    const tools2 = tools.map((tool): OpenAIAgentsTool =>
      tool.name !== "edit" ? tool : {
        ...tool,
        needsApproval: async (context, input, callId) => {
          const answer = await tool.needsApproval(context, input, callId);
          await writeFile(join(root, "config.txt"), "safe\n");
          return answer;
        },
      }
    );
    const agent = new Agent({
      name: "coder",
      tools: tools2,
      model: new CallsOnceModel([{ name: "edit", args: EDIT }]),
    });
    const run = await new Runner().run(agent, "Edit");
    assert.equal(run.interruptions.length, 0);
    assert.equal(await readFile(join(root, "config.txt"), "utf8"), "safe\n");
    assert.equal(results.length, 1);
    assert.equal(results[0].ok, false);
    assert.match(results[0].output, /^Error \(denied\): /);
  } finally {
    await cleanup();
  }
});

test("ai-sdk: a consumer that stops reading a call's progress ends the call's process group", async () => {
  const { toolset, cleanup } = await diskToolset();
  try {
    const nap = uniqueNap();
    const tools = toAISDKTools(toolset, { approve: () => Promise.resolve(true) });
    const command = `echo started; ${sleeperCommand(nap)}`;
    const outputs = tools.bash.execute({ command }, { toolCallId: "call-1" });
    const iterator = outputs[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.deepEqual(first.value, { status: "running", output: "started\n" });
    await until(() => sleeping(nap), "the background sleep running");
    await iterator.return?.();
    await until(async () => !(await sleeping(nap)), "the background sleep ending");
  } finally {
    await cleanup();
  }
});

test("ai-sdk: a host's toolApproval that skips the tools' own check runs no ask call unasked", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const model = callsOnceLanguageModel([{
      name: "write",
      args: { path: "out.txt", content: "hello\n" },
    }]);
    // The host's own rule answers for read and leaves the rest "not applicable": the SDK then
    // consults no tool's needsApproval, and the write would reach execute unasked.
    const result = await generateText({
      model,
      tools: toAISDKTools(toolset),
      toolApproval: ({ toolCall }) => toolCall.toolName === "read" ? "approved" : undefined,
      prompt: "Write out.txt",
      stopWhen: stepCountIs(2),
    });
    assert.equal(result.steps[0].content.some((p) => p.type === "tool-approval-request"), false);
    await assert.rejects(readFile(join(root, "out.txt"), "utf8"), "nothing was written");
    const outputs = model.doGenerateCalls[1].prompt.filter((m) => m.role === "tool")
      .flatMap((m) => m.content as { type: string; output?: { type: string; value: string } }[])
      .map((part) => part.output);
    assert.equal(outputs[0]?.type, "error-text");
    assert.match(outputs[0]!.value, /^Error \(denied\): .*not shown to the person/s);
  } finally {
    await cleanup();
  }
});

/** Two bash calls in one response that share the id `dup`. */
const SHARED_ID = [
  { id: "dup", command: "touch first" },
  { id: "dup", command: "touch second" },
];

for (
  const [name, fresh] of [
    [
      "two calls sharing an id with different inputs are both refused, though the person approved the one shown",
      false,
    ],
    // A server that keeps nothing between requests: each request makes its tools anew, so no
    // record of the first request's checks reaches the second.
    [
      "two calls sharing an id are both refused when the host builds its tools afresh for the approval's answer",
      true,
    ],
  ] as const
) {
  test(`ai-sdk: ${name}`, async () => {
    const { root, toolset, cleanup } = await diskToolset();
    try {
      const once = toAISDKTools(toolset);
      const tools = () => fresh ? toAISDKTools(toolset) : once;
      const model = callsOnceLanguageModel(
        SHARED_ID.map(({ id, command }) => ({ name: "bash", args: { command }, callId: id })),
      );
      const first = await generateText({ model, tools: tools(), prompt: "Touch" });
      const requests = first.content.filter((part) => part.type === "tool-approval-request");
      // The SDK keys approvals by id: one request, for the second input; the person approves it.
      assert.equal(requests.length, 1);
      assert.match(await describeApprovalRequest(toolset, requests[0]), /run `touch second`/);
      const messages: ModelMessage[] = [
        { role: "user", content: "Touch" },
        ...first.response.messages,
        {
          role: "tool",
          content: [{
            type: "tool-approval-response",
            approvalId: requests[0].approvalId,
            approved: true,
          }],
        },
      ];
      await generateText({ model, tools: tools(), messages });
      assert.deepEqual(await readdir(root), [], "neither command ran");
      const outputs = model.doGenerateCalls[1].prompt.filter((m) => m.role === "tool")
        .flatMap((m) => m.content as { type: string; output?: { type: string; value: string } }[])
        .flatMap((part) => part.output === undefined ? [] : [part.output]);
      assert.ok(outputs.length > 0);
      for (const output of outputs) {
        assert.equal(output.type, "error-text");
        assert.match(output.value, /^Error \(denied\): Several calls with different inputs share/);
      }
    } finally {
      await cleanup();
    }
  });
}

test("ai-sdk: a call whose input is not the one its approval was asked about is refused", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const { bash } = toAISDKTools(toolset);
    const asked = await bash.needsApproval!({ command: "touch shown" }, { toolCallId: "call-1" });
    assert.equal(asked, true);
    let result: unknown;
    for await (const output of bash.execute({ command: "touch other" }, { toolCallId: "call-1" })) {
      result = output;
    }
    const { ok, output } = result as { ok: boolean; output: string };
    assert.equal(ok, false);
    assert.match(
      output,
      /^Error \(denied\): This call's input is not the one the person was asked/,
    );
    assert.deepEqual(await readdir(root), []);
  } finally {
    await cleanup();
  }
});

test("openai-agents: two calls sharing an id with different inputs never run, through the SDK's run or through the tools alone", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    // Through the SDK, driven by a model: the run refuses the response, naming the shared id.
    const agent = new Agent({
      name: "coder",
      tools: toOpenAIAgentsTools(toolset),
      model: new CallsOnceModel(
        SHARED_ID.map(({ id, command }) => ({ name: "bash", args: { command }, callId: id })),
      ),
    });
    await assert.rejects(new Runner().run(agent, "Touch"), /Tool call ID dup/);
    assert.deepEqual(await readdir(root), []);

    // The tools alone, as a host or an SDK that lets both through calls them: both refused.
    const results: { ok: boolean; output: string }[] = [];
    const bash = toOpenAIAgentsTools(toolset, { onResult: (r) => results.push(r) })
      .find((tool) => tool.name === "bash")!;
    const context = new RunContext();
    for (const { id, command } of SHARED_ID) {
      assert.equal(await bash.needsApproval(context, { command }, id), true);
    }
    for (const { id, command } of SHARED_ID) {
      const toolCall = { type: "function_call", callId: id, name: "bash", arguments: "" };
      await bash.invoke(context, JSON.stringify({ command }), { toolCall });
    }
    assert.deepEqual(await readdir(root), [], "neither command ran");
    assert.equal(results.length, 2);
    for (const result of results) {
      assert.equal(result.ok, false);
      assert.match(result.output, /^Error \(denied\): Several calls with different inputs share/);
    }
  } finally {
    await cleanup();
  }
});
