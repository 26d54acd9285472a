/**
 * The Standard Schema V1 interface (https://standardschema.dev), declared here
 * so public signatures name no npm type. Valibot schemas satisfy it.
 *
 * @module
 */

/** A schema that validates unknown input into `Output`, per Standard Schema V1. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The Standard Schema properties. */
  readonly "~standard": StandardSchemaV1Props<Input, Output>;
}

/** The properties under a Standard Schema's `~standard` key. */
export interface StandardSchemaV1Props<Input = unknown, Output = Input> {
  /** The version of the Standard Schema specification. */
  readonly version: 1;
  /** The library that made the schema. */
  readonly vendor: string;
  /** Validates unknown input. */
  readonly validate: (
    value: unknown,
  ) => StandardSchemaV1Result<Output> | Promise<StandardSchemaV1Result<Output>>;
  /** Inferred types, for type-level use only. */
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
}

/** The result of {@link StandardSchemaV1Props.validate}. */
export type StandardSchemaV1Result<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardSchemaV1Issue[] };

/** One validation issue. */
export interface StandardSchemaV1Issue {
  /** What is wrong. */
  readonly message: string;
  /** Where it is wrong: keys or path segments from the root. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The output type of a {@link StandardSchemaV1}. */
export type InferSchemaOutput<S> = S extends StandardSchemaV1<unknown, infer O> ? O : never;

/** A JSON Schema object as sent to a model API. */
export interface JsonSchemaObject {
  /** Always `"object"` for a tool's input. */
  readonly type: "object";
  /** The input fields. */
  readonly properties: Readonly<Record<string, unknown>>;
  /** The fields the call must give. */
  readonly required?: readonly string[];
  /** Always `false`: unknown keys are rejected. */
  readonly additionalProperties: false;
  /** Other JSON Schema keywords. */
  readonly [keyword: string]: unknown;
}

/**
 * `true` exactly when `A` and `B` are the same type. Tools use it to prove at
 * compile time that their exported input type is what their schema produces.
 */
export type SameType<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2)
  ? true
  : false;
