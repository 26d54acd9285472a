/**
 * What a permission policy answers, and what an approver answers: the
 * contract between a toolset and the policy it is given (the reference
 * policy is `decide`).
 *
 * @module
 */
import type { PermissionProfile } from "./context.ts";
import type { ToolEffect } from "./effects.ts";

/** The user-level decision for a call. */
export type PermissionDecision = "allow" | "ask" | "deny";

/** A decision and the rule that made it (trace provenance). */
export interface PolicyDecision {
  /** What to do. */
  readonly decision: PermissionDecision;
  /** The rule that decided, e.g. `bash.read_only_whitelist`; for traces. */
  readonly source: string;
}

/** A permission policy: from a profile and a call's declared effects to a decision. */
export type Policy = (profile: PermissionProfile, effects: readonly ToolEffect[]) => PolicyDecision;

/**
 * What an approver answers: `true` to run the call once, `false` to refuse
 * it, or an object whose `reason` becomes the refusal's text (the model
 * reads it).
 */
export type ApprovalAnswer = boolean | {
  /** Whether the call runs. */
  readonly approved: boolean;
  /** Why not, in words for the model; replaces the default refusal text. */
  readonly reason?: string;
};
