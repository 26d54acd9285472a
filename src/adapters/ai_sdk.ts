/**
 * A finalized toolset as a Vercel AI SDK `ToolSet`: each tool runs through
 * the toolset with the SDK's abort signal, asks for approval through the
 * SDK's approval flow when the policy says ask, streams bash output as
 * preliminary results and shows the model exactly the result's `output`.
 *
 * The returned objects are declared here, structurally, so the public
 * signatures name no npm type; they are assignable to the `ToolSet` of AI
 * SDK 6 and of AI SDK 7, and use only what both do alike.
 *
 * @module
 */
import type { ApprovalRequest, FinalizedToolset } from "../contract/toolset.ts";
import type { ApprovalAnswer, Policy } from "../contract/policy.ts";
import type { ProgressSink, ToolProgress, ToolResult } from "../contract/result.ts";
import { toPassThroughSchema } from "../contract/converters.ts";
import type { JsonSchemaRequest, PassThroughSchema } from "../contract/converters.ts";
import { decide } from "../permissions/policy.ts";
import { anySignal } from "../runtime/signals.ts";
import { approvedBefore, AskedCalls, asksApproval, callKey, questionFor } from "./shared.ts";

/** How the SDK asks a tool's schema for its JSON Schema. */
export type AISDKJsonSchemaOptions = JsonSchemaRequest;

/**
 * A tool's input schema as the SDK reads it: a Standard Schema whose
 * validation accepts everything (the toolset validates, so bad input becomes
 * a result the model sees) and whose JSON Schema is the tool's, a fresh
 * mutable copy on every request.
 */
export type AISDKInputSchema = PassThroughSchema;

/** What a running call yields before its result: the command's output so far. */
export interface AISDKToolProgress {
  /** Always `"running"`: the final output is a {@link ToolResult}, which has no `status`. */
  readonly status: "running";
  /** The tail of stdout and stderr so far, as they arrived (at most 32 KiB). */
  readonly output: string;
}

/** What a tool yields: progress snapshots (preliminary results), then the {@link ToolResult}. */
export type AISDKToolOutput = AISDKToolProgress | ToolResult;

/** What the model is shown of a result: the result's `output`, as an error when the call failed. */
export interface AISDKModelOutput {
  /** `text` for a successful call, `error-text` for a failed one. */
  readonly type: "text" | "error-text";
  /** The result's `output`, verbatim. */
  readonly value: string;
}

/** The per-call options the SDK passes to `execute`. */
export interface AISDKExecutionOptions {
  /** The SDK's id of the tool call; it becomes the result's `callId`. */
  readonly toolCallId: string;
  /** Aborts the call; a running command's whole process group is stopped. */
  readonly abortSignal?: AbortSignal;
}

/** What the SDK passes to `needsApproval`. */
export interface AISDKApprovalCheckOptions {
  /** The SDK's id of the tool call. */
  readonly toolCallId: string;
  /**
   * The conversation so far, as the SDK passes it: when it resumes an
   * approved call, the history that holds the call. Two tool calls in it
   * under this call's id make its approval ambiguous, and the call is refused.
   */
  readonly messages?: readonly unknown[];
}

/** One tool in the shape of the AI SDK's `Tool` (assignable to it). */
export interface AISDKTool {
  /** The tool's description, as the toolset defines it. */
  readonly description: string;
  /** The tool's input schema. */
  readonly inputSchema: AISDKInputSchema;
  /**
   * Whether a call waits for the SDK's approval flow: true exactly when the
   * policy's verdict is `ask`. Absent when the host approves through
   * {@link AISDKToolsOptions.approve}.
   */
  readonly needsApproval?: (
    input: unknown,
    options: AISDKApprovalCheckOptions,
  ) => Promise<boolean>;
  /** Runs the call, yielding progress snapshots and then the result. */
  readonly execute: (
    input: unknown,
    options: AISDKExecutionOptions,
  ) => AsyncIterable<AISDKToolOutput>;
  /** What the model sees of the result: its `output` text, once. */
  readonly toModelOutput: (options: { readonly output: AISDKToolOutput }) => AISDKModelOutput;
}

/** The tools by name, in the shape of the AI SDK's `ToolSet` (assignable to it). */
export type AISDKToolSet = Record<string, AISDKTool>;

/** Options of {@link toAISDKTools}. */
export interface AISDKToolsOptions {
  /**
   * Decides `ask` verdicts in-process when the call runs. With it, tools have
   * no `needsApproval` and never pause the generation; without it, an `ask`
   * verdict is the SDK's `tool-approval-request`, and an approved call runs
   * without being asked again.
   */
  readonly approve?: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
  /**
   * The policy the toolset was finalized with (default: the reference
   * policy, `decide`). `needsApproval` applies it to know which calls ask.
   */
  readonly policy?: Policy;
  /** Receives every progress event of every call, with the SDK's tool call id. */
  readonly onProgress?: (event: ToolProgress, toolCallId: string) => void;
}

/** Most characters of output a progress snapshot keeps (its tail). */
const PROGRESS_TAIL_CHARS = 32 * 1024;

/**
 * Runs `start` and yields a snapshot of the output so far whenever new
 * output arrived since the last one the consumer took (bursts coalesce into
 * one snapshot), then the call's result. A consumer that stops reading
 * before the result cancels the call, as `outer` aborting does.
 */
async function* progressStream(
  start: (progress: ProgressSink, signal: AbortSignal) => Promise<ToolResult>,
  outer: AbortSignal | undefined,
): AsyncGenerator<AISDKToolOutput> {
  const abandoned = new AbortController();
  const combined = anySignal(outer === undefined ? [abandoned.signal] : [outer, abandoned.signal]);
  try {
    yield* relayed(start, combined.signal);
  } finally {
    abandoned.abort();
    combined.release();
  }
}

/** The snapshots and result of {@link progressStream}, the call running under `signal`. */
async function* relayed(
  start: (progress: ProgressSink, signal: AbortSignal) => Promise<ToolResult>,
  signal: AbortSignal,
): AsyncGenerator<AISDKToolOutput> {
  let text = "";
  let fresh = false;
  let settled: { result: ToolResult } | { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const progress = (event: ToolProgress) => {
    if (event.kind === "message") return;
    text = (text + event.chunk).slice(-PROGRESS_TAIL_CHARS);
    fresh = true;
    notify();
  };
  start(progress, signal).then(
    (result) => settled = { result },
    (error) => settled = { error },
  ).finally(notify);
  while (settled === undefined) {
    if (!fresh) await new Promise<void>((resolve) => wake = resolve);
    if (settled !== undefined) break;
    if (fresh) {
      fresh = false;
      yield { status: "running", output: text };
    }
  }
  if ("error" in settled) throw settled.error;
  yield settled.result;
}

/**
 * How many tool calls under `toolCallId` the conversation holds (the
 * `tool-call` parts of its assistant messages). The SDK's history keeps one
 * part per call, and ids are unique, so more than one means calls that
 * shared the id: the SDK then resumes whichever its lookup by id finds, not
 * necessarily the one the person was shown.
 */
function callsWithId(messages: readonly unknown[] | undefined, toolCallId: string): number {
  let count = 0;
  for (const message of messages ?? []) {
    const { role, content } = (message ?? {}) as { role?: unknown; content?: unknown };
    if (role !== "assistant" || !Array.isArray(content)) continue;
    for (const part of content) {
      const { type, toolCallId: id } = (part ?? {}) as { type?: unknown; toolCallId?: unknown };
      if (type === "tool-call" && id === toolCallId) count++;
    }
  }
  return count;
}

/**
 * The toolset's tools as an AI SDK `ToolSet`, for `generateText`,
 * `streamText` or an `Agent`.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { toAISDKTools } from "@openwork/tools/ai-sdk";
 *
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * const tools = toAISDKTools(toolset);
 * // generateText({ model, tools, prompt: "List the TypeScript files." })
 * console.log(Object.keys(tools)); // ["read", "write", "edit", "grep", "glob", "list", "bash"]
 * ```
 */
export function toAISDKTools(
  toolset: FinalizedToolset,
  options: AISDKToolsOptions = {},
): AISDKToolSet {
  const policy = options.policy ?? decide;
  const { permissions } = toolset.session;
  const tools: AISDKToolSet = {};
  // The calls whose needsApproval asked, with their inputs. Only those run an `ask` verdict,
  // and only with the input asked about: the SDK consults needsApproval again when it resumes
  // an approved call, AI SDK 7 skips it altogether under a host's own toolApproval function
  // (whose calls must not run unasked), and the SDK keys approvals by call id, so of two calls
  // sharing an id it may show the person one and run the other. A host that makes its tools
  // afresh for the request that answers an approval keeps no record of the first request's
  // checks: the history the SDK resumes from then tells whether the id was shared.
  const asked = new AskedCalls();
  for (const definition of toolset.definitions) {
    const { name } = definition;
    const needsApproval = async (
      input: unknown,
      { toolCallId, messages }: AISDKApprovalCheckOptions,
    ): Promise<boolean> => {
      const asks = await asksApproval(toolset, policy, name, input);
      if (asks && callsWithId(messages, toolCallId) > 1) asked.ambiguous(toolCallId);
      else if (asks) asked.ask(toolCallId, callKey(name, input));
      return asks;
    };
    const approvedBySDK = (input: unknown, toolCallId: string) => {
      const binding = asked.take(toolCallId, callKey(name, input));
      return "refused" in binding
        ? approvedBefore(policy, permissions, true, binding.refused)
        : approvedBefore(policy, permissions, !binding.asked);
    };
    tools[name] = {
      description: definition.description,
      inputSchema: toPassThroughSchema(definition),
      ...(options.approve === undefined ? { needsApproval } : {}),
      execute: (input, { toolCallId, abortSignal }) =>
        progressStream((progress, signal) =>
          toolset.call({
            name,
            input,
            callId: toolCallId,
            signal,
            progress: (event) => {
              options.onProgress?.(event, toolCallId);
              progress(event);
            },
            approve: options.approve ?? approvedBySDK(input, toolCallId),
          }), abortSignal),
      toModelOutput: ({ output }) => ({
        type: "ok" in output && !output.ok ? "error-text" : "text",
        value: output.output,
      }),
    };
  }
  return tools;
}

/** A `tool-approval-request` of the SDK, as far as its question needs it. */
export interface AISDKApprovalRequest {
  /** The call the request holds. */
  readonly toolCall: {
    /** The tool's name. */
    readonly toolName: string;
    /** The call's input, as the model sent it. */
    readonly input: unknown;
  };
}

/**
 * The question to show the person for a `tool-approval-request`: every
 * effect of the call in full, with control, invisible and look-alike characters escaped
 * and the length of a long command stated (the toolset's `approvalQuestion`).
 * Show it instead of the raw input, which the model wrote and which may
 * hold text that rewrites or hides itself on a terminal or a page.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { describeApprovalRequest } from "@openwork/tools/ai-sdk";
 *
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * const request = { toolCall: { toolName: "bash", input: { command: "make\u001b[8m" } } };
 * console.log(await describeApprovalRequest(toolset, request));
 * // Allow bash: run `make\u{1b}[8m`? (bash.not_proven_read_only)
 * ```
 */
export function describeApprovalRequest(
  toolset: FinalizedToolset,
  request: AISDKApprovalRequest,
  options: { readonly policy?: Policy } = {},
): Promise<string> {
  const { toolName, input } = request.toolCall;
  return questionFor(toolset, options.policy ?? decide, toolName, input);
}
