/**
 * Refusals by the runtime's own permission guard, read from the error the
 * runtime throws: Deno's `NotCapable` (named `PermissionDenied` before Deno
 * 2, which now uses that name for the operating system's refusals only).
 *
 * @module
 */

/** A refusal by the runtime's permission guard. */
export interface RuntimeRefusal {
  /** The kind of access refused, as Deno names it: `read`, `write`, `net`, `env`, `run`, `sys`, …; `null` when its message names none. */
  readonly kind: string | null;
  /** What the access was to (a path, `host:port`, a variable's name), or `null`. */
  readonly target: string | null;
  /** The flag that grants it, e.g. `--allow-net`, or `null` when the message names none. */
  readonly flag: string | null;
  /** The runtime's own message. */
  readonly message: string;
}

/** Deno's text: `Requires net access to "127.0.0.1:8765", run again with the --allow-net flag`. */
const REQUIRES = /Requires (\w+) access(?: to (.+?))?, run again with the (--allow-[\w-]+) flag/;

/**
 * The refusal `error` is, or was caused by (its `cause` chain is followed);
 * `null` when it is no refusal of the runtime's permission guard.
 */
export function runtimeRefusal(error: unknown): RuntimeRefusal | null {
  for (let seen = error, depth = 0; depth < 8; depth++) {
    if (typeof seen !== "object" || seen === null) return null;
    const { name, message, cause } = seen as { name?: unknown; message?: unknown; cause?: unknown };
    const text = typeof message === "string" ? message : "";
    const match = REQUIRES.exec(text);
    if (name === "NotCapable" || (name === "PermissionDenied" && match !== null)) {
      const target = match?.[2]?.replace(/^"([^"\n]*)"$/, "$1") ?? null;
      return { kind: match?.[1] ?? null, target, flag: match?.[3] ?? null, message: text };
    }
    seen = cause;
  }
  return null;
}
