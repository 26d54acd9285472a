/**
 * Converters from a toolset's `definitions` to the tool formats of the major
 * model APIs: OpenAI Chat Completions and Responses (each with a strict-mode
 * variant), Anthropic Messages and Google Gemini. Each call returns fresh,
 * mutable objects (the definitions stay frozen and untouched), shaped to be
 * assignable to the SDK's own parameter type without a cast.
 *
 * @module
 */
import type { ToolDefinition } from "./toolset.ts";
import type { StandardSchemaV1Props } from "./schema.ts";
import { type MutableJsonSchemaObject, toStrictJsonSchema } from "./strict_schema.ts";

/** Options of the OpenAI converters. */
export interface OpenAIToolOptions {
  /**
   * Send the strict-mode schema (`toStrictJsonSchema`: every property
   * required, optional ones nullable) with `strict: true`, so the model's
   * arguments always match it (default `false`: the schema as defined, with
   * `strict: false`). The `null`s a strict caller sends for unused fields are
   * read as absent when the call is validated.
   */
  readonly strict?: boolean;
}

/** The function of an OpenAI Chat Completions function tool. */
export interface OpenAIFunctionDefinition {
  /** The tool's name. */
  name: string;
  /** What it does. */
  description: string;
  /** The JSON Schema of its arguments. */
  parameters: MutableJsonSchemaObject;
  /** Whether the model must follow `parameters` exactly (Structured Outputs). */
  strict: boolean;
}

/** A tool in the OpenAI Chat Completions `tools` format (the SDK's `ChatCompletionFunctionTool`). */
export interface OpenAITool {
  /** Always `"function"`. */
  type: "function";
  /** The function. */
  function: OpenAIFunctionDefinition;
}

/** A function tool in the OpenAI Responses API `tools` format (the SDK's `FunctionTool`). */
export interface OpenAIResponsesTool {
  /** Always `"function"`. */
  type: "function";
  /** The tool's name. */
  name: string;
  /** What it does. */
  description: string;
  /** The JSON Schema of its arguments. */
  parameters: MutableJsonSchemaObject;
  /** Whether the model must follow `parameters` exactly (Structured Outputs). */
  strict: boolean;
}

/** A tool in the Anthropic Messages `tools` format (the SDK's `Tool`). */
export interface AnthropicTool {
  /** The tool's name. */
  name: string;
  /** What it does. */
  description: string;
  /** The JSON Schema of its input. */
  input_schema: MutableJsonSchemaObject;
}

/**
 * A function declaration for Google Gemini (`@google/genai`'s
 * `FunctionDeclaration`). The schema goes in `parametersJsonSchema`, which
 * takes plain JSON Schema, rather than `parameters`, which takes the
 * OpenAPI-subset `Schema` with upper-case type names and no
 * `additionalProperties`.
 */
export interface GeminiFunctionDeclaration {
  /** The tool's name. */
  name: string;
  /** What it does. */
  description: string;
  /** The JSON Schema of its arguments. */
  parametersJsonSchema: MutableJsonSchemaObject;
}

/** A fresh, unfrozen copy of a definition's input schema. */
function schemaOf(definition: ToolDefinition, strict: boolean): MutableJsonSchemaObject {
  return strict
    ? toStrictJsonSchema(definition.inputSchema)
    : structuredClone(definition.inputSchema) as MutableJsonSchemaObject;
}

/**
 * The definitions as OpenAI Chat Completions function tools; with
 * `{ strict: true }`, in strict mode.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset, toOpenAITools } from "@openwork/tools";
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * const tools = toOpenAITools(toolset.definitions, { strict: true });
 * console.log(tools[0].function.name, tools[0].function.strict); // "read" true
 * ```
 */
export function toOpenAITools(
  definitions: readonly ToolDefinition[],
  options: OpenAIToolOptions = {},
): OpenAITool[] {
  const strict = options.strict ?? false;
  return definitions.map((d) => ({
    type: "function",
    function: {
      name: d.name,
      description: d.description,
      parameters: schemaOf(d, strict),
      strict,
    },
  }));
}

/**
 * The definitions as OpenAI Responses API function tools; with
 * `{ strict: true }`, in strict mode.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset, toOpenAIResponsesTools } from "@openwork/tools";
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * const tools = toOpenAIResponsesTools(toolset.definitions, { strict: true });
 * console.log(tools[0].name, tools[0].strict); // "read" true
 * ```
 */
export function toOpenAIResponsesTools(
  definitions: readonly ToolDefinition[],
  options: OpenAIToolOptions = {},
): OpenAIResponsesTool[] {
  const strict = options.strict ?? false;
  return definitions.map((d) => ({
    type: "function",
    name: d.name,
    description: d.description,
    parameters: schemaOf(d, strict),
    strict,
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
    input_schema: schemaOf(d, false),
  }));
}

/**
 * The definitions as Google Gemini function declarations, for
 * `config.tools: [{ functionDeclarations }]`.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset, toGeminiFunctionDeclarations } from "@openwork/tools";
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * console.log(toGeminiFunctionDeclarations(toolset.definitions)[0].name); // "read"
 * ```
 */
export function toGeminiFunctionDeclarations(
  definitions: readonly ToolDefinition[],
): GeminiFunctionDeclaration[] {
  return definitions.map((d) => ({
    name: d.name,
    description: d.description,
    parametersJsonSchema: schemaOf(d, false),
  }));
}

/** How a Standard JSON Schema is asked for its JSON Schema. */
export interface JsonSchemaRequest {
  /** The JSON Schema dialect wanted, e.g. `draft-07`. */
  readonly target: string;
  /** Options of the schema's library. */
  readonly libraryOptions?: Record<string, unknown>;
}

/**
 * A tool's input schema as a Standard JSON Schema (Standard Schema V1 with a
 * `jsonSchema` converter), for frameworks that read one: its JSON Schema is
 * the tool's, a fresh mutable copy on every request, and its validation
 * accepts every value, so the toolset validates and bad input becomes a
 * result the model sees rather than an exception in the framework.
 */
export interface PassThroughSchema {
  /** The Standard Schema properties, with the JSON Schema converter. */
  readonly "~standard": StandardSchemaV1Props<unknown, unknown> & {
    /** Gives the tool's JSON Schema. */
    readonly jsonSchema: {
      /** The input's JSON Schema. */
      readonly input: (request: JsonSchemaRequest) => Record<string, unknown>;
      /** The same schema: input and output are one type. */
      readonly output: (request: JsonSchemaRequest) => Record<string, unknown>;
    };
  };
}

/**
 * A definition's input schema as a {@link PassThroughSchema}: what a
 * framework that takes Standard Schemas (the AI SDK, LangChain) is given.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset, toPassThroughSchema } from "@openwork/tools";
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * const schema = toPassThroughSchema(toolset.definitions[0]);
 * console.log(schema["~standard"].jsonSchema.input({ target: "draft-07" }).type); // "object"
 * ```
 */
export function toPassThroughSchema(definition: ToolDefinition): PassThroughSchema {
  const fresh = () => schemaOf(definition, false) as Record<string, unknown>;
  return {
    "~standard": {
      version: 1,
      vendor: "openwork-tools",
      validate: (value) => ({ value }),
      jsonSchema: { input: fresh, output: fresh },
    },
  };
}
