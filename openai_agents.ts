/**
 * The tools for the OpenAI Agents SDK (`@openai/agents` 0.20 or a later 0.x,
 * an optional peer dependency): `toOpenAIAgentsTools(toolset)` gives strict function tools for
 * an `Agent`. A call the policy asks for interrupts the run
 * (`result.interruptions`); the host shows the person `describeInterruption`
 * of each (the call's effects in full, escaped), answers with
 * `result.state.approve()` or `reject()` and runs the state again; an
 * approval runs only the input it was asked about. The run's abort signal
 * stops a running command's whole process group; the model sees exactly
 * each result's `output`.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { toOpenAIAgentsTools } from "@openwork/tools/openai-agents";
 *
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * const tools = toOpenAIAgentsTools(toolset);
 * // const agent = new Agent({ name: "coder", instructions: "Fix the failing test.", tools });
 * console.log(tools.map((t) => t.name));
 * ```
 *
 * @module
 */
export { describeInterruption, toOpenAIAgentsTools } from "./src/adapters/openai_agents.ts";
export type {
  OpenAIAgentsApprovalItem,
  OpenAIAgentsParameters,
  OpenAIAgentsTool,
  OpenAIAgentsToolsOptions,
} from "./src/adapters/openai_agents.ts";
