/**
 * Turns the errors runtimes throw into `ToolError`s with codes from the
 * closed set, so no backend failure reaches a host as a raw exception.
 *
 * @module
 */
import { ToolError } from "../errors.ts";
import type { ErrorCode } from "../errors.ts";
import { runtimeRefusal } from "../runtime/refusal.ts";

const BY_ERRNO: Readonly<Record<string, ErrorCode>> = {
  ENOENT: "not_found",
  EISDIR: "is_directory",
  ENOTDIR: "not_a_directory",
  EACCES: "permission_denied",
  EPERM: "permission_denied",
  EEXIST: "already_exists",
  EFBIG: "too_large",
  ENAMETOOLONG: "invalid_path",
  ELOOP: "invalid_path",
};

const BY_NAME: Readonly<Record<string, ErrorCode>> = {
  NotCapable: "runtime_permission_denied",
  NotFound: "not_found",
  IsADirectory: "is_directory",
  NotADirectory: "not_a_directory",
  PermissionDenied: "permission_denied",
  AlreadyExists: "already_exists",
  FilesystemLoop: "invalid_path",
};

/** The error code for a runtime error, by its name (Deno) or errno code (Node). */
export function codeOfRuntimeError(error: unknown): ErrorCode {
  if (error instanceof ToolError) return error.code;
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  // Deno's permission guard is named NotCapable; it must win over errno codes.
  if (name === "NotCapable") return "runtime_permission_denied";
  if (typeof code === "string" && code in BY_ERRNO) return BY_ERRNO[code];
  if (typeof name === "string" && name in BY_NAME) return BY_NAME[name];
  return "backend_failure";
}

/** A `ToolError` for a runtime error met while doing `what` on `shown`. */
export function toToolError(error: unknown, what: string, shown: string): ToolError {
  if (error instanceof ToolError) return error;
  const code = codeOfRuntimeError(error);
  const message = error instanceof Error ? error.message : String(error);
  // The flag Deno names, for the host that has to give it.
  const flag = code === "runtime_permission_denied" ? runtimeRefusal(error)?.flag ?? null : null;
  const texts: Partial<Record<ErrorCode, string>> = {
    not_found: `${shown} does not exist.`,
    is_directory: `${shown} is a directory.`,
    not_a_directory: `A part of ${shown} is not a directory.`,
    permission_denied: `The operating system refused to ${what} ${shown}.`,
    runtime_permission_denied:
      `The runtime's permission flags do not allow to ${what} ${shown}; the host must grant it` +
      (flag === null ? "." : ` (${flag}).`),
    already_exists: `${shown} already exists.`,
  };
  return new ToolError(code, texts[code] ?? `Could not ${what} ${shown}: ${message}`, {
    cause: error,
  });
}
