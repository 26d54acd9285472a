/**
 * What a tool's risk class says about its behaviour, as the hints MCP
 * clients (and other hosts) show or act on. One table, keyed by risk, so
 * every tool of a class advertises the same hints.
 *
 * @module
 */
import type { ToolRisk } from "./effects.ts";

/** The behaviour hints of one risk class (the MCP `ToolAnnotations` hints). */
export interface ToolHints {
  /** The tool does not modify its environment. */
  readonly readOnlyHint: boolean;
  /** The tool may overwrite or delete (meaningful when not read-only). */
  readonly destructiveHint: boolean;
  /** Repeating a call with the same input has no further effect (meaningful when not read-only). */
  readonly idempotentHint: boolean;
  /** The tool may reach entities outside the session's roots (network, other processes). */
  readonly openWorldHint: boolean;
}

/** A tool's title and hints, as advertised in its definition. */
export interface ToolAnnotations extends ToolHints {
  /** The human-readable title. */
  readonly title: string;
}

/**
 * The hints of each risk class. `write` is destructive (it replaces text) and
 * not idempotent (an edit whose new text holds its old text applies again);
 * its world is closed (the session's roots). `execute` assumes the worst:
 * a command may do anything, anywhere, including the network.
 *
 * @example
 * ```ts
 * import { RISK_HINTS } from "@openwork/tools";
 * console.log(RISK_HINTS.read.readOnlyHint); // true
 * ```
 */
export const RISK_HINTS: Readonly<Record<ToolRisk, ToolHints>> = Object.freeze({
  read: Object.freeze({
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  }),
  write: Object.freeze({
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  }),
  execute: Object.freeze({
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  }),
});

/**
 * A tool's annotations: its title and the hints of its risk class.
 *
 * @example
 * ```ts
 * import { annotationsFor } from "@openwork/tools";
 * console.log(annotationsFor("Run shell command", "execute").openWorldHint); // true
 * ```
 */
export function annotationsFor(title: string, risk: ToolRisk): ToolAnnotations {
  return Object.freeze({ title, ...RISK_HINTS[risk] });
}
