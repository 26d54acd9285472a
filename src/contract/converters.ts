/**
 * Converters from a toolset's `definitions` to the tool formats of common
 * model APIs. They reuse the definitions' schemas; none builds its own.
 *
 * @module
 */
import type { ToolDefinition } from "./toolset.ts";
import type { JsonSchemaObject } from "./schema.ts";

/** A tool in the OpenAI Chat Completions `tools` format. */
export interface OpenAITool {
  /** Always `"function"`. */
  readonly type: "function";
  /** The function. */
  readonly function: {
    /** The tool's name. */
    readonly name: string;
    /** What it does. */
    readonly description: string;
    /** The JSON Schema of its arguments. */
    readonly parameters: JsonSchemaObject;
    /** Strict schema adherence is off: optional fields stay optional. */
    readonly strict: false;
  };
}

/** A tool in the Anthropic Messages `tools` format. */
export interface AnthropicTool {
  /** The tool's name. */
  readonly name: string;
  /** What it does. */
  readonly description: string;
  /** The JSON Schema of its input. */
  readonly input_schema: JsonSchemaObject;
}

/**
 * The definitions as OpenAI function tools.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset, toOpenAITools } from "@openwork/tools";
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * console.log(toOpenAITools(toolset.definitions)[0].function.name); // "read"
 * ```
 */
export function toOpenAITools(definitions: readonly ToolDefinition[]): OpenAITool[] {
  return definitions.map((d) => ({
    type: "function",
    function: {
      name: d.name,
      description: d.description,
      parameters: d.inputSchema,
      strict: false,
    },
  }));
}

/**
 * The definitions as Anthropic tools.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset, toAnthropicTools } from "@openwork/tools";
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * console.log(toAnthropicTools(toolset.definitions)[0].name); // "read"
 * ```
 */
export function toAnthropicTools(definitions: readonly ToolDefinition[]): AnthropicTool[] {
  return definitions.map((d) => ({
    name: d.name,
    description: d.description,
    input_schema: d.inputSchema,
  }));
}
