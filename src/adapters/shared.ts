/**
 * What the framework adapters share: whether a call waits for the
 * framework's approval flow, the approval of a call that flow already
 * approved, a record of the calls that flow did or did not ask about (and
 * of the input each was asked about), and the question for a call the
 * framework holds for approval.
 *
 * @module
 */
import type { PermissionProfile } from "../contract/context.ts";
import type { ApprovalRequest, FinalizedToolset } from "../contract/toolset.ts";
import type { ApprovalAnswer, Policy } from "../contract/policy.ts";
import { approvalQuestion } from "../contract/approval_question.ts";
import { visibleText } from "../contract/visible_text.ts";

/** Most call ids a {@link CallIds} or an {@link AskedCalls} holds; the oldest goes first beyond it. */
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
 * What an approval is bound to: the tool and its input, as JSON with every
 * object's keys in order, so the same call always gives the same key. An
 * input that is not JSON gets a key no other call has.
 */
export function callKey(name: string, input: unknown): string {
  try {
    return JSON.stringify(
      [name, input],
      (_key, value: unknown) =>
        value !== null && typeof value === "object" && !Array.isArray(value)
          ? Object.fromEntries(
            Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
          )
          : value,
    );
  } catch {
    return `unbound ${crypto.randomUUID()}`;
  }
}

/** What {@link AskedCalls} holds for an id asked about with several inputs. */
const AMBIGUOUS = Symbol("ambiguous");
/** What it holds for such an id once a call with it was refused. */
const REFUSED = Symbol("refused");

/** What {@link AskedCalls.take} says of a call about to run. */
export type Binding =
  /** Whether the framework's check asked about exactly this call (when it asked about any). */
  | { readonly asked: boolean }
  /** The call must not run: why, in words for the model. */
  | { readonly refused: string };

/**
 * The input each call was asked about, by call id: an approval is bound to
 * the exact input the person was shown. The framework's approval check
 * records each call it asks about ({@link AskedCalls.ask}); when the call
 * runs, {@link AskedCalls.take} says whether it is that call. A framework
 * keys its approvals by call id, so two calls of different inputs under one
 * id make the approval ambiguous (the person is shown one, another may run):
 * every call with that id is then refused, until the check asks about the
 * id afresh after such a refusal. (So is, once, a call that reuses the id of
 * one asked about and declined, with another input.) Bounded like
 * {@link CallIds}.
 */
export class AskedCalls {
  readonly #calls = new Map<string, string | typeof AMBIGUOUS | typeof REFUSED>();

  /** Records that the check asked about the call with this id and key ({@link callKey}). */
  ask(callId: string, key: string): void {
    const asked = this.#calls.get(callId);
    this.#calls.delete(callId);
    this.#calls.set(
      callId,
      asked === undefined || asked === REFUSED || asked === key ? key : AMBIGUOUS,
    );
    if (this.#calls.size > CALL_IDS_LIMIT) this.#calls.delete(this.#calls.keys().next().value!);
  }

  /**
   * Records that several calls share this id, as when the check asked about
   * two inputs under it: every call with it is refused (see {@link take}).
   */
  ambiguous(callId: string): void {
    this.#calls.delete(callId);
    this.#calls.set(callId, AMBIGUOUS);
    if (this.#calls.size > CALL_IDS_LIMIT) this.#calls.delete(this.#calls.keys().next().value!);
  }

  /**
   * What the record says of the call with this id and key, about to run:
   * asked (the same input; forgotten), not asked, or refused — another input
   * was asked about under its id (forgotten), or several were (kept, so each
   * of them is refused).
   */
  take(callId: string, key: string): Binding {
    const asked = this.#calls.get(callId);
    if (asked === undefined) return { asked: false };
    if (typeof asked !== "string") {
      this.#calls.set(callId, REFUSED);
      return {
        refused: "Several calls with different inputs share this call's id, so the person's " +
          "approval cannot say which of them it was for; none of them runs. Make the calls " +
          "again, one at a time.",
      };
    }
    this.#calls.delete(callId);
    if (asked === key) return { asked: true };
    return {
      refused: "This call's input is not the one the person was asked to approve under its id, " +
        "so it was not run. Make the call again to have it asked.",
    };
  }
}

/**
 * The approver of a call that reaches `execute` after the framework's
 * approval flow: a framework runs a call whose `needsApproval` was true only
 * once the person approved it, so a call `policy` asks for is approved —
 * unless `unasked` says the framework's check did not ask about this call
 * (its `needsApproval` answered no, before the files the call names changed,
 * or was never consulted), or `refused` says why the approval is not this
 * call's ({@link AskedCalls.take}). A call the toolset asks for but `policy`
 * does not was never shown to the person, and is refused.
 */
export function approvedBefore(
  policy: Policy,
  permissions: PermissionProfile,
  unasked = false,
  refused?: string,
): (request: ApprovalRequest) => Promise<ApprovalAnswer> {
  return ({ prepared }) => {
    if (policy(permissions, prepared.effects).decision !== "ask") {
      return Promise.resolve({
        approved: false,
        reason: "This call needs the person's approval, and the host's adapter was not told " +
          "to ask for it: pass the toolset's policy to the adapter as `policy`.",
      });
    }
    if (refused !== undefined) return Promise.resolve({ approved: false, reason: refused });
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
