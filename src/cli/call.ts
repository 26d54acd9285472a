/**
 * `openwork-tools call`: one tool call with the streams, exit statuses and
 * signals of a conventional command. Results go to stdout and errors to
 * stderr; `bash` exits as its command did (as `timeout(1)` reports it);
 * SIGINT, SIGTERM and SIGHUP cancel the call through the toolset's one cancel
 * path, so its processes end, and exit with 128 + the signal's number.
 *
 * @module
 */
import process from "node:process";
import { constants } from "node:os";
import { createInterface } from "node:readline";
import type { FinalizedToolset } from "../contract/toolset.ts";
import type { ToolResult } from "../contract/result.ts";
import { describeEffects } from "../contract/effects.ts";
import type { BashOutput } from "../tools/bash.ts";

/** The exit statuses `call` gives besides a bash command's own and 128 + a signal's number. */
export const EXIT = {
  /** The result is ok. */
  ok: 0,
  /** The result is an error. */
  toolError: 1,
  /** The command line is wrong: options, JSON, tool name, input the schema rejects, or a permission flag the runtime lacks. */
  usage: 2,
  /** `bash`: the command timed out, as `timeout(1)` reports it. */
  timedOut: 124,
  /** `bash`: the call ended without a status of the command (refused, not started, end unconfirmed). */
  bashFailed: 125,
} as const;

/** The signals that cancel a running call. */
const CANCELLING = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type Cancelling = (typeof CANCELLING)[number] | "SIGPIPE";

/** 128 + the number of `signal`, as a shell reports a command it ended; `null` for a name it does not know. */
function signalled(signal: string): number | null {
  const number = (constants.signals as Record<string, number | undefined>)[signal];
  return number === undefined ? null : 128 + number;
}

/**
 * The error codes that mean the command line was wrong rather than the call:
 * the runtime's permission flags are part of it.
 */
const USAGE_CODES = new Set(["invalid_input", "unknown_tool", "runtime_permission_denied"]);

/**
 * The exit status of a finished call: 128 + the signal's number when a
 * signal cancelled it; for `bash`, the command's own status, else `EXIT`.
 */
export function exitStatusOf(result: ToolResult, interrupted: string | null): number {
  if (interrupted !== null) return signalled(interrupted) ?? EXIT.toolError;
  if (result.error !== undefined && USAGE_CODES.has(result.error.code)) return EXIT.usage;
  if (result.name !== "bash") return result.ok ? EXIT.ok : EXIT.toolError;
  const data = result.data as BashOutput | undefined;
  if (data === undefined) return EXIT.bashFailed; // refused, or never started
  if (data.status === "timed_out") return EXIT.timedOut;
  if (data.status !== "exited") return EXIT.bashFailed;
  if (data.exit_code !== null) return data.exit_code;
  return (data.signal === null ? null : signalled(data.signal)) ?? EXIT.bashFailed;
}

/** How `call` prints and approves. */
export interface CallCommandOptions {
  /** Print the whole result as JSON when it ends, and stream nothing. */
  readonly json: boolean;
  /** Approve every call the policy asks about, without asking. */
  readonly yes: boolean;
  /** Whether the input came from standard input (which then cannot answer a question). */
  readonly inputFromStdin: boolean;
}

/**
 * Asks a yes/no question on the terminal. `false` on anything but yes, on
 * end of input, and when `signal` aborts; Ctrl-C while asking calls
 * `interrupt` (the terminal is in raw mode then, so no SIGINT is sent).
 * A question of several lines has all but its last printed first, so the
 * line editor redraws only the line being answered.
 */
function askOnTerminal(
  question: string,
  signal: AbortSignal,
  interrupt: () => void,
): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise<boolean>((resolve) => {
    let settled = false;
    const done = (answer: boolean) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", abandon);
      resolve(answer);
      prompt.close();
    };
    const abandon = () => {
      process.stderr.write("\n");
      done(false);
    };
    if (signal.aborted) return done(false);
    signal.addEventListener("abort", abandon, { once: true });
    prompt.on("SIGINT", interrupt);
    prompt.once("close", () => done(false));
    const lines = question.split("\n");
    const last = lines.pop()!;
    if (lines.length > 0) process.stderr.write(lines.join("\n") + "\n");
    prompt.question(`${last} [y/N] `, (answer) => done(/^y(es)?$/i.test(answer.trim())));
  });
}

/** Writes to stdout; a closed stdout (`| head`) calls `closed` instead of throwing. */
function writer(closed: () => void): (text: string) => void {
  let open = true;
  return (text) => {
    if (!open) return;
    try {
      process.stdout.write(text);
    } catch {
      open = false;
      closed();
    }
  };
}

/**
 * Runs one call of `toolset` and prints it; resolves the exit status. The
 * toolset's processes are shut down before it resolves.
 */
export async function runCallCommand(
  toolset: FinalizedToolset,
  name: string,
  input: unknown,
  options: CallCommandOptions,
): Promise<number> {
  const turn = new AbortController();
  let interrupted: Cancelling | null = null;
  const cancel = (signal: Cancelling) => {
    // Repeated signals change nothing: the first one's cancel is under way and bounded.
    if (interrupted !== null) return;
    interrupted = signal;
    turn.abort();
  };
  const handlers = CANCELLING.map((signal) => [signal, () => cancel(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  // Writing to a closed pipe ends the call, as SIGPIPE ends a command that writes to one.
  const onStdoutError = (error: { code?: string }) => {
    if (error.code === "EPIPE") cancel("SIGPIPE");
  };
  process.stdout.on("error", onStdoutError);
  const out = writer(() => cancel("SIGPIPE"));
  const canAsk = process.stdin.isTTY === true && !options.inputFromStdin;
  const streaming = name === "bash" && !options.json;
  try {
    const result = await toolset.call({
      name,
      input,
      callId: "cli-1",
      signal: turn.signal,
      // The toolset's one approval flow, with --yes or the terminal as the approver.
      approve: async ({ prepared, verdict, signal, question }) => {
        if (options.yes) return true;
        const what = describeEffects(prepared.name, prepared.effects);
        if (!canAsk) {
          return {
            approved: false,
            reason: `${what} needs approval (${verdict.source}) and there is no terminal to ask; ` +
              "pass --yes to approve it" +
              (prepared.name === "bash" ? "" : ", or choose --mode acceptEdits for file edits"),
          };
        }
        // The question escapes what the model wrote: the card shows exactly what would run.
        const asked = await askOnTerminal(question, signal, () => cancel("SIGINT"));
        return asked || { approved: false, reason: `${what} was declined` };
      },
      ...(streaming
        ? {
          // The command's output, once, on the stream it wrote to.
          progress: (event) => {
            if (event.kind === "stdout") out(event.chunk);
            else if (event.kind === "stderr") process.stderr.write(event.chunk);
          },
        }
        : {}),
    });
    // A closed stdout wants nothing more: the reader has gone, as from a command ended by SIGPIPE.
    if (interrupted !== "SIGPIPE") report(result, options.json, streaming, out);
    return exitStatusOf(result, interrupted);
  } finally {
    // The handlers stay until the processes are shut down: a signal meanwhile must not kill this one first.
    await toolset.session.processes.shutdown().finally(() => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
    });
    // The stdout listener stays: an EPIPE from the last write may arrive after this.
  }
}

/** Prints a finished call: the result on stdout, an error on stderr. */
function report(
  result: ToolResult,
  json: boolean,
  streamed: boolean,
  out: (text: string) => void,
): void {
  const error = result.error;
  // One line naming the error; the model's text may repeat output already shown.
  const summary = error === undefined ? "" : `Error (${error.code}): ${error.message}\n`;
  if (json) {
    out(JSON.stringify(result, null, 2) + "\n");
    process.stderr.write(summary);
  } else if (streamed) {
    process.stderr.write(summary);
  } else if (error === undefined) {
    out(result.output + "\n");
  } else {
    process.stderr.write(result.output + "\n");
  }
}
