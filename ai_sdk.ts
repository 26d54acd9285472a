/**
 * The tools for the Vercel AI SDK (`ai` 6 or 7, an optional peer dependency):
 * `toAISDKTools(toolset)` gives a `ToolSet` for `generateText`, `streamText`
 * or an `Agent`. A call the policy asks for pauses as the SDK's
 * `tool-approval-request`, which `describeApprovalRequest` turns into the
 * question to show the person (the call's effects in full, escaped), and the
 * approval runs only the input it was asked about; the SDK's abort signal
 * stops a running command's whole process group; bash output streams as
 * preliminary results; the model sees exactly each result's `output`.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { toAISDKTools } from "@openwork/tools/ai-sdk";
 *
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * const tools = toAISDKTools(toolset);
 * // const { text } = await generateText({ model, tools, prompt: "What does README.md say?" });
 * console.log(Object.keys(tools));
 * ```
 *
 * @module
 */
export { describeApprovalRequest, toAISDKTools } from "./src/adapters/ai_sdk.ts";
export type {
  AISDKApprovalCheckOptions,
  AISDKApprovalRequest,
  AISDKExecutionOptions,
  AISDKInputSchema,
  AISDKJsonSchemaOptions,
  AISDKModelOutput,
  AISDKTool,
  AISDKToolOutput,
  AISDKToolProgress,
  AISDKToolSet,
  AISDKToolsOptions,
} from "./src/adapters/ai_sdk.ts";
