/**
 * The registry: what this build knows, tools by id and by name. What runs a
 * call is in `run.ts`.
 *
 * @module
 */
import type { AnyTool } from "./tool.ts";

/**
 * The tools a registry holds after registering `Added` onto one holding
 * `Tools`. A registry whose tools are untyped (`ToolRegistry`, as
 * `new ToolRegistry()` starts) begins its typed list with `Added`.
 */
export type Registered<Tools extends AnyTool, Added extends AnyTool> = AnyTool extends Tools ? Added
  : Tools | Added;

/**
 * What this build knows: tools by id and by name, duplicates refused. What an
 * agent may use is chosen later, by `finalizeToolset`. `Tools` is the union of
 * the registered tools' types, from which a toolset types its calls; each
 * `register` returns the registry typed with the tool added.
 *
 * @example
 * ```ts
 * import { builtinRegistry } from "@openwork/tools";
 * console.log(builtinRegistry().names); // ["read", "write", …]
 * ```
 */
export class ToolRegistry<Tools extends AnyTool = AnyTool> {
  #tools: AnyTool[] = [];

  /** Adds a tool; refuses a duplicate id or name. Returns the registry, typed with the tool. */
  register<Added extends AnyTool>(tool: Added): ToolRegistry<Registered<Tools, Added>> {
    if (this.#tools.some((t) => t.id === tool.id)) {
      throw new TypeError(`A tool with id ${tool.id} is registered already.`);
    }
    if (this.#tools.some((t) => t.name === tool.name)) {
      throw new TypeError(`A tool named ${tool.name} is registered already.`);
    }
    this.#tools.push(tool);
    // The same registry, now known to hold `Added` as well.
    return this as ToolRegistry<AnyTool> as ToolRegistry<Registered<Tools, Added>>;
  }

  /** The registered tools, in registration order. */
  get tools(): readonly Tools[] {
    return [...this.#tools] as Tools[];
  }

  /** The registered names, in registration order. */
  get names(): readonly Tools["name"][] {
    return this.#tools.map((t) => t.name);
  }
}
