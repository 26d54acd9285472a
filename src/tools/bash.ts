/**
 * `bash`: one foreground command in the working directory. Output is drained
 * continuously and bounded; a normal end, timeout and cancel all end the
 * whole process group, and the descendants the backend finds outside it,
 * through the backend's one termination path.
 *
 * @module
 */
import * as v from "valibot";
import { defineTool } from "../contract/tool.ts";
import type { Tool } from "../contract/tool.ts";
import type { SameType } from "../contract/schema.ts";
import type { ErrorCode } from "../errors.ts";
import { classifyCommand } from "../permissions/classifier.ts";
import {
  MAX_CLASSIFIED_COMMAND_LENGTH,
  MAX_CLASSIFIER_LOOKUPS,
} from "../permissions/classification_budget.ts";
import { BoundedOutput } from "./shared/bounded_output.ts";
import { ProgressRelay } from "./shared/progress.ts";
import { tooLong } from "./shared/inputs.ts";
import type { ProcessOutput } from "../backends/process.ts";

/**
 * Longest command, in UTF-8 bytes. The command reaches bash as one argument
 * of `bash -c`, and Linux refuses an argument of 128 KiB or more, its
 * terminating NUL included (MAX_ARG_STRLEN): a longer command could never
 * start, so it is `invalid_input` before it is classified or asked about.
 */
export const MAX_COMMAND_BYTES: number = 128 * 1024 - 1;

/** Default `timeout_ms`. */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** Largest `timeout_ms`. */
const MAX_TIMEOUT_MS = 600_000;
/** Bytes kept from the start, and from the end, of each stream. */
export const KEPT_BYTES: number = 16 * 1024;
/** How long to wait for pipes to close once the processes are gone (one the sweep missed may hold them). */
const PIPE_SETTLE_MS = 250;

/** What to do instead of sending a command over {@link MAX_COMMAND_BYTES}. */
const TOO_LONG_COMMAND = "bash cannot be started with a longer command; " +
  "write the script to a file and run that file";

const BashSchema = v.strictObject({
  // One issue for a command too long: its bytes are not counted once its characters are too many.
  command: v.config(
    v.pipe(
      v.string(),
      v.minLength(1),
      // A string has at least as many UTF-8 bytes as characters: this bound is implied by the
      // next, and is the one a JSON Schema can carry to the model.
      v.maxLength(MAX_COMMAND_BYTES, tooLong(MAX_COMMAND_BYTES, TOO_LONG_COMMAND)),
      v.maxBytes(
        MAX_COMMAND_BYTES,
        (issue) =>
          `Invalid length: at most ${MAX_COMMAND_BYTES} bytes in UTF-8, not ${issue.received}; ` +
          TOO_LONG_COMMAND,
      ),
      v.description(
        "The command, run as `bash -c` in the working directory. " +
          `At most ${MAX_COMMAND_BYTES} characters. (Counted in UTF-8 bytes: bash cannot be ` +
          "started with a longer command.)",
      ),
    ),
    { abortPipeEarly: true },
  ),
  timeout_ms: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(MAX_TIMEOUT_MS),
      v.description("Stop the command after this many milliseconds (default 120000, max 600000)."),
    ),
  ),
});

/** The input of `bash`. */
export interface BashInput {
  /** The command. */
  command: string;
  /** Timeout in milliseconds (1–600000). */
  timeout_ms?: number;
}

// The exported type is proven equal to what the schema produces.
const _inputMatchesSchema: SameType<BashInput, v.InferOutput<typeof BashSchema>> = true;

/** How a command ended. */
export type ProcessStatus = "exited" | "timed_out" | "cancelled" | "outcome_unknown";

/** The structured output of `bash`. */
export interface BashOutput {
  /** How it ended. */
  readonly status: ProcessStatus;
  /** The exit code, when the shell exited on its own. */
  readonly exit_code: number | null;
  /** The signal that ended the shell, if any. */
  readonly signal: string | null;
  /** Standard output: head and tail, with the omitted byte count marked between. */
  readonly stdout: string;
  /** Standard error, bounded the same way. */
  readonly stderr: string;
  /** Bytes of stdout left out of `stdout`. */
  readonly stdout_omitted_bytes: number;
  /** Bytes of stderr left out of `stderr`. */
  readonly stderr_omitted_bytes: number;
  /** Wall time in milliseconds. */
  readonly duration_ms: number;
}

const BashOutputSchema = v.pipe(
  v.strictObject({
    status: v.pipe(
      v.picklist(["exited", "timed_out", "cancelled", "outcome_unknown"]),
      v.description("How the command ended."),
    ),
    exit_code: v.pipe(
      v.nullable(v.pipe(v.number(), v.integer())),
      v.description("The exit code, when the shell exited on its own."),
    ),
    signal: v.pipe(
      v.nullable(v.string()),
      v.description("The signal that ended the shell, if any."),
    ),
    stdout: v.pipe(
      v.string(),
      v.description("Standard output: head and tail, the omitted byte count marked between."),
    ),
    stderr: v.pipe(v.string(), v.description("Standard error, bounded the same way.")),
    stdout_omitted_bytes: v.pipe(
      v.number(),
      v.integer(),
      v.description("Bytes of stdout left out."),
    ),
    stderr_omitted_bytes: v.pipe(
      v.number(),
      v.integer(),
      v.description("Bytes of stderr left out."),
    ),
    duration_ms: v.pipe(v.number(), v.description("Wall time in milliseconds.")),
  }),
  v.readonly(),
);

// The exported type is proven equal to what the output schema describes.
const _outputMatchesSchema: SameType<BashOutput, v.InferOutput<typeof BashOutputSchema>> = true;

/**
 * Drains a pipe into `into`, relaying chunks as progress, until its end or
 * `stop`, which closes the pipe (one reaction, not one per chunk).
 */
async function drain(
  pipe: ProcessOutput,
  into: BoundedOutput,
  kind: "stdout" | "stderr",
  relay: ProgressRelay,
  stop: Promise<void>,
): Promise<void> {
  const decoder = new TextDecoder();
  void stop.then(() => pipe.close());
  try {
    await pipe.forEach((chunk) => {
      into.push(chunk);
      if (relay.active) relay.emit({ kind, chunk: decoder.decode(chunk, { stream: true }) });
    });
  } catch {
    // A cancelled or broken pipe ends the drain; what was read is kept.
  }
}

const ERROR_OF: Record<Exclude<ProcessStatus, "exited">, { code: ErrorCode; message: string }> = {
  timed_out: {
    code: "timed_out",
    message: "The command timed out; its process group and the descendants found were ended.",
  },
  cancelled: {
    code: "cancelled",
    message: "The command was cancelled; its process group and the descendants found were ended.",
  },
  outcome_unknown: {
    code: "outcome_unknown",
    message: "The command was signalled, but the end of its processes could not be confirmed; " +
      "it may still be running. The runtime keeps it and will end it at shutdown.",
  },
};

/** The `bash` tool. */
export const bashTool: Tool<BashInput, BashOutput, "bash"> = defineTool<
  BashInput,
  BashOutput,
  "bash"
>({
  id: "process/bash",
  name: "bash",
  title: "Run shell command",
  description:
    "Run a bash command in the working directory and return its exit code, stdout and stderr. " +
    "Runs in the foreground with stdin closed (interactive programs get end-of-file). Long output keeps its " +
    "first and last 16 KiB per stream. On timeout (default 120000 ms, max 600000) the command is " +
    "ended and the output so far is returned. When the call ends (exit, timeout or cancel), the processes " +
    "it started are ended too, including background, nohup, setsid and daemonized ones, so a server " +
    "started here does not keep running after the call. This is best effort without OS isolation: a " +
    "process that removes OPENWORK_CALL from its environment (unset, env -i) and detaches (setsid) " +
    "escapes it, and is not reported. A command is at most " +
    `${MAX_COMMAND_BYTES} bytes (bash cannot be started with more; write a long script to a file). ` +
    "A command proven read-only runs without approval; one longer " +
    `than ${MAX_CLASSIFIED_COMMAND_LENGTH} characters, or whose file operands would need more than ` +
    `${MAX_CLASSIFIER_LOOKUPS} file-system lookups to check (about one per path segment), is not ` +
    "checked and always needs approval.",
  risk: "execute",
  input: BashSchema,
  output: BashOutputSchema,
  async effects(input, session, signal) {
    return [{
      kind: "execute",
      command: input.command,
      classification: await classifyCommand(input.command, session, { signal }),
      ...(session.sandbox === undefined ? {} : { sandboxed: true as const }),
    }];
  },
  async execute(input, session, call) {
    const started = Date.now();
    const cwd = await session.resolvePath(".", "read", "must_exist");
    const handle = await session.processes.spawn({
      command: "bash",
      // --norc: bash started under sshd (SSH_CLIENT set) would source ~/.bashrc before the command.
      args: ["--norc", "--noprofile", "-c", input.command],
      cwd,
      env: session.environment,
    });
    const relay = new ProgressRelay(call.progress);
    const stdout = new BoundedOutput(KEPT_BYTES, KEPT_BYTES);
    const stderr = new BoundedOutput(KEPT_BYTES, KEPT_BYTES);
    let stopPipes!: () => void;
    const pipesStop = new Promise<void>((resolve) => (stopPipes = resolve));
    const drained = Promise.all([
      drain(handle.stdout, stdout, "stdout", relay, pipesStop),
      drain(handle.stderr, stderr, "stderr", relay, pipesStop),
    ]);

    const timeoutMs = Math.min(
      input.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      call.deadline === undefined
        ? Number.POSITIVE_INFINITY
        : Math.max(0, call.deadline - Date.now()),
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const interrupted = new Promise<"timed_out" | "cancelled">((resolve) => {
      timer = setTimeout(() => resolve("timed_out"), timeoutMs);
      onAbort = () => {
        const reason = call.signal.reason as { name?: string } | undefined;
        resolve(reason?.name === "TimeoutError" ? "timed_out" : "cancelled");
      };
      if (call.signal.aborted) onAbort();
      else call.signal.addEventListener("abort", onAbort, { once: true });
    });
    const ending = await Promise.race([handle.exited, interrupted]);
    clearTimeout(timer);
    call.signal.removeEventListener("abort", onAbort!);

    // Timeout, cancel and a normal exit all end the group and the descendants found outside it the same way.
    const gone = await handle.terminate().catch(() => false);
    let status: ProcessStatus = typeof ending === "string" ? ending : "exited";
    if (!gone) status = "outcome_unknown";
    const exit = status === "exited" ? ending as Awaited<typeof handle.exited> : null;
    if (gone) {
      await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, PIPE_SETTLE_MS))]);
    }
    stopPipes();
    await drained;
    relay.close();
    const out = stdout.finish();
    const err = stderr.finish();
    const data: BashOutput = {
      status,
      exit_code: exit?.code ?? null,
      signal: exit?.signal ?? null,
      stdout: out.text,
      stderr: err.text,
      stdout_omitted_bytes: out.omittedBytes,
      stderr_omitted_bytes: err.omittedBytes,
      duration_ms: Date.now() - started,
    };
    return status === "exited" ? { data } : { data, error: ERROR_OF[status] };
  },
  toText(output) {
    const parts: string[] = [];
    if (output.status === "exited" && output.exit_code !== 0) {
      parts.push(
        output.exit_code === null
          ? `[ended by ${output.signal}]`
          : `[exit code ${output.exit_code}]`,
      );
    }
    if (output.stdout !== "") parts.push(output.stdout.replace(/\n$/, ""));
    if (output.stderr !== "") parts.push(`[stderr]\n${output.stderr.replace(/\n$/, "")}`);
    if (parts.length === 0) parts.push("(no output)");
    return parts.join("\n");
  },
});
