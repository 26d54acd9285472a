/**
 * The tool contract: one valibot schema gives the input type, the runtime
 * validation and the JSON Schema, so they cannot disagree; another gives the
 * output's JSON Schema, proven (by each tool) to describe its output type.
 *
 * @module
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";
import type { ToolCallContext, ToolSessionContext } from "./context.ts";
import type { ToolEffect, ToolRisk } from "./effects.ts";
import type { ToolErrorInfo } from "../errors.ts";
import type { Artifact } from "./result.ts";
import type { JsonSchemaObject, StandardSchemaV1 } from "./schema.ts";

/** What `execute` returns: structured data, optional artifacts, optional error. */
export interface ToolOutput<Output> {
  /** The structured output; `toText` turns it into the model's text. */
  readonly data: Output;
  /** File-change artifacts of this call. */
  readonly artifacts?: readonly Artifact[];
  /** Set when the call did not do what was asked, though it produced data (e.g. a timed-out command). */
  readonly error?: ToolErrorInfo;
}

/**
 * The fields a tool is defined with. `Name` is the literal model-facing name
 * (inferred by {@link defineTool}), which lets a toolset type its calls.
 */
export interface ToolSpec<Input, Output, Name extends string = string> {
  /** Stable internal id, e.g. `filesystem/read`; never derived from a file or type name. */
  readonly id: string;
  /** The model-facing name, e.g. `read`. */
  readonly name: Name;
  /** A short human-readable title, e.g. `Read file` (default: the name). */
  readonly title?: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The tool's risk class. */
  readonly risk: ToolRisk;
  /** A valibot object schema (`v.strictObject`) with a description on every field. */
  readonly input: StandardSchemaV1<unknown, Input>;
  /**
   * A valibot object schema (`v.strictObject`, `v.readonly()` allowed) of the
   * structured output `data`, for hosts that validate or type results (MCP's
   * `outputSchema`). Without it the tool advertises no output schema.
   */
  readonly output?: StandardSchemaV1<unknown, Output>;
  /**
   * The effects a call would have, for the permission decision. `signal`
   * aborts when the call is cancelled or its deadline passes: work that can
   * take long (the classification of a command) stops then.
   */
  effects(
    input: Input,
    session: ToolSessionContext,
    signal: AbortSignal,
  ): Promise<readonly ToolEffect[]>;
  /** Runs the call. Throw a `ToolError` for a tool-level failure. */
  execute(
    input: Input,
    session: ToolSessionContext,
    call: ToolCallContext,
  ): Promise<ToolOutput<Output>>;
  /** The text the model sees for the output. */
  toText(output: Output): string;
}

/** A defined tool: its spec plus the JSON Schemas of its input and output. */
export interface Tool<Input = unknown, Output = unknown, Name extends string = string>
  extends ToolSpec<Input, Output, Name> {
  /** The JSON Schema of the input, made from `input`. */
  readonly inputSchema: JsonSchemaObject;
  /** The JSON Schema of the output `data`, made from `output`; absent without it. */
  readonly outputSchema?: JsonSchemaObject;
}

/** A tool with its types erased, as registries hold it. */
// deno-lint-ignore no-explicit-any
export type AnyTool = Tool<any, any, string>;

/**
 * The JSON Schema of a valibot object schema, as model APIs accept it: of
 * what it accepts (`input`, the default) or of what it produces (`output`).
 * `v.readonly()` is a type-level marker here and converts to nothing.
 */
export function jsonSchemaOf(
  schema: StandardSchemaV1,
  typeMode: "input" | "output" = "input",
): JsonSchemaObject {
  const converted = toJsonSchema(schema as unknown as GenericSchema, {
    typeMode,
    // `maxBytes` has no JSON Schema keyword; a field bounded in bytes says so in `maxLength` too.
    ignoreActions: ["readonly", "max_bytes"],
  }) as Record<
    string,
    unknown
  >;
  const { $schema: _dropped, ...rest } = converted;
  if (rest.type !== "object" || rest.additionalProperties !== false) {
    throw new TypeError(`A tool's ${typeMode} must be a v.strictObject schema.`);
  }
  return deepFreeze({ ...rest, properties: rest.properties ?? {} }) as JsonSchemaObject;
}

/** Freezes a plain data value and everything inside it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * Defines a tool from its spec. The name's literal type is kept (`"echo"`
 * below), so a toolset holding the tool types calls to it; given explicit
 * type arguments, pass the name as the third (`defineTool<In, Out, "echo">`),
 * or the tool is callable only by an untyped `string` name.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { defineTool } from "@openwork/tools";
 * const echo = defineTool({
 *   id: "example/echo",
 *   name: "echo",
 *   description: "Returns its text.",
 *   risk: "read",
 *   input: v.strictObject({ text: v.pipe(v.string(), v.description("Text to return.")) }),
 *   effects: () => Promise.resolve([]),
 *   execute: (input) => Promise.resolve({ data: input.text }),
 *   toText: (text) => text,
 * });
 * ```
 */
export function defineTool<Input, Output, const Name extends string = string>(
  spec: ToolSpec<Input, Output, Name>,
): Tool<Input, Output, Name> {
  if (!/^[a-z][a-z0-9_]*$/.test(spec.name)) {
    throw new TypeError(`Tool name ${JSON.stringify(spec.name)} must be snake_case.`);
  }
  if (!/^[a-z][a-z0-9_-]*(\/[a-z][a-z0-9_-]*)+$/.test(spec.id)) {
    throw new TypeError(`Tool id ${JSON.stringify(spec.id)} must look like group/name.`);
  }
  return Object.freeze({
    ...spec,
    inputSchema: jsonSchemaOf(spec.input),
    ...(spec.output === undefined ? {} : { outputSchema: jsonSchemaOf(spec.output, "output") }),
  });
}
