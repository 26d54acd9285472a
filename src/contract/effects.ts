/**
 * The effects a call declares before it runs, so a host can decide whether
 * to allow, ask or deny. They are advice: execution re-checks every path.
 *
 * @module
 */
import type { RootKind } from "../path/mod.ts";
import { visibleText } from "./visible_text.ts";

/** The risk class of a tool. */
export type ToolRisk = "read" | "write" | "execute";

/** What the read-only classifier and the file-system gate say of a command. */
export interface CommandClassification {
  /** Whether the command was proven read-only by the closed whitelist. */
  readonly readOnly: boolean;
  /**
   * Whether the command is a plain file-system command (mkdir, touch, cp,
   * mv …) whose every path is literal and resolves inside a writable root.
   */
  readonly fileSystemGate: boolean;
  /** Why: the rule that proved it, or the first thing that failed closed. */
  readonly reason: string;
}

/** One effect of a prepared call. */
export type ToolEffect =
  | {
    /** Reads a path. */
    readonly kind: "read";
    /** The checked path as shown to the model. */
    readonly path: string;
    /** The root that admitted it. */
    readonly root: RootKind;
  }
  | {
    /** Writes a path. */
    readonly kind: "write";
    /** The checked path as shown to the model. */
    readonly path: string;
    /** The root that admitted it. */
    readonly root: RootKind;
  }
  | {
    /** Executes a shell command. */
    readonly kind: "execute";
    /** The command text. */
    readonly command: string;
    /** What the classifier proved of it. */
    readonly classification: CommandClassification;
    /** Present when the command runs in the session's OS sandbox (see `createSession`'s `sandbox`). */
    readonly sandboxed?: true;
  };

/**
 * What one effect does, in full, through `visibleText` (no control,
 * invisible or look-alike character of the model's input reaches a terminal
 * that prints it): ``run `make` `` or `write a.txt`.
 */
export function describeEffect(effect: ToolEffect): string {
  return effect.kind === "execute"
    ? `run \`${visibleText(effect.command)}\``
    : `${effect.kind} ${visibleText(effect.path)}`;
}

/** One line saying what a call would do, for a refusal's text: each effect by {@link describeEffect}. */
export function describeEffects(name: string, effects: readonly ToolEffect[]): string {
  return `${visibleText(name)}: ${effects.map(describeEffect).join(", ") || "no effects"}`;
}
