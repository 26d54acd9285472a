/**
 * The closed set of error codes a {@link ToolResult} can carry, and the error
 * class tools throw internally. The adapter turns every throw into a result:
 * a tool-level failure never reaches the host as an exception.
 *
 * @module
 */

/**
 * Every error code a tool result can carry, with what it means for the caller.
 * The set is closed: hosts may switch over it exhaustively.
 */
export const ERROR_CODES = {
  invalid_input: "The call's input does not match the tool's schema; the message names each field.",
  unknown_tool: "No tool of that name is in this toolset.",
  denied: "The permission policy or the person refused the call; the tool did not run.",
  invalid_path: "The path is empty, holds a NUL byte, is too long, or cannot be normalized.",
  path_outside_root:
    "The real path (after following symbolic links) is outside every allowed root.",
  path_protected: "The path is inside a protected or read-only location for this access.",
  not_found: "The file or directory does not exist.",
  is_directory: "A file was expected, but the path is a directory.",
  not_a_directory: "A directory was expected, but the path is not one.",
  not_a_regular_file: "The path is a FIFO, socket or device; it is never opened.",
  too_large: "The file or content exceeds the tool's byte cap.",
  binary_file: "The file holds a NUL byte in its first 8 KiB and is treated as binary.",
  invalid_utf8: "The file is not valid UTF-8 text.",
  old_text_not_found:
    "edit: old_text does not occur in the file; the message quotes the closest current text, if any.",
  old_text_not_unique:
    "edit: old_text occurs more than once in the file; the message lists the occurrences.",
  no_change: "edit: new_text equals old_text, so nothing would change.",
  already_exists: "The file exists, but the call may only create a new one.",
  stale_edit: "The file changed between read and commit; nothing was written.",
  conflict: "undo: the file no longer holds what the change wrote; nothing was overwritten.",
  cancelled: "The call's signal was aborted before the tool finished.",
  timed_out: "The call ran past its timeout or deadline and was stopped.",
  outcome_unknown: "The processes were signalled but their end could not be confirmed.",
  spawn_failed: "The process could not be started.",
  runtime_permission_denied: "The runtime's own permission guard (Deno flags) refused the access.",
  permission_denied: "The operating system refused the access.",
  backend_failure: "The backend failed unexpectedly; the message carries its words.",
} as const;

/** One code of the closed set {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The error part of a failed {@link ToolResult}. */
export interface ToolErrorInfo {
  /** A code from the closed set {@link ERROR_CODES}. */
  readonly code: ErrorCode;
  /** What went wrong and what to do next, in words a model can act on. */
  readonly message: string;
}

/**
 * The error tools and backends throw for a tool-level failure. The toolset
 * turns it into a failed {@link ToolResult}; hosts never see it thrown.
 *
 * @example
 * ```ts
 * import { ToolError } from "@openwork/tools";
 * const error = new ToolError("not_found", "No file at src/a.ts.");
 * console.log(error.code); // "not_found"
 * ```
 */
export class ToolError extends Error {
  /** A code from the closed set {@link ERROR_CODES}. */
  readonly code: ErrorCode;

  /** Makes an error with its code and an actionable message. */
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ToolError";
    this.code = code;
  }
}

/** Whether `value` is a {@link ToolError}. */
export function isToolError(value: unknown): value is ToolError {
  return value instanceof ToolError;
}
