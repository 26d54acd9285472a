/**
 * `finalizeToolset`: the built-in registry (or another) bound to a session.
 *
 * @module
 */
import { buildToolset } from "./contract/toolset.ts";
import type { FinalizedToolset, FinalizeOptions } from "./contract/toolset.ts";
import { builtinRegistry } from "./tools/mod.ts";
import { decide } from "./permissions/policy.ts";

/**
 * Selects tools from the registry (default: the built-in seven), binds the
 * session, and freezes the result: its `definitions` and its dispatch come
 * from the same selected entries, in a stable order, and no method adds,
 * removes or replaces a tool. In `plan` mode, `write` and `edit` are neither
 * advertised nor callable. Every `call` applies `options.policy`, the
 * reference policy `decide` unless another is given.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * const session = await createSession({ workingDirectory: Deno.cwd() });
 * const toolset = finalizeToolset({ session, select: ["read", "grep"] });
 * console.log(toolset.definitions.map((d) => d.name)); // ["read", "grep"]
 * ```
 */
export function finalizeToolset(options: FinalizeOptions): FinalizedToolset {
  return buildToolset(options.registry ?? builtinRegistry(), options.policy ?? decide, options);
}
