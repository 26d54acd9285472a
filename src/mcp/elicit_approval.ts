/**
 * The approver of the 2025 revisions: by the approval mode, a call the
 * policy asks about runs (`client`), is refused (`policy`), or is asked
 * about through MCP elicitation (`elicit`), one boolean form, when the
 * client can be asked. Shared by the server package's instances
 * (`legacy_sdk.ts`) and `createMcpServer`, which differ only in how they
 * send the question.
 *
 * @module
 */
import type { ApprovalRequest } from "../contract/toolset.ts";
import type { ApprovalAnswer } from "../contract/policy.ts";
import { describeEffects } from "../contract/effects.ts";
import type { ApprovalMode } from "./options.ts";
import { NO_ELICITATION, POLICY_ONLY, refusal } from "./tool_answer.ts";

/** The question's form, under every revision: the person approves this one call, or not. */
export const APPROVAL_FORM: {
  mode: "form";
  requestedSchema: {
    type: "object";
    properties: Record<string, { type: "boolean"; title: string; description: string }>;
    required: string[];
  };
} = {
  mode: "form",
  requestedSchema: {
    type: "object",
    properties: {
      approve: { type: "boolean", title: "Allow this call", description: "Run it once." },
    },
    required: ["approve"],
  },
};

/** What the client answered to the question. */
export interface ElicitedAnswer {
  /** Whether the person accepted, declined or dismissed the form. */
  readonly action: string;
  /** The form's content, when accepted. */
  readonly content?: Readonly<Record<string, unknown>>;
}

/** How a server asks the question, with the call's signal. */
export interface ElicitationAsker {
  /** Whether the client declared elicitation. */
  canAsk(): boolean;
  /** Sends `elicitation/create` with the form and `message`, and resolves the answer. */
  ask(message: string, signal: AbortSignal): Promise<ElicitedAnswer>;
}

/**
 * Decides a call the policy asks about, by `approval`; a refusal says why,
 * in words for the model (a question that failed is not a decline).
 */
export async function decideByElicitation(
  approval: ApprovalMode,
  asker: ElicitationAsker,
  { prepared, verdict, signal, question }: ApprovalRequest,
): Promise<ApprovalAnswer> {
  const refused = (how: string) =>
    refusal(describeEffects(prepared.name, prepared.effects), verdict.source, how);
  if (approval === "client") return true;
  if (approval === "policy") return refused(POLICY_ONLY);
  if (!asker.canAsk()) return refused(NO_ELICITATION);
  try {
    // The question is the escaped card: the client shows it as text, and the card is what runs.
    const reply = await asker.ask(question, signal);
    if (reply.action === "accept" && reply.content?.approve === true) return true;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return refused(`the person could not be asked or did not answer (${why}), so it was not run`);
  }
  return refused("the person declined it");
}
