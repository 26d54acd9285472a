/**
 * What the framework adapters share: whether a call waits for the
 * framework's approval flow, the approval of a call that flow already
 * approved, and the record of the calls it let through without asking.
 *
 * @module
 */
import type { PermissionProfile } from "../contract/context.ts";
import type { ApprovalRequest, FinalizedToolset } from "../contract/toolset.ts";
import type { ApprovalAnswer, Policy } from "../contract/policy.ts";

/** Most call ids {@link UnaskedCalls} holds; the oldest goes first beyond it. */
const UNASKED_LIMIT = 4096;

/**
 * The ids of calls the framework's approval check let through without
 * asking the person (its `needsApproval` answered false), each kept until
 * the call runs. A call's effects are prepared again when it runs, and may
 * have changed in between (a file appeared, a link was replaced); such a
 * call, if it now asks, was never shown to anyone.
 */
export class UnaskedCalls {
  readonly #ids = new Set<string>();

  /** Records that the call with this id was let through unasked. */
  add(callId: string): void {
    this.#ids.delete(callId);
    this.#ids.add(callId);
    if (this.#ids.size > UNASKED_LIMIT) this.#ids.delete(this.#ids.values().next().value!);
  }

  /** Whether the call with this id was let through unasked; forgets it. */
  take(callId: string): boolean {
    return this.#ids.delete(callId);
  }
}

/**
 * The approver of a call that reaches `execute` after the framework's
 * approval flow: a framework runs a call whose `needsApproval` was true only
 * once the person approved it, so a call `policy` asks for is approved —
 * unless `unasked` says the framework let this call through without asking.
 * A call the toolset asks for but `policy` does not was never shown to the
 * person, and is refused.
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
        reason: "This call needed no approval when it was checked, and needs it now that it " +
          "runs (the files it names changed in between); it was not shown to the person. " +
          "Make the call again to have it asked.",
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
