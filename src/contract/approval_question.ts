/**
 * The question a person answers when the policy says ask: the approval
 * card. It shows every effect of the call in full, through
 * {@link visibleText}, so nothing in the model's input can rewrite, hide or
 * reorder what the card says; a long command or path also has its length
 * stated, on the line the person answers.
 *
 * @module
 */
import { describeEffect, type ToolEffect } from "./effects.ts";
import type { PolicyDecision } from "./policy.ts";
import { visibleText } from "./visible_text.ts";

/**
 * Most characters an effect's shown text may have to stay on the question's
 * own line (about three lines of a terminal); a longer one is shown on a line
 * of its own above the question, which states its length.
 */
export const LONG_EFFECT_CHARS = 200;

/** How many characters `text` has (code points, as a person counts them), e.g. `4,213`. */
function lengthOf(text: string): string {
  let count = 0;
  for (const _ of text) count++;
  return count.toLocaleString("en-US");
}

/**
 * The approval question for a call and the policy's verdict on it. A call
 * whose effects are short is one line, e.g. ``Allow bash: run `make`?
 * (bash.not_proven_read_only)``. A longer effect is shown whole on a line of
 * its own, after a line announcing it, and the question, always the last
 * line, names its length:
 *
 * ```text
 * bash: run this command (4,213 characters, shown in full on the next line):
 * <the command, escaped>
 * Allow bash: run the command above (4,213 characters)? (bash.not_proven_read_only)
 * ```
 *
 * Every line is free of control and invisible characters and of look-alikes
 * of ASCII (they are escaped), so a host may print the question on a
 * terminal or show it as it is.
 *
 * @example
 * ```ts
 * import { approvalQuestion } from "@openwork/tools";
 * const question = approvalQuestion(
 *   {
 *     name: "bash",
 *     effects: [{
 *       kind: "execute",
 *       command: "touch pwned #\u001b[2K\rAllow bash: run `ls`?",
 *       classification: { readOnly: false, fileSystemGate: false, reason: "touch writes" },
 *     }],
 *   },
 *   { decision: "ask", source: "bash.not_proven_read_only" },
 * );
 * console.log(question);
 * // Allow bash: run `touch pwned #\u{1b}[2K\rAllow bash: run `ls`?`? (bash.not_proven_read_only)
 * ```
 */
export function approvalQuestion(
  call: { readonly name: string; readonly effects: readonly ToolEffect[] },
  verdict: PolicyDecision,
): string {
  const name = visibleText(call.name);
  const shownAbove: string[] = [];
  const parts = call.effects.map((effect) => {
    const text = effect.kind === "execute" ? effect.command : effect.path;
    const shown = visibleText(text);
    if (shown.length <= LONG_EFFECT_CHARS) return describeEffect(effect);
    const verb = effect.kind === "execute" ? "run" : effect.kind;
    const noun = effect.kind === "execute" ? "command" : "path";
    const length = lengthOf(text);
    shownAbove.push(
      `${name}: ${verb} this ${noun} (${length} characters, shown in full on the next line):`,
      shown,
    );
    return `${verb} the ${noun} above (${length} characters)`;
  });
  const question = `Allow ${name}: ${parts.join(", ") || "no effects"}? ` +
    `(${visibleText(verdict.source)})`;
  return [...shownAbove, question].join("\n");
}
