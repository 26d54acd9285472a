/**
 * What the framework adapters share: whether a call waits for the
 * framework's approval flow, the approval of a call that flow already
 * approved, a record of the calls that flow did or did not ask about, and
 * the question for a call the framework holds for approval.
 *
 * @module
 */
import type { PermissionProfile } from "../contract/context.ts";
import type { ApprovalRequest, FinalizedToolset } from "../contract/toolset.ts";
import type { ApprovalAnswer, Policy } from "../contract/policy.ts";
import { approvalQuestion } from "../contract/approval_question.ts";
import { visibleText } from "../contract/visible_text.ts";

/** Most call ids a {@link CallIds} holds; the oldest goes first beyond it. */
const CALL_IDS_LIMIT = 4096;

/**
 * A bounded record of call ids, each kept until its call runs: the calls a
 * framework's approval check let through unasked, or those it asked about.
 */
export class CallIds {
  readonly #ids = new Set<string>();

  /** Records the call with this id. */
  add(callId: string): void {
    this.#ids.delete(callId);
    this.#ids.add(callId);
    if (this.#ids.size > CALL_IDS_LIMIT) this.#ids.delete(this.#ids.values().next().value!);
  }

  /** Whether the call with this id is recorded; forgets it. */
  take(callId: string): boolean {
    return this.#ids.delete(callId);
  }
}

/**
 * The approver of a call that reaches `execute` after the framework's
 * approval flow: a framework runs a call whose `needsApproval` was true only
 * once the person approved it, so a call `policy` asks for is approved —
 * unless `unasked` says the framework's check did not ask about this call
 * (its `needsApproval` answered no, before the files the call names changed,
 * or was never consulted). A call the toolset asks for but `policy` does not
 * was never shown to the person, and is refused.
 */
export function approvedBefore(
  policy: Policy,
  permissions: PermissionProfile,
  unasked = false,
): (request: ApprovalRequest) => Promise<ApprovalAnswer> {
  return ({ prepared }) => {
    if (policy(permissions, prepared.effects).decision !== "ask") {
      return Promise.resolve({
        approved: false,
        reason: "This call needs the person's approval, and the host's adapter was not told " +
          "to ask for it: pass the toolset's policy to the adapter as `policy`.",
      });
    }
    return Promise.resolve(
      !unasked || {
        approved: false,
        reason: "This call needs approval now that it runs, and the framework's approval " +
          "check did not ask for it (it needed none when checked, or the check was not " +
          "consulted); it was not shown to the person. Make the call again to have it asked.",
      },
    );
  };
}

/**
 * Whether the call `name(input)` waits for the framework's approval flow:
 * true exactly when it is valid and `policy`'s verdict on its effects is
 * `ask`. (Invalid input runs, and comes back as the `invalid_input` result.)
 */
export async function asksApproval(
  toolset: FinalizedToolset,
  policy: Policy,
  name: string,
  input: unknown,
): Promise<boolean> {
  const prepared = await toolset.prepare(name, input);
  return prepared.ok &&
    policy(toolset.session.permissions, prepared.effects).decision === "ask";
}

/**
 * The question to show the person for the call `name(input)` a framework
 * holds for approval: {@link approvalQuestion} of the prepared call and
 * `policy`'s verdict, or, for a call that cannot run, a line saying so.
 */
export async function questionFor(
  toolset: FinalizedToolset,
  policy: Policy,
  name: string,
  input: unknown,
): Promise<string> {
  const prepared = await toolset.prepare(name, input);
  if (!prepared.ok) {
    return `${visibleText(name)}: nothing to approve; the call cannot run ` +
      `(${visibleText(prepared.error.message)}).`;
  }
  return approvalQuestion(prepared, policy(toolset.session.permissions, prepared.effects));
}
