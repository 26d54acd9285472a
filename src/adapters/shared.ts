/**
 * What the framework adapters share: the approval of a call the framework's
 * own approval flow already approved, and bash progress as an async stream.
 *
 * @module
 */
import type { PermissionProfile } from "../contract/context.ts";
import type { ApprovalRequest } from "../contract/toolset.ts";
import type { ApprovalAnswer, Policy } from "../contract/policy.ts";
import type { ProgressSink, ToolProgress, ToolResult } from "../contract/result.ts";

/**
 * The approver of a call that reaches `execute` after the framework's
 * approval flow: a framework runs a call whose `needsApproval` was true only
 * once the person approved it, so a call `policy` asks for is approved. A
 * call the toolset asks for but `policy` does not was never shown to the
 * person, and is refused.
 */
export function approvedBefore(
  policy: Policy,
  permissions: PermissionProfile,
): (request: ApprovalRequest) => Promise<ApprovalAnswer> {
  return ({ prepared }) =>
    Promise.resolve(
      policy(permissions, prepared.effects).decision === "ask" || {
        approved: false,
        reason: "This call needs the person's approval, and the host's adapter was not told " +
          "to ask for it: pass the toolset's policy to the adapter as `policy`.",
      },
    );
}

/** Most characters of output a progress snapshot keeps (its tail). */
export const PROGRESS_TAIL_CHARS = 32 * 1024;

/** A snapshot of a running call's output. */
export interface ProgressSnapshot {
  /** Always `"running"`. */
  readonly status: "running";
  /** The tail of stdout and stderr so far. */
  readonly output: string;
}

/**
 * Runs `start` and yields a snapshot of the output so far whenever new
 * output arrived since the last one the consumer took (bursts coalesce into
 * one snapshot), then the call's result.
 */
export async function* progressStream(
  start: (progress: ProgressSink) => Promise<ToolResult>,
): AsyncGenerator<ProgressSnapshot | ToolResult> {
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
  start(progress).then(
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
