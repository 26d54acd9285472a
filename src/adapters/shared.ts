/**
 * What the framework adapters share: the approval of a call the framework's
 * own approval flow already approved.
 *
 * @module
 */
import type { PermissionProfile } from "../contract/context.ts";
import type { ApprovalRequest } from "../contract/toolset.ts";
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
