/**
 * The strict-mode form of a tool's input schema, as OpenAI Structured Outputs
 * (`strict: true` on a function tool) accepts it: the root is an object;
 * every object lists all of its properties in `required` and sets
 * `additionalProperties: false`; an optional property becomes nullable (a
 * strict-mode caller sends `null` for a field it does not use, which the
 * input validation reads as absent); only the keywords strict mode supports
 * remain, and a constraint it cannot carry moves into the `description`.
 *
 * The runtime validation stays the authority: the strict schema only guides
 * the model, so a dropped constraint is still enforced when the call arrives.
 *
 * @module
 */
import type { JsonSchemaObject } from "./schema.ts";

/**
 * A JSON Schema object the caller owns: fresh, unfrozen, every array a plain
 * array, so it is assignable wherever a model SDK wants a mutable schema.
 */
export interface MutableJsonSchemaObject {
  /** Always `"object"` for a tool's input. */
  type: "object";
  /** The input fields. */
  properties: Record<string, unknown>;
  /** The fields the call must give. */
  required?: string[];
  /** Always `false`: unknown keys are rejected. */
  additionalProperties: false;
  /** Other JSON Schema keywords. */
  [keyword: string]: unknown;
}

/** Keywords strict mode accepts on any schema. */
const COMMON_KEYWORDS = new Set([
  "type",
  "description",
  "enum",
  "const",
  "anyOf",
  "$ref",
  "$defs",
]);

/** Keywords strict mode accepts for one instance type. */
const TYPED_KEYWORDS: Readonly<Record<string, ReadonlySet<string>>> = {
  object: new Set(["properties", "required", "additionalProperties"]),
  array: new Set(["items", "minItems", "maxItems"]),
  string: new Set(["pattern", "format"]),
  number: new Set(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]),
  integer: new Set(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]),
  boolean: new Set(),
  null: new Set(),
};

/** The string formats strict mode accepts. */
const STRICT_FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
]);

type Schema = Record<string, unknown>;

/** Whether `value` is a JSON object (a schema, or an object a schema describes). */
export function isSchema(value: unknown): value is Schema {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function typesOf(schema: Schema): string[] {
  const type = schema.type;
  if (typeof type === "string") return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === "string");
  return [];
}

/** Text for the constraints strict mode cannot carry, so the model still reads them. */
function describeDropped(key: string, value: unknown): string | undefined {
  switch (key) {
    case "minLength":
      return `At least ${value} character${value === 1 ? "" : "s"}.`;
    case "maxLength":
      return `At most ${value} character${value === 1 ? "" : "s"}.`;
    case "default":
      return `Default: ${JSON.stringify(value)}.`;
    case "format":
      return `Format: ${String(value)}.`;
    case "uniqueItems":
      return value === true ? "Items must be unique." : undefined;
    case "minProperties":
      return `At least ${value} propert${value === 1 ? "y" : "ies"}.`;
    case "maxProperties":
      return `At most ${value} propert${value === 1 ? "y" : "ies"}.`;
    case "examples":
      return Array.isArray(value) && value.length > 0
        ? `Examples: ${value.map((e) => JSON.stringify(e)).join(", ")}.`
        : undefined;
    default:
      return undefined;
  }
}

function withNotes(description: unknown, notes: readonly string[]): string | undefined {
  const base = typeof description === "string" ? description.trim() : "";
  const missing = notes.filter((note) => !base.includes(note));
  const text = [base, ...missing].filter((part) => part !== "").join(" ");
  return text === "" ? undefined : text;
}

/** Local `$ref`s point into `$defs`; a draft-07 `definitions` ref is rewritten to match. */
function strictRef(ref: string): string {
  return ref.startsWith("#/definitions/") ? `#/$defs/${ref.slice("#/definitions/".length)}` : ref;
}

/** The schema a local `$ref` (`#/$defs/…` or `#/definitions/…`) names in `root`, if any. */
export function resolveRef(ref: string, root: Readonly<Schema>): Schema | undefined {
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (match === null) return undefined;
  const defs = root[match[1]];
  if (!isSchema(defs)) return undefined;
  const target = defs[match[2].replaceAll("~1", "/").replaceAll("~0", "~")];
  return isSchema(target) ? target : undefined;
}

/** Merges the members of an `allOf` into one schema (properties and required unite). */
function mergeAllOf(schema: Schema, root: Schema): Schema {
  const { allOf, ...rest } = schema;
  let merged: Schema = { ...rest };
  for (const member of Array.isArray(allOf) ? allOf : []) {
    if (!isSchema(member)) continue;
    const part = typeof member.$ref === "string"
      ? { ...(resolveRef(member.$ref, root) ?? {}), ...withoutKey(member, "$ref") }
      : member;
    const properties = { ...(merged.properties as Schema ?? {}), ...(part.properties as Schema) };
    const required = [
      ...(Array.isArray(merged.required) ? merged.required : []),
      ...(Array.isArray(part.required) ? part.required : []),
    ];
    merged = { ...part, ...merged, properties, required: [...new Set(required)] };
    if (Object.keys(properties).length === 0 && merged.type !== "object") delete merged.properties;
    if (required.length === 0) delete merged.required;
  }
  return merged;
}

function withoutKey(schema: Schema, key: string): Schema {
  const { [key]: _dropped, ...rest } = schema;
  return rest;
}

/** Makes a schema also accept `null`, the strict-mode form of an optional field. */
function nullable(schema: Schema): Schema {
  const types = typesOf(schema);
  if (types.includes("null")) return schema;
  if (Array.isArray(schema.anyOf)) {
    const hasNull = schema.anyOf.some((branch) =>
      isSchema(branch) && typesOf(branch).includes("null")
    );
    return hasNull ? schema : { ...schema, anyOf: [...schema.anyOf, { type: "null" }] };
  }
  const primitive = types.length > 0 &&
    types.every((t) => t === "string" || t === "number" || t === "integer" || t === "boolean");
  if (primitive && schema.const === undefined) {
    const next: Schema = { ...schema, type: [...types, "null"] };
    if (Array.isArray(schema.enum)) next.enum = [...schema.enum, null];
    return next;
  }
  const { description, ...inner } = schema;
  return {
    anyOf: [inner, { type: "null" }],
    ...(description === undefined ? {} : { description }),
  };
}

/** Any JSON value strict mode can describe without an open object. */
function anyValue(description: unknown): Schema {
  return {
    anyOf: [
      { type: "string" },
      { type: "number" },
      { type: "boolean" },
      { type: "null" },
    ],
    ...(description === undefined ? {} : { description }),
  };
}

function strictDefs(defs: unknown, root: Schema, depth: number): Schema | undefined {
  if (!isSchema(defs)) return undefined;
  const out: Schema = {};
  for (const [name, def] of Object.entries(defs)) {
    out[name] = strictNode(isSchema(def) ? def : {}, root, depth);
  }
  return out;
}

/** Inlines a `$ref` that has sibling keywords (strict mode wants a bare `$ref`). */
function inlineRef(schema: Schema, root: Schema, depth: number): Schema {
  const target = resolveRef(schema.$ref as string, root);
  if (target === undefined || depth > 16) {
    return { $ref: strictRef(schema.$ref as string) };
  }
  return strictNode({ ...target, ...withoutKey(schema, "$ref") }, root, depth + 1);
}

function strictNode(input: Schema, root: Schema, depth: number): Schema {
  let schema = input;
  if (Array.isArray(schema.allOf)) schema = mergeAllOf(schema, root);
  if (Array.isArray(schema.oneOf)) {
    const { oneOf, ...rest } = schema;
    schema = { ...rest, anyOf: [...(Array.isArray(rest.anyOf) ? rest.anyOf : []), ...oneOf] };
  }
  if (typeof schema.$ref === "string") {
    const siblings = Object.keys(schema).filter((k) => k !== "$ref" && k !== "$defs");
    if (siblings.length > 0) return inlineRef(schema, root, depth);
    return { $ref: strictRef(schema.$ref) };
  }
  if (schema.type === undefined && typeof schema.const !== "undefined") {
    const type = schema.const === null
      ? "null"
      : Array.isArray(schema.const)
      ? "array"
      : typeof schema.const === "number"
      ? "number"
      : typeof schema.const;
    schema = { ...schema, type };
  }
  if (schema.type === undefined && Array.isArray(schema.enum)) {
    const kinds = [
      ...new Set(
        schema.enum.map((e) => e === null ? "null" : typeof e === "number" ? "number" : typeof e),
      ),
    ];
    schema = { ...schema, type: kinds.length === 1 ? kinds[0] : kinds };
  }
  if (schema.type === undefined && schema.properties !== undefined) {
    schema = { ...schema, type: "object" };
  }
  if (schema.type === undefined && schema.items !== undefined) {
    schema = { ...schema, type: "array" };
  }

  const types = typesOf(schema);
  const anyOf = Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (types.length === 0 && anyOf === undefined) return anyValue(schema.description);

  const allowed = new Set([
    ...COMMON_KEYWORDS,
    ...types.flatMap((t) => [...(TYPED_KEYWORDS[t] ?? [])]),
  ]);
  const notes: string[] = [];
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "description") continue;
    if (key === "format" && !STRICT_FORMATS.has(String(value))) {
      notes.push(describeDropped(key, value)!);
      continue;
    }
    if (!allowed.has(key)) {
      const note = describeDropped(key, value);
      if (note !== undefined) notes.push(note);
      continue;
    }
    switch (key) {
      case "properties":
      case "required":
      case "additionalProperties":
        break; // rebuilt below for objects
      case "items":
        out.items = Array.isArray(value)
          ? strictNode({ anyOf: value.filter(isSchema) }, root, depth + 1)
          : strictNode(isSchema(value) ? value : {}, root, depth + 1);
        if (Array.isArray(value)) {
          out.minItems ??= value.length;
          out.maxItems ??= value.length;
        }
        break;
      case "anyOf":
        out.anyOf = (value as unknown[]).map((branch) =>
          strictNode(isSchema(branch) ? branch : {}, root, depth + 1)
        );
        break;
      case "$defs":
        if (depth === 0) out.$defs = strictDefs(value, root, depth + 1);
        break;
      case "enum":
        out.enum = [...(value as unknown[])];
        break;
      case "type":
        out.type = Array.isArray(value) ? [...value] : value;
        break;
      default:
        out[key] = value !== null && typeof value === "object" ? structuredClone(value) : value;
    }
  }
  if (depth === 0 && isSchema(root.definitions) && out.$defs === undefined) {
    out.$defs = strictDefs(root.definitions, root, depth + 1);
  }
  if (types.includes("object")) {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const strictProperties: Schema = {};
    for (const [name, property] of Object.entries(properties)) {
      const strict = strictNode(isSchema(property) ? property : {}, root, depth + 1);
      strictProperties[name] = required.has(name) ? strict : nullable(strict);
    }
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
      notes.push("Other keys cannot be given here.");
    }
    out.properties = strictProperties;
    out.required = Object.keys(strictProperties);
    out.additionalProperties = false;
  }
  const description = withNotes(schema.description, notes);
  if (description !== undefined) out.description = description;
  return out;
}

/**
 * The strict-mode (OpenAI Structured Outputs) form of an object schema: a
 * fresh, mutable copy in which every object requires all of its properties
 * and forbids others, optional properties accept `null`, and only keywords
 * strict mode supports remain (`default`, `$schema`, `minLength` and the
 * like are dropped, their meaning appended to the `description`).
 *
 * @example
 * ```ts
 * import { toStrictJsonSchema } from "@openwork/tools";
 * const strict = toStrictJsonSchema({
 *   type: "object",
 *   properties: { path: { type: "string" }, limit: { type: "integer", minimum: 1 } },
 *   required: ["path"],
 *   additionalProperties: false,
 * });
 * console.log(strict.required); // ["path", "limit"]
 * console.log(strict.properties.limit); // { type: ["integer", "null"], minimum: 1 }
 * ```
 */
export function toStrictJsonSchema(schema: JsonSchemaObject): MutableJsonSchemaObject {
  const root = schema as unknown as Schema;
  const strict = strictNode({ ...root, type: "object" }, root, 0);
  return strict as MutableJsonSchemaObject;
}
