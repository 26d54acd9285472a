/**
 * A finalized toolset as function tools of the OpenAI Agents SDK
 * (`@openai/agents`): strict schemas, calls run through the toolset with the
 * run's abort signal, and a call the policy asks for is an interruption the
 * host resolves with `state.approve()` or `state.reject()`.
 *
 * The returned objects are declared here, structurally, so the public
 * signatures name no npm type; they are assignable to the SDK's `Tool`.
 *
 * @module
 */
import { tool } from "@openai/agents";
import type { ApprovalRequest, FinalizedToolset } from "../contract/toolset.ts";
import type { ApprovalAnswer, Policy } from "../contract/policy.ts";
import type { ToolProgress, ToolResult } from "../contract/result.ts";
import { toStrictJsonSchema } from "../contract/strict_schema.ts";
import { decide } from "../permissions/policy.ts";
import { visibleText } from "../contract/visible_text.ts";
import {
  approvedBefore,
  AskedCalls,
  asksApproval,
  CallIds,
  callKey,
  questionFor,
} from "./shared.ts";

/** A tool's parameters in strict mode: every field required, optional ones nullable. */
export interface OpenAIAgentsParameters {
  /** Always `"object"`. */
  type: "object";
  /** The input fields' schemas. */
  properties: Record<string, Record<string, unknown>>;
  /** Every field. */
  required: string[];
  /** Always `false`. */
  additionalProperties: false;
}

/** One function tool in the shape of the Agents SDK's `FunctionTool` (assignable to it). */
export interface OpenAIAgentsTool {
  /** Always `"function"`. */
  readonly type: "function";
  /** The tool's name, as the toolset defines it. */
  readonly name: string;
  /** The tool's description. */
  readonly description: string;
  /** The strict JSON Schema of its input. */
  readonly parameters: OpenAIAgentsParameters;
  /** Always `true`: the model's arguments follow the schema exactly. */
  readonly strict: true;
  /** Runs a call from its JSON arguments; resolves to the text the model sees. */
  readonly invoke: (runContext: unknown, input: string, details?: unknown) => Promise<unknown>;
  /** True exactly when the policy's verdict on the call is `ask`. */
  readonly needsApproval: (
    runContext: unknown,
    input: unknown,
    callId?: string,
  ) => Promise<boolean>;
  /** Whether the tool is offered in this run (always). */
  readonly isEnabled: (runContext: unknown, agent: unknown) => Promise<boolean>;
}

/** Options of {@link toOpenAIAgentsTools}. */
export interface OpenAIAgentsToolsOptions {
  /**
   * Decides `ask` verdicts in-process when the call runs. With it, calls are
   * never interruptions; without it, an `ask` verdict interrupts the run, and
   * a call the host approved (`state.approve()`) runs without being asked again.
   */
  readonly approve?: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
  /**
   * The policy the toolset was finalized with (default: the reference
   * policy, `decide`). `needsApproval` applies it to know which calls ask.
   */
  readonly policy?: Policy;
  /** Receives every progress event of every call, with the call's id. */
  readonly onProgress?: (event: ToolProgress, callId: string) => void;
  /** Receives every call's full result (its `data` and `artifacts` among it). */
  readonly onResult?: (result: ToolResult) => void;
}

/** The call id the SDK gives in a tool call's details, or a fresh one. */
function callIdOf(details: unknown): string {
  const call = (details as { toolCall?: { callId?: unknown } } | undefined)?.toolCall;
  return typeof call?.callId === "string" ? call.callId : crypto.randomUUID();
}

/** The run's abort signal from a tool call's details, when it has one. */
function signalOf(details: unknown): AbortSignal | undefined {
  const signal = (details as { signal?: unknown } | undefined)?.signal;
  return signal instanceof AbortSignal ? signal : undefined;
}

/**
 * The toolset's tools as function tools for an Agents SDK `Agent`.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { toOpenAIAgentsTools } from "@openwork/tools/openai-agents";
 *
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * const tools = toOpenAIAgentsTools(toolset);
 * // const agent = new Agent({ name: "coder", instructions: "…", tools });
 * console.log(tools.map((t) => t.name)); // ["read", "write", "edit", "grep", "glob", "list", "bash"]
 * ```
 */
export function toOpenAIAgentsTools(
  toolset: FinalizedToolset,
  options: OpenAIAgentsToolsOptions = {},
): OpenAIAgentsTool[] {
  const policy = options.policy ?? decide;
  const { permissions } = toolset.session;
  const unasked = new CallIds();
  // The inputs asked about, per run (its context object, kept across an approval's resume):
  // an approval runs only the input the person was shown under its call id.
  const askedByRun = new WeakMap<object, AskedCalls>();
  const noContext = new AskedCalls();
  const askedIn = (context: unknown): AskedCalls => {
    if (context === null || typeof context !== "object") return noContext;
    let asked = askedByRun.get(context);
    if (asked === undefined) askedByRun.set(context, asked = new AskedCalls());
    return asked;
  };
  return toolset.definitions.map((definition): OpenAIAgentsTool => {
    const { name } = definition;
    const parameters = toStrictJsonSchema(definition.inputSchema) as OpenAIAgentsParameters;
    // The SDK's own type is wider (any schema, any strictness); these tools are strict.
    return tool({
      name,
      description: definition.description,
      parameters,
      strict: true,
      needsApproval: options.approve !== undefined ? false : async (context, input, callId) => {
        const asks = await asksApproval(toolset, policy, name, input);
        if (!asks && callId !== undefined) unasked.add(callId);
        if (asks && callId !== undefined) askedIn(context).ask(callId, callKey(name, input));
        return asks;
      },
      execute: async (input, context, details) => {
        const callId = callIdOf(details);
        const signal = signalOf(details);
        // A call the check never asked about here (a run resumed from saved state) is approved
        // as the SDK resumes it; one asked about runs only with the input asked about.
        const binding = askedIn(context).take(callId, callKey(name, input));
        const result = await toolset.call({
          name,
          input,
          callId,
          ...(signal === undefined ? {} : { signal }),
          ...(options.onProgress === undefined
            ? {}
            : { progress: (event: ToolProgress) => options.onProgress!(event, callId) }),
          approve: options.approve ??
            approvedBefore(
              policy,
              permissions,
              unasked.take(callId),
              "refused" in binding ? binding.refused : undefined,
            ),
        });
        options.onResult?.(result);
        return result.output;
      },
    }) as OpenAIAgentsTool;
  });
}

/** An interruption of the SDK (a `RunToolApprovalItem`), as far as its question needs it. */
export interface OpenAIAgentsApprovalItem {
  /** The tool's name. */
  readonly name?: string | undefined;
  /** The call's arguments, the JSON text the model sent. */
  readonly arguments?: string | undefined;
}

/**
 * The question to show the person for one of `result.interruptions`: every
 * effect of the call in full, with control, invisible and look-alike characters escaped
 * and the length of a long command stated (the toolset's `approvalQuestion`).
 * Show it instead of the raw arguments, which the model wrote and which may
 * hold text that rewrites or hides itself on a terminal or a page.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { describeInterruption } from "@openwork/tools/openai-agents";
 *
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * const item = { name: "bash", arguments: JSON.stringify({ command: "make\u001b[8m" }) };
 * console.log(await describeInterruption(toolset, item));
 * // Allow bash: run `make\u{1b}[8m`? (bash.not_proven_read_only)
 * ```
 */
export function describeInterruption(
  toolset: FinalizedToolset,
  item: OpenAIAgentsApprovalItem,
  options: { readonly policy?: Policy } = {},
): Promise<string> {
  let input: unknown;
  try {
    input = JSON.parse(item.arguments ?? "{}");
  } catch {
    return Promise.resolve(
      `${visibleText(item.name ?? "")}: nothing to approve; the call's arguments are not JSON.`,
    );
  }
  return questionFor(toolset, options.policy ?? decide, item.name ?? "", input);
}
