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

/**
 * The one final result of a call. The model sees only `output`; `data` is the
 * structured form for hosts, and `artifacts` never enter the model's context.
 */
export interface ToolResult {
  /** The call's id, as the host gave it. */
  readonly callId: string;
  /** Stable id of the tool, e.g. `filesystem/read`; empty for an unknown tool. */
  readonly toolId: string;
  /** The model-facing name that was called. */
  readonly name: string;
  /** Whether the tool did what was asked. */
  readonly ok: boolean;
  /** The text for the model. */
  readonly output: string;
  /** Structured output for hosts (plain JSON data). */
  readonly data?: unknown;
  /** Present exactly when `ok` is false. */
  readonly error?: ToolErrorInfo;
  /** File-change artifacts; never part of `output`. */
  readonly artifacts: readonly Artifact[];
  /** Wall time of the call in milliseconds. */
  readonly durationMs: number;
}
