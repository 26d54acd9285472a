/**
 * The path a call takes once its tool is known: the type-erased step that
 * turns raw JSON into a typed input ({@link parseInput}), runs the tool
 * ({@link runTool}), and makes any outcome a {@link ToolResult}.
 *
 * @module
 */
import { ToolError } from "../errors.ts";
import type { ToolErrorInfo } from "../errors.ts";
import type { ToolCallContext, ToolSessionContext } from "./context.ts";
import type { AnyTool } from "./tool.ts";
import type { ToolFailure, ToolResult } from "./result.ts";
import type { StandardSchemaV1Issue } from "./schema.ts";
import { withoutNullOptionals } from "./null_optionals.ts";

/** Validated input, or the `invalid_input` error naming each bad field. */
export type ParsedInput =
  | { readonly ok: true; readonly input: unknown }
  | { readonly ok: false; readonly error: ToolErrorInfo };

function fieldOf(issue: StandardSchemaV1Issue): string {
  const keys = (issue.path ?? []).map((segment) =>
    typeof segment === "object" && segment !== null ? segment.key : segment
  );
  return keys.length === 0 ? "(input)" : keys.map(String).join(".");
}

function describeIssue(tool: AnyTool, issue: StandardSchemaV1Issue): string {
  const field = fieldOf(issue);
  const allowed = Object.keys(tool.inputSchema.properties).join(", ");
  if (/^Invalid key: Expected never/.test(issue.message)) {
    return `${field}: not a field of ${tool.name}; its fields are ${allowed}.`;
  }
  if (/^Invalid key: Expected .* but received undefined/.test(issue.message)) {
    return `${field}: required, but missing.`;
  }
  const text = issue.message.replace(/^Invalid \w+: /, "");
  return `${field}: ${text.charAt(0).toLowerCase()}${text.slice(1)}.`;
}

/**
 * Validates raw JSON against a tool's schema. `null` for an optional field
 * counts as absent, as strict-mode callers send it; for a required field it
 * is invalid.
 */
export async function parseInput(tool: AnyTool, raw: unknown): Promise<ParsedInput> {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return {
      ok: false,
      error: { code: "invalid_input", message: `The input of ${tool.name} must be a JSON object.` },
    };
  }
  const given = withoutNullOptionals(raw, tool.inputSchema);
  const result = await tool.input["~standard"].validate(given);
  if (result.issues === undefined) return { ok: true, input: result.value };
  const lines = result.issues.map((issue) => describeIssue(tool, issue));
  return {
    ok: false,
    error: {
      code: "invalid_input",
      message: `Invalid input for ${tool.name}:\n${lines.join("\n")}`,
    },
  };
}

/** The error of a call whose signal aborted: `timed_out` past its deadline, else `cancelled`. */
export function interruptionOf(signal: AbortSignal): ToolErrorInfo {
  const reason = signal.reason as { name?: string } | undefined;
  return reason?.name === "TimeoutError"
    ? { code: "timed_out", message: "The call ran past its deadline and was stopped." }
    : { code: "cancelled", message: "The call was cancelled." };
}

function errorOf(error: unknown, call: ToolCallContext): ToolErrorInfo {
  if (call.signal.aborted) return interruptionOf(call.signal);
  if (error instanceof ToolError) return { code: error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: "backend_failure", message: `The tool failed unexpectedly: ${message}` };
}

/** Runs a tool on validated input; every outcome becomes a {@link ToolResult}. */
export async function runTool(
  tool: AnyTool,
  input: unknown,
  session: ToolSessionContext,
  call: ToolCallContext,
): Promise<ToolResult> {
  const started = performance.now();
  const base = { callId: call.callId, toolId: tool.id, name: tool.name };
  try {
    call.signal.throwIfAborted();
    const outcome = await tool.execute(input, session, call);
    const output = tool.toText(outcome.data);
    const finished = {
      ...base,
      data: outcome.data,
      artifacts: outcome.artifacts ?? [],
      durationMs: Math.round(performance.now() - started),
    };
    return outcome.error === undefined ? { ...finished, ok: true, output } : {
      ...finished,
      ok: false,
      output: `${outcome.error.message}\n${output}`,
      error: outcome.error,
    };
  } catch (thrown) {
    return failedResult(base, errorOf(thrown, call), started);
  }
}

/** A failed result with no data. */
export function failedResult(
  base: { callId: string; toolId: string; name: string },
  error: ToolErrorInfo,
  started: number = performance.now(),
): ToolFailure {
  return {
    ...base,
    ok: false,
    output: `Error (${error.code}): ${error.message}`,
    error,
    artifacts: [],
    durationMs: Math.round(performance.now() - started),
  };
}
