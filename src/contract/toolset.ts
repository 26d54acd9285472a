/**
 * The {@link FinalizedToolset}: where registry, selection, session and calls
 * meet. Its definitions and its dispatch are built from the same selected
 * entries and frozen; nothing can be added, removed or replaced afterwards.
 *
 * @module
 */
import type { ToolCallContext, ToolSessionContext } from "./context.ts";
import type { ToolEffect, ToolRisk } from "./effects.ts";
import type { ToolErrorInfo } from "../errors.ts";
import type { ProgressSink, ToolResult } from "./result.ts";
import type { JsonSchemaObject } from "./schema.ts";
import type { AnyTool, Tool } from "./tool.ts";
import { deepFreeze } from "./tool.ts";
import { failedResult, interruptionOf, parseInput, runTool } from "./run.ts";
import type { ToolRegistry } from "./registry.ts";
import { toToolError } from "../backends/errors.ts";
import { PID_NAMESPACE_STATEMENT } from "../backends/pid_namespace/namespaced_processes.ts";
import type { ApprovalAnswer, Policy, PolicyDecision } from "./policy.ts";
import { describeEffects } from "./effects.ts";
import { approvalQuestion } from "./approval_question.ts";
import { annotationsFor } from "./annotations.ts";
import { anySignal } from "../runtime/signals.ts";
import { callRequestProblem } from "./call_request.ts";
import type { ToolAnnotations } from "./annotations.ts";

/** What a model is told about one tool, and what a host may show of it. */
export interface ToolDefinition {
  /** The model-facing name. */
  readonly name: string;
  /** What the tool does. */
  readonly description: string;
  /** The JSON Schema of its input. */
  readonly inputSchema: JsonSchemaObject;
  /** A short human-readable title (the tool's `title`, or its name). */
  readonly title: string;
  /** The title and the behaviour hints of the tool's risk class (`RISK_HINTS`). */
  readonly annotations: ToolAnnotations;
  /** The JSON Schema of a successful result's `data`, when the tool declares one. */
  readonly outputSchema?: JsonSchemaObject;
}

/** The model-facing names of `Tools`: `"read" | "write" | …` for the built-in seven. */
export type ToolName<Tools extends AnyTool> = Tools["name"];

/**
 * Any string, with `Tools`' names listed first: editors offer those names
 * for completion, and {@link CallName} rejects a literal that is none of them.
 * (`string & Record<never, never>` keeps the union from collapsing to `string`.)
 */
export type SuggestedName<Tools extends AnyTool> =
  | ToolName<Tools>
  | (string & Record<never, never>);

/**
 * The input type of a tool (of each, for a union of tools).
 *
 * @example
 * ```ts
 * import type { InputOf, readTool } from "@openwork/tools";
 * const input: InputOf<typeof readTool> = { path: "README.md", limit: 20 };
 * ```
 */
export type InputOf<T extends AnyTool> = T extends Tool<infer Input, infer _Output, infer _Name>
  ? Input
  : never;

/** The output (`data`) type of a tool (of each, for a union of tools). */
export type OutputOf<T extends AnyTool> = T extends Tool<infer _Input, infer Output, infer _Name>
  ? Output
  : never;

/**
 * What a call's `name` may be, given the name as written (`Name`): a `string`
 * that is not a literal (a model's JSON) is taken as is and checked at run
 * time; a literal must be one of `Tools`' names, so a misspelt name is a type
 * error.
 */
export type CallName<Tools extends AnyTool, Name extends string> = string extends Name ? Name
  : string extends ToolName<Tools> ? Name
  : Name extends ToolName<Tools> ? Name
  : ToolName<Tools>;

/**
 * What a call's `input` must be: the named tool's input type for a literal
 * name, `unknown` (validated at run time) for a `string` name or a toolset
 * whose names are untyped.
 */
export type CallInput<Tools extends AnyTool, Name extends string> = string extends Name ? unknown
  : string extends ToolName<Tools> ? unknown
  : InputOf<Extract<Tools, { readonly name: Name }>>;

/**
 * The type of a result's `data` for a call: the named tool's output type for a
 * literal name, `unknown` for a `string` name or an untyped toolset.
 */
export type CallData<Tools extends AnyTool, Name extends string> = string extends Name ? unknown
  : string extends ToolName<Tools> ? unknown
  : OutputOf<Extract<Tools, { readonly name: Name }>>;

/**
 * A validated call whose effects are known, ready for the host's decision.
 * `Name` and `Input` are the literal name and the tool's input type when the
 * call was typed; `string` and `unknown` for a raw call.
 */
export type PreparedCall<Name extends string = string, Input = unknown> =
  | {
    /** Validation and path resolution passed. */
    readonly ok: true;
    /** The tool's name. */
    readonly name: Name;
    /** The tool's stable id. */
    readonly toolId: string;
    /** The tool's risk class. */
    readonly risk: ToolRisk;
    /** The validated input. */
    readonly input: Input;
    /** What the call would do. */
    readonly effects: readonly ToolEffect[];
  }
  | {
    /** The call cannot run as given. */
    readonly ok: false;
    /** The tool's name as asked. */
    readonly name: Name;
    /** The tool's stable id, or empty when the name is unknown. */
    readonly toolId: string;
    /** Why it cannot run. */
    readonly error: ToolErrorInfo;
  };

/** Options of {@link FinalizedToolset.prepare}. */
export interface PrepareOptions {
  /**
   * Aborts the preparation: resolving effects (classifying a command) stops,
   * and the prepared call is a failure with the code `cancelled`, or
   * `timed_out` when the signal's reason is a `TimeoutError`.
   */
  readonly signal?: AbortSignal;
}

/** The per-call part a host passes to {@link FinalizedToolset.execute}. */
export interface CallOptions {
  /** The call's id. */
  readonly callId: string;
  /** The turn's signal: aborting it cancels every active call. */
  readonly signal?: AbortSignal;
  /** Epoch milliseconds after which the call is stopped. */
  readonly deadline?: number;
  /** Receives progress events. */
  readonly progress?: ProgressSink;
}

/** What the person is asked when the policy says ask. */
export interface ApprovalRequest {
  /** The prepared call. */
  readonly prepared: Extract<PreparedCall, { ok: true }>;
  /** The policy's verdict (always `ask` here). */
  readonly verdict: PolicyDecision;
  /** The call's signal: a question still open when it aborts should be withdrawn. */
  readonly signal: AbortSignal;
  /**
   * What to ask the person ({@link approvalQuestion}): every effect in full,
   * with control, invisible and look-alike characters escaped, so it can be printed on a
   * terminal or shown as it is. Show this, not the raw input.
   */
  readonly question: string;
}

/**
 * A whole call: name, input, and the per-call options. Typed calls fill
 * `Name` and `Input` from the toolset (see {@link FinalizedToolset.call});
 * the defaults describe a raw call, a model's JSON as it arrived.
 */
export interface CallRequest<Name extends string = string, Input = unknown> extends CallOptions {
  /** The tool's model-facing name. */
  readonly name: Name;
  /** The input: the raw JSON the model sent, or the tool's typed input. */
  readonly input: Input;
  /**
   * Receives every `ask` verdict of the reference policy, which decides every
   * call: `allow` runs, `deny` or a `false` answer gives a `denied` result.
   * Without it an `ask` verdict is a `denied` result too, whose text tells
   * the host how to approve; a host that owns the decision itself uses
   * `prepare` and `execute`.
   */
  readonly approve?: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
}

/**
 * A frozen toolset bound to a session. `Tools` is the union of its tools'
 * types (the built-in seven for `finalizeToolset({ session })`): a call with a
 * literal name is checked against it (the name must exist, the input must be
 * that tool's, a success's `data` is that tool's output), while a call whose
 * name is a plain `string`, such as a model's JSON forwarded by a host, takes
 * `unknown` input and is validated at run time. `FinalizedToolset` with no
 * argument accepts any toolset.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * const session = await createSession({ workingDirectory: "." });
 * const toolset = finalizeToolset({ session });
 * const typed = await toolset.call({ name: "read", input: { path: "README.md" }, callId: "1" });
 * if (typed.ok) console.log(typed.data?.lines.length);
 * else console.log(typed.error.code);
 * const fromModel: { name: string; arguments: string } = { name: "list", arguments: "{}" };
 * const raw = await toolset.call({
 *   name: fromModel.name,
 *   input: JSON.parse(fromModel.arguments),
 *   callId: "2",
 * });
 * console.log(raw.output);
 * ```
 */
export interface FinalizedToolset<Tools extends AnyTool = AnyTool> {
  /** What the model is told, in a stable order; frozen. */
  readonly definitions: readonly ToolDefinition[];
  /** The session the toolset is bound to. */
  readonly session: ToolSessionContext;
  /** Validates a call and resolves its effects, without running it; `signal` stops it. */
  prepare<const Name extends SuggestedName<Tools>>(
    name: CallName<Tools, Name>,
    input: CallInput<Tools, Name>,
    options?: PrepareOptions,
  ): Promise<PreparedCall<Name, CallInput<Tools, Name>>>;
  /** Runs a prepared call; every path is resolved again at execution. */
  execute<Name extends string>(
    prepared: PreparedCall<Name, unknown>,
    options: CallOptions,
  ): Promise<ToolResult<CallData<Tools, Name>>>;
  /** Prepares and executes in one step. */
  call<const Name extends SuggestedName<Tools>>(
    request: CallRequest<CallName<Tools, Name>, CallInput<Tools, Name>>,
  ): Promise<ToolResult<CallData<Tools, Name>>>;
}

/** Options of {@link finalizeToolset}. */
export interface FinalizeOptions<
  Tools extends AnyTool = AnyTool,
  Selected extends string = string,
> {
  /** The session to bind. */
  readonly session: ToolSessionContext;
  /** Names to offer (default: every tool the registry knows). Order does not matter. */
  readonly select?: readonly Selected[];
  /** The registry to select from (default: the built-in seven). */
  readonly registry?: ToolRegistry<Tools>;
  /** The permission policy every `call` applies (default: the reference policy, `decide`). */
  readonly policy?: Policy;
}

/**
 * What `select` may hold: a literal must be one of the registry's names
 * (a misspelt one is a type error); a `string` is checked at run time.
 */
export type SelectedName<Tools extends AnyTool, Selected extends string> = CallName<
  Tools,
  Selected
>;

/** The tools of `Tools` a selection of names keeps; all of them for an untyped selection. */
export type SelectedTools<Tools extends AnyTool, Selected extends string> = string extends Selected
  ? Tools
  : Extract<Tools, { readonly name: Selected }>;

/** Whether the permission mode hides a tool entirely. */
function hiddenByMode(session: ToolSessionContext, tool: AnyTool): boolean {
  return session.permissions.mode === "plan" && tool.risk === "write";
}

/** The longest a timer waits: runtimes cut a longer delay to 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The call's own signal: the turn's, and the deadline's. The deadline timer
 * is a plain (referenced) timer, cleared by `done`: Node's AbortSignal.timeout
 * is unreferenced and would let a process exit with the call still pending.
 * A deadline further off than a timer can wait is reached in steps.
 */
function callSignal(options: CallOptions): { signal: AbortSignal; done: () => void } {
  const turn = options.signal ?? new AbortController().signal;
  const at = options.deadline;
  if (at === undefined) return { signal: turn, done: () => {} };
  const deadline = new AbortController();
  let timer: ReturnType<typeof setTimeout>;
  const wait = () => {
    const left = at - Date.now();
    timer = left <= 0
      ? setTimeout(() =>
        deadline.abort(new DOMException("The call's deadline passed.", "TimeoutError"))
      )
      : setTimeout(wait, Math.min(left, MAX_TIMER_MS));
  };
  wait();
  const { signal, release } = anySignal([turn, deadline.signal]);
  return {
    signal,
    done: () => {
      clearTimeout(timer);
      release();
    },
  };
}

/** The toolset's methods as they run: names and inputs untyped, checked at run time. */
interface ErasedToolset {
  readonly definitions: readonly ToolDefinition[];
  readonly session: ToolSessionContext;
  prepare(name: string, raw: unknown, options?: PrepareOptions): Promise<PreparedCall>;
  execute(prepared: PreparedCall, options: CallOptions): Promise<ToolResult>;
  call(request: CallRequest): Promise<ToolResult>;
}

/** Builds a frozen toolset from `registry`'s selected tools under `policy`. Used by `finalizeToolset`. */
export function buildToolset<Tools extends AnyTool>(
  registry: ToolRegistry<Tools>,
  policy: Policy,
  options: FinalizeOptions<Tools>,
): FinalizedToolset<Tools> {
  const { session } = options;
  const known = registry.tools;
  for (const name of options.select ?? []) {
    if (!known.some((t) => t.name === name)) {
      throw new TypeError(
        `finalizeToolset: no tool named ${name}; known: ${registry.names.join(", ")}.`,
      );
    }
  }
  const selected = known.filter((tool) =>
    (options.select === undefined || options.select.includes(tool.name)) &&
    !hiddenByMode(session, tool)
  );
  const dispatch = new Map(selected.map((tool) => [tool.name, tool]));
  const definitions = deepFreeze(selected.map((tool): ToolDefinition => ({
    name: tool.name,
    // A tool that runs commands says what the session's sandbox, or its PID namespace, does to them.
    description: tool.risk === "execute" && session.sandbox !== undefined
      ? `${tool.description} ${session.sandbox.statement}`
      : tool.risk === "execute" && session.processEnding === "pid-namespace"
      ? `${tool.description} ${PID_NAMESPACE_STATEMENT}`
      : tool.description,
    inputSchema: tool.inputSchema,
    title: tool.title ?? tool.name,
    annotations: annotationsFor(tool.title ?? tool.name, tool.risk),
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
  })));
  const issued = new WeakSet<PreparedCall>();

  async function prepare(
    name: string,
    raw: unknown,
    options: PrepareOptions = {},
  ): Promise<PreparedCall> {
    const tool = dispatch.get(name);
    const signal = options.signal ?? new AbortController().signal;
    let prepared: PreparedCall;
    if (signal.aborted) {
      prepared = { ok: false, name, toolId: tool?.id ?? "", error: interruptionOf(signal) };
    } else if (tool === undefined) {
      const names = [...dispatch.keys()].join(", ");
      const message = `There is no tool named ${name}; available: ${names}.`;
      prepared = { ok: false, name, toolId: "", error: { code: "unknown_tool", message } };
    } else {
      const parsed = await parseInput(tool, raw);
      if (!parsed.ok) {
        prepared = { ok: false, name, toolId: tool.id, error: parsed.error };
      } else {
        try {
          const effects = await tool.effects(parsed.input, session, signal);
          // Effects resolved after an abort are not trusted to be whole.
          signal.throwIfAborted();
          prepared = {
            ok: true,
            name,
            toolId: tool.id,
            risk: tool.risk,
            input: parsed.input,
            effects,
          };
        } catch (error) {
          const { code, message } = signal.aborted
            ? interruptionOf(signal)
            : toToolError(error, "prepare", name);
          prepared = { ok: false, name, toolId: tool.id, error: { code, message } };
        }
      }
    }
    deepFreeze(prepared);
    issued.add(prepared);
    return prepared;
  }

  function execute(prepared: PreparedCall, options: CallOptions): Promise<ToolResult> {
    const problem = callRequestProblem(options, "execute");
    if (problem !== null) {
      const given = (options ?? {}) as Partial<CallOptions>;
      const callId = typeof given.callId === "string" ? given.callId : "";
      const known = issued.has(prepared);
      const base = {
        callId,
        toolId: known ? prepared.toolId : "",
        name: known ? prepared.name : "",
      };
      return Promise.resolve(failedResult(base, problem));
    }
    const base = { callId: options.callId, toolId: prepared.toolId, name: prepared.name };
    if (!issued.has(prepared)) {
      const message = "execute() takes only a PreparedCall made by this toolset's prepare().";
      return Promise.resolve(failedResult(base, { code: "invalid_input", message }));
    }
    if (!prepared.ok) return Promise.resolve(failedResult(base, prepared.error));
    const tool = dispatch.get(prepared.name)!;
    if (
      session.permissions.mode === "plan" &&
      policy(session.permissions, prepared.effects).decision === "deny"
    ) {
      const message =
        "Plan mode is read-only: this call would change files or run a command not proven read-only.";
      return Promise.resolve(failedResult(base, { code: "denied", message }));
    }
    const { signal, done } = callSignal(options);
    const call: ToolCallContext = {
      callId: options.callId,
      signal,
      ...(options.deadline === undefined ? {} : { deadline: options.deadline }),
      ...(options.progress === undefined ? {} : { progress: options.progress }),
    };
    return runTool(tool, prepared.input, session, call).finally(done);
  }

  async function call(request: CallRequest): Promise<ToolResult> {
    const problem = callRequestProblem(request, "call");
    if (problem !== null) {
      const given = (request ?? {}) as Partial<CallRequest>;
      const name = typeof given.name === "string" ? given.name : "";
      const callId = typeof given.callId === "string" ? given.callId : "";
      return failedResult({ callId, toolId: dispatch.get(name)?.id ?? "", name }, problem);
    }
    // The turn's signal and the deadline stop the preparation too (a long command's classification).
    const preparing = callSignal(request);
    const prepared = await prepare(request.name, request.input, { signal: preparing.signal })
      .finally(preparing.done);
    if (prepared.ok) {
      const verdict = policy(session.permissions, prepared.effects);
      const base = { callId: request.callId, toolId: prepared.toolId, name: prepared.name };
      if (verdict.decision === "deny") {
        return failedResult(base, {
          code: "denied",
          message: `${describeEffects(prepared.name, prepared.effects)} is not allowed in ` +
            `${session.permissions.mode} mode (${verdict.source}).`,
        });
      }
      const approve = request.approve;
      if (verdict.decision === "ask" && approve === undefined) {
        return failedResult(base, {
          code: "denied",
          message: `This call needs the person's approval (${verdict.source}), and the host ` +
            "gave no way to ask: pass `approve` to call(), or use prepare() and execute().",
        });
      }
      // An approver that fails counts as a refusal: the call never runs unapproved.
      const answer: ApprovalAnswer = verdict.decision !== "ask" ||
        await Promise.resolve()
          .then(() =>
            approve!({
              prepared,
              verdict,
              signal: request.signal ?? new AbortController().signal,
              question: approvalQuestion(prepared, verdict),
            })
          )
          .catch(() => false);
      // Anything but `true` or `{ approved: true }` (null from a careless approver among it) refuses.
      const approved = answer === true ||
        (typeof answer === "object" && answer !== null && answer.approved === true);
      if (!approved) {
        const reason = typeof answer === "object" && answer !== null ? answer.reason : undefined;
        return failedResult(base, {
          code: "denied",
          message: reason ?? "The person declined this call; do not retry it as is.",
        });
      }
    }
    return execute(prepared, request);
  }

  const toolset: ErasedToolset = Object.freeze({ definitions, session, prepare, execute, call });
  // The one place types are erased: every name and input is checked at run
  // time above, so the typed view only narrows what callers may pass.
  return toolset as unknown as FinalizedToolset<Tools>;
}
