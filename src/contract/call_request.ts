/**
 * The host's side of a call: what `call` and `execute` take besides the
 * tool's input (`callId`, `signal`, `deadline`, `progress`, `approve`),
 * checked before anything runs. JavaScript callers and casts get past the
 * types; a value that is not one (a `NaN` deadline would stop the call at
 * once, a plain object as the signal would fail inside the tool) is an
 * `invalid_input` result that names the field instead.
 *
 * @module
 */
import type { ToolErrorInfo } from "../errors.ts";
import { describeValue, isNonNegativeNumber, isOptionBag } from "../runtime/options.ts";

/** Which request is checked: `call`'s (name and approver included) or `execute`'s options. */
export type CallRequestKind = "call" | "execute";

/**
 * The `invalid_input` error for a call request or options that are not
 * valid, with one line per bad field (`field: what it must be`); `null` when
 * they are valid.
 */
export function callRequestProblem(request: unknown, kind: CallRequestKind): ToolErrorInfo | null {
  if (!isOptionBag(request)) {
    const shape = kind === "call" ? "a request object { name, input, callId, … }" : "an object";
    return {
      code: "invalid_input",
      message: `${kind}() takes ${shape} as its ${kind === "call" ? "argument" : "options"}, ` +
        `not ${describeValue(request)}.`,
    };
  }
  const lines: string[] = [];
  const { name, callId, signal, deadline, progress, approve } = request;
  if (kind === "call" && typeof name !== "string") {
    lines.push(`name: must be the tool's name, a string; got ${describeValue(name)}.`);
  }
  if (typeof callId !== "string") {
    lines.push(`callId: must be a string; got ${describeValue(callId)}.`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    lines.push(`signal: must be an AbortSignal; got ${describeValue(signal)}.`);
  }
  if (deadline !== undefined && !isNonNegativeNumber(deadline)) {
    lines.push(
      "deadline: must be a finite, non-negative number (epoch milliseconds); " +
        `got ${describeValue(deadline)}.`,
    );
  }
  if (progress !== undefined && typeof progress !== "function") {
    lines.push(`progress: must be a function; got ${describeValue(progress)}.`);
  }
  if (kind === "call" && approve !== undefined && typeof approve !== "function") {
    lines.push(`approve: must be a function; got ${describeValue(approve)}.`);
  }
  if (lines.length === 0) return null;
  return { code: "invalid_input", message: `Invalid ${kind} request:\n${lines.join("\n")}` };
}
