/**
 * What the framework adapters share: whether a call waits for the
 * framework's approval flow, and the approval of a call that flow already
 * approved.
 *
 * @module
 */
import type { PermissionProfile } from "../contract/context.ts";
import type { ApprovalRequest, FinalizedToolset } from "../contract/toolset.ts";
import type { ApprovalAnswer, Policy } from "../contract/policy.ts";

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
