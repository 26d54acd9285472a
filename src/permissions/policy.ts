/**
 * The reference permission policy: from a profile and a call's declared
 * effects to allow, ask or deny, with the rule that decided it.
 *
 * @module
 */
import type { PermissionProfile } from "../contract/context.ts";
import type { ToolEffect } from "../contract/effects.ts";
import type { PermissionDecision, PolicyDecision } from "../contract/policy.ts";

const RANK: Record<PermissionDecision, number> = { allow: 0, ask: 1, deny: 2 };

function decideOne(profile: PermissionProfile, effect: ToolEffect): PolicyDecision {
  switch (effect.kind) {
    case "read":
      return { decision: "allow", source: "read.inside_roots" };
    case "write":
      if (profile.mode === "plan") return { decision: "deny", source: "plan.read_only" };
      if (profile.mode === "acceptEdits") {
        return { decision: "allow", source: "accept_edits.write_in_working_directory" };
      }
      return { decision: "ask", source: "default.write_asks" };
    case "execute":
      if (effect.classification.readOnly) {
        return { decision: "allow", source: "bash.read_only_whitelist" };
      }
      if (profile.mode === "plan") return { decision: "deny", source: "plan.read_only" };
      // Only where the effect says the command is confined, whatever the profile claims.
      if (effect.sandboxed === true && profile.sandboxedCommands === "allow") {
        return { decision: "allow", source: "sandbox.commands_allowed" };
      }
      if (profile.mode === "acceptEdits" && effect.classification.fileSystemGate) {
        return { decision: "allow", source: "accept_edits.file_system_gate" };
      }
      return { decision: "ask", source: "bash.not_proven_read_only" };
  }
}

/**
 * Decides a call from its effects: the most restrictive effect wins.
 *
 * @example
 * ```ts
 * import { decide } from "@openwork/tools";
 * const verdict = decide({ mode: "plan" }, [{ kind: "write", path: "a.txt", root: "working_directory" }]);
 * console.log(verdict); // { decision: "deny", source: "plan.read_only" }
 * ```
 */
export function decide(profile: PermissionProfile, effects: readonly ToolEffect[]): PolicyDecision {
  let verdict: PolicyDecision = { decision: "allow", source: "no_effects" };
  let first = true;
  for (const effect of effects) {
    const next = decideOne(profile, effect);
    if (first || RANK[next.decision] > RANK[verdict.decision]) verdict = next;
    first = false;
  }
  return verdict;
}
