/**
 * What a call returns: the {@link ToolResult}, the progress events it may
 * stream while it runs, and the `file_change` artifact.
 *
 * @module
 */
import type { ToolErrorInfo } from "../errors.ts";

/** One hunk of a unified diff, with three lines of context around changes. */
export interface DiffHunk {
  /** First line of the hunk in the old text (1-based). */
  readonly oldStart: number;
  /** Number of old lines the hunk spans. */
  readonly oldLines: number;
  /** First line of the hunk in the new text (1-based). */
  readonly newStart: number;
  /** Number of new lines the hunk spans. */
  readonly newLines: number;
  /** The hunk's lines, each prefixed with `" "`, `"-"` or `"+"`. */
  readonly lines: readonly string[];
}

/**
 * The record of one text-file change made by `write` or `edit`: enough to
 * show the exact diff after a reload and to undo it.
 */
export interface FileChangeArtifact {
  /** Always `"file_change"`. */
  readonly kind: "file_change";
  /** Unique id of this change. */
  readonly changeId: string;
  /** The changed file, relative to the session's working directory. */
  readonly path: string;
  /** Whether the change created the file or modified an existing one. */
  readonly change: "created" | "modified";
  /** Exact number of added lines. */
  readonly added: number;
  /** Exact number of removed lines. */
  readonly removed: number;
  /** Unified diff hunks with three lines of context. */
  readonly hunks: readonly DiffHunk[];
  /** SHA-256 (hex) of the file before the change; `null` when it was created. */
  readonly sha256Before: string | null;
  /** SHA-256 (hex) of the file after the change. */
  readonly sha256After: string;
  /** The file's content before the change, to undo it; `null` when it was created. */
  readonly priorContent: string | null;
  /** Whether the change has been undone. */
  readonly undone: boolean;
}

/** An artifact attached to a result. Today only `file_change`. */
export type Artifact = FileChangeArtifact;

/**
 * A best-effort event a running tool emits. It is never persisted and never
 * back-pressures the tool: a slow or failing sink changes nothing.
 */
export type ToolProgress =
  | { readonly kind: "stdout"; readonly chunk: string }
  | { readonly kind: "stderr"; readonly chunk: string }
  | { readonly kind: "message"; readonly message: string };

/** The sink a host passes to receive {@link ToolProgress} events. */
export type ProgressSink = (event: ToolProgress) => void | Promise<void>;

/** The fields every {@link ToolResult} has, whether it succeeded or not. */
export interface ToolResultBase {
  /** The call's id, as the host gave it. */
  readonly callId: string;
  /** Stable id of the tool, e.g. `filesystem/read`; empty for an unknown tool. */
  readonly toolId: string;
  /** The model-facing name that was called. */
  readonly name: string;
  /** The text for the model. */
  readonly output: string;
  /** File-change artifacts; never part of `output`. */
  readonly artifacts: readonly Artifact[];
  /** Wall time of the call in milliseconds. */
  readonly durationMs: number;
}

/** A call that did what was asked: `data` is the tool's structured output. */
export interface ToolSuccess<Data = unknown> extends ToolResultBase {
  /** The tool did what was asked. */
  readonly ok: true;
  /** Structured output for hosts (plain JSON data). */
  readonly data?: Data;
  /** Never set on a success. */
  readonly error?: never;
}

/**
 * A call that did not do what was asked. `data` is present when the tool ran
 * and produced output anyway (a command stopped at its timeout); absent when
 * it never ran (invalid input, an unknown tool, a denial).
 */
export interface ToolFailure<Data = unknown> extends ToolResultBase {
  /** The tool did not do what was asked. */
  readonly ok: false;
  /** What the tool produced before it failed, when it ran. */
  readonly data?: Data;
  /** Why: a code from the closed set and words a model can act on. */
  readonly error: ToolErrorInfo;
}

/**
 * The one final result of a call, discriminated on `ok`: `error` is there
 * exactly when `ok` is false, so `if (!result.ok) result.error.code` needs no
 * assertion. The model sees only `output`; `data` is the structured form for
 * hosts (typed per tool when the call was typed), and `artifacts` never enter
 * the model's context.
 *
 * @example
 * ```ts
 * import type { ToolResult } from "@openwork/tools";
 * function report(result: ToolResult): string {
 *   return result.ok ? result.output : `${result.error.code}: ${result.error.message}`;
 * }
 * ```
 */
export type ToolResult<Data = unknown> = ToolSuccess<Data> | ToolFailure<Data>;
