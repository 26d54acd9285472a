// Type-checked with tsc --noEmit (moduleResolution nodenext) against the shipped .d.ts, in a
// project that also installs the model SDKs: each converter's result must be assignable to the
// SDK's own parameter type, with no cast.
import {
  type BashOutput,
  createSession,
  type FinalizedToolset,
  finalizeToolset,
  type ReadOutput,
  toAnthropicTools,
  toGeminiFunctionDeclarations,
  type ToolResult,
  toOpenAIResponsesTools,
  toOpenAITools,
  toStrictJsonSchema,
} from "@openwork/tools";
import { createNodeFileSystem } from "@openwork/tools/node";
import { toAISDKTools } from "@openwork/tools/ai-sdk";
import { toOpenAIAgentsTools } from "@openwork/tools/openai-agents";
import type { ToolSet } from "ai";
import { Agent } from "@openai/agents";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type {
  FunctionTool,
  ResponseCreateParamsNonStreaming,
  Tool as ResponsesTool,
} from "openai/resources/responses/responses";
import type {
  MessageCreateParamsNonStreaming,
  Tool as AnthropicTool,
} from "@anthropic-ai/sdk/resources/messages";
import type { FunctionDeclaration, GenerateContentParameters } from "@google/genai";

export async function useIt(directory: string): Promise<number | null> {
  const session = await createSession({
    workingDirectory: directory,
    filesystem: createNodeFileSystem(),
    permissions: { mode: "plan" },
  });
  const toolset: FinalizedToolset = finalizeToolset({ session, select: ["bash", "read"] });
  const tools = toOpenAITools(toolset.definitions);
  const result: ToolResult = await toolset.call({
    name: tools[0].function.name,
    input: { command: "pwd" },
    callId: "1",
  });
  return (result.data as BashOutput).exit_code;
}

export function modelRequests(toolset: FinalizedToolset): unknown[] {
  const { definitions } = toolset;
  const chatTools: ChatCompletionTool[] = toOpenAITools(definitions);
  const chatStrict: ChatCompletionFunctionTool[] = toOpenAITools(definitions, { strict: true });
  const chat: ChatCompletionCreateParamsNonStreaming = {
    model: "gpt-test",
    messages: [{ role: "user", content: "hi" }],
    tools: toOpenAITools(definitions, { strict: true }),
  };
  const responsesTools: FunctionTool[] = toOpenAIResponsesTools(definitions);
  const responsesStrict: ResponsesTool[] = toOpenAIResponsesTools(definitions, { strict: true });
  const responses: ResponseCreateParamsNonStreaming = {
    model: "gpt-test",
    input: "hi",
    tools: toOpenAIResponsesTools(definitions, { strict: true }),
  };
  const anthropicTools: AnthropicTool[] = toAnthropicTools(definitions);
  const anthropic: MessageCreateParamsNonStreaming = {
    model: "claude-test",
    max_tokens: 1024,
    messages: [{ role: "user", content: "hi" }],
    tools: toAnthropicTools(definitions),
  };
  const declarations: FunctionDeclaration[] = toGeminiFunctionDeclarations(definitions);
  const gemini: GenerateContentParameters = {
    model: "gemini-test",
    contents: "hi",
    config: { tools: [{ functionDeclarations: toGeminiFunctionDeclarations(definitions) }] },
  };
  // A caller may change what it was given: the results are mutable.
  anthropicTools[0].input_schema.required?.push("path");
  chatStrict[0].function.parameters = toStrictJsonSchema(definitions[0].inputSchema);

  // The checks above have teeth: the shapes the converters replace are refused.
  const wrong: unknown[] = [
    // @ts-expect-error a frozen definition's readonly `required` is not an Anthropic input schema
    definitions.map((d): AnthropicTool => ({ name: d.name, input_schema: d.inputSchema })),
    // @ts-expect-error the Responses shape is not a Chat Completions tool
    toOpenAIResponsesTools(definitions) satisfies ChatCompletionTool[],
    // @ts-expect-error the Chat Completions shape is not a Responses function tool
    toOpenAITools(definitions) satisfies FunctionTool[],
    // @ts-expect-error Gemini's `parameters` takes its OpenAPI subset, not JSON Schema
    definitions.map((d): FunctionDeclaration => ({ name: d.name, parameters: d.inputSchema })),
  ];
  return [
    chatTools,
    chat,
    responsesTools,
    responsesStrict,
    responses,
    anthropic,
    declarations,
    gemini,
    wrong,
  ];
}

// The shipped declarations keep calls typed: names, inputs, data, and the result's union.
export async function typed(directory: string): Promise<string> {
  const toolset = finalizeToolset({
    session: await createSession({ workingDirectory: directory }),
  });
  const read = await toolset.call({ name: "read", input: { path: "a.txt" }, callId: "1" });
  const lines: readonly string[] | undefined = read.data?.lines;
  const data: ReadOutput | undefined = read.data;
  // @ts-expect-error: no tool is named grepp.
  await toolset.call({ name: "grepp", input: {}, callId: "2" });
  // @ts-expect-error: read's path is a string.
  await toolset.prepare("read", { path: 1 });
  // @ts-expect-error: error is there only when ok is false.
  read.error.code;
  const fromModel: { name: string; input: unknown } = JSON.parse('{"name":"list","input":{}}');
  const raw = await toolset.call({ ...fromModel, callId: "3" });
  return read.ok
    ? `${lines?.length ?? 0} ${data?.path ?? ""}`
    : `${read.error.code} ${raw.ok ? "" : raw.error.message}`;
}

// The adapter entry points, through the package's exports, give what each framework takes.
export function frameworks(toolset: FinalizedToolset): unknown[] {
  const tools: ToolSet = toAISDKTools(toolset);
  const agent = new Agent({ name: "coder", tools: toOpenAIAgentsTools(toolset) });
  return [tools, agent];
}
