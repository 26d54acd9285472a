/**
 * `finalizeToolset`: the built-in registry (or another) bound to a session.
 *
 * @module
 */
import { buildToolset } from "./contract/toolset.ts";
import type {
  FinalizedToolset,
  FinalizeOptions,
  SelectedName,
  SelectedTools,
  SuggestedName,
  ToolName,
} from "./contract/toolset.ts";
import type { AnyTool } from "./contract/tool.ts";
import type { ToolRegistry } from "./contract/registry.ts";
import { builtinRegistry } from "./tools/mod.ts";
import type { BuiltinTool } from "./tools/mod.ts";
import { decide } from "./permissions/policy.ts";

/**
 * Selects tools from the registry (default: the built-in seven), binds the
 * session, and freezes the result: its `definitions` and its dispatch come
 * from the same selected entries, in a stable order, and no method adds,
 * removes or replaces a tool. In `plan` mode, `write` and `edit` are neither
 * advertised nor callable. Every `call` applies `options.policy`, the
 * reference policy `decide` unless another is given.
 *
 * The toolset is typed by its tools: the built-in seven by default, the
 * registry's own tools when `registry` is given, narrowed to `select` when
 * its names are literals (a misspelt one is a type error, and still a
 * `TypeError` at run time).
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * const session = await createSession({ workingDirectory: Deno.cwd() });
 * const toolset = finalizeToolset({ session, select: ["read", "grep"] });
 * console.log(toolset.definitions.map((d) => d.name)); // ["read", "grep"]
 * ```
 */
export function finalizeToolset<
  Tools extends AnyTool = BuiltinTool,
  const Selected extends SuggestedName<Tools> = ToolName<Tools>,
>(
  options: FinalizeOptions<Tools, SelectedName<Tools, Selected>>,
): FinalizedToolset<SelectedTools<Tools, Selected>> {
  // Without a registry, `Tools` is the built-in seven: the default is what the type says.
  const registry = options.registry ?? (builtinRegistry() as ToolRegistry as ToolRegistry<Tools>);
  return buildToolset(registry, options.policy ?? decide, options) as FinalizedToolset<
    SelectedTools<Tools, Selected>
  >;
}
