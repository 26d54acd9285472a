/**
 * A permission the runtime refused, as the command reports it: one line on
 * stderr naming the flag that is missing, and exit status 2 (the command
 * line, flags included, is what has to change), never a stack trace.
 *
 * @module
 */
import process from "node:process";
import { runtimeRefusal } from "../runtime/refusal.ts";
import { EXIT } from "./call.ts";

/** Line breaks (and the blanks around them) in a runtime's text, which must stay one line. */
const oneLine = (text: string) => text.replace(/\s*[\r\n]+\s*/g, " ");

/**
 * The line that reports `error` when it is a refusal of the runtime's
 * permission guard, e.g. `openwork-tools: Deno refused net access to
 * 127.0.0.1:8765: run with --allow-net`; `null` for any other error.
 */
export function refusalLine(error: unknown): string | null {
  const refusal = runtimeRefusal(error);
  if (refusal === null) return null;
  const { kind, target, flag } = refusal;
  if (kind === null || flag === null) {
    return oneLine(`openwork-tools: Deno refused an access: ${refusal.message}`);
  }
  const access = target === null ? `${kind} access` : `${kind} access to ${target}`;
  return oneLine(`openwork-tools: Deno refused ${access}: run with ${flag}`);
}

/**
 * For `process.on("uncaughtExceptionMonitor", …)`: a refusal that no command
 * could catch (Deno's `node:net` throws it from a callback of `listen`) ends
 * the process as the commands' own refusals do; any other error is left to
 * the runtime's default report.
 */
export function exitOnRefusal(error: unknown): void {
  const line = refusalLine(error);
  if (line === null) return;
  process.stderr.write(`${line}\n`);
  process.exit(EXIT.usage);
}
