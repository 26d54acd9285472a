/**
 * The seven built-in tools and the registry that holds them.
 *
 * @module
 */
import { ToolRegistry } from "../contract/registry.ts";
import { readTool } from "./read.ts";
import { writeTool } from "./write.ts";
import { editTool } from "./edit/edit.ts";
import { grepTool } from "./grep.ts";
import { globTool } from "./glob.ts";
import { listTool } from "./list.ts";
import { bashTool } from "./bash.ts";

export { bashTool, editTool, globTool, grepTool, listTool, readTool, writeTool };

/** The type of each of the seven built-in tools: what a default toolset types its calls with. */
export type BuiltinTool =
  | typeof readTool
  | typeof writeTool
  | typeof editTool
  | typeof grepTool
  | typeof globTool
  | typeof listTool
  | typeof bashTool;

/**
 * A registry holding the seven built-in tools, in their fixed order:
 * read, write, edit, grep, glob, list, bash.
 *
 * @example
 * ```ts
 * import { builtinRegistry } from "@openwork/tools";
 * console.log(builtinRegistry().names.length); // 7
 * ```
 */
export function builtinRegistry(): ToolRegistry<BuiltinTool> {
  return new ToolRegistry()
    .register(readTool)
    .register(writeTool)
    .register(editTool)
    .register(grepTool)
    .register(globTool)
    .register(listTool)
    .register(bashTool);
}
