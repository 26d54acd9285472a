/**
 * `null` for an optional field means "not given". Strict-mode callers (OpenAI
 * Structured Outputs and the hosts built on it) must send every field, so they
 * send `null` for the ones they do not use; reading those as absent before
 * validation lets such a call mean exactly what the same call without them
 * means. A required field, or one whose schema itself accepts `null`, keeps
 * its `null`, so validation still judges it.
 *
 * @module
 */
import type { JsonSchemaObject } from "./schema.ts";
import { isSchema, resolveRef } from "./strict_schema.ts";

type Schema = Readonly<Record<string, unknown>>;

function resolve(schema: Schema, root: Schema, seen = 0): Schema {
  if (typeof schema.$ref !== "string" || seen > 16) return schema;
  const target = resolveRef(schema.$ref, root);
  return target === undefined
    ? schema
    : resolve({ ...target, ...schema, $ref: undefined }, root, seen + 1);
}

function acceptsNull(schema: Schema, root: Schema): boolean {
  const resolved = resolve(schema, root);
  const type = resolved.type;
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true;
  if (Array.isArray(resolved.enum) && resolved.enum.includes(null)) return true;
  if (resolved.const === null) return true;
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = resolved[key];
    if (
      Array.isArray(branches) &&
      branches.some((b) => isSchema(b) && acceptsNull(b, root))
    ) {
      return true;
    }
  }
  return false;
}

/**
 * Sets an own, enumerable property. A plain assignment of `__proto__` would
 * set the copy's prototype instead (where the runtime keeps that accessor),
 * so a JSON key of that name would vanish from validation's sight and lend
 * its fields to the copy by inheritance.
 */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

function strip(value: unknown, schema: Schema, root: Schema, depth: number): unknown {
  if (depth > 64) return value;
  const resolved = resolve(schema, root);
  if (Array.isArray(value)) {
    const items = resolved.items;
    if (!isSchema(items)) return value;
    return value.map((item) => strip(item, items, root, depth + 1));
  }
  if (!isSchema(value) || !isSchema(resolved.properties)) return value;
  const properties = resolved.properties;
  const required = new Set(Array.isArray(resolved.required) ? resolved.required : []);
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const fieldSchema = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (!isSchema(fieldSchema)) {
      put(out, key, field); // unknown keys are left for validation to name
      continue;
    }
    if (field === null && !required.has(key) && !acceptsNull(fieldSchema, root)) continue;
    put(out, key, strip(field, fieldSchema, root, depth + 1));
  }
  return out;
}

/**
 * A copy of `input` without the `null`s given for optional fields (at any
 * depth the schema describes) that do not themselves accept `null`. Input
 * that is not an object comes back as it is.
 *
 * @example
 * ```ts
 * import { withoutNullOptionals } from "./null_optionals.ts";
 * const schema = {
 *   type: "object",
 *   properties: { path: { type: "string" }, limit: { type: "integer" } },
 *   required: ["path"],
 *   additionalProperties: false,
 * } as const;
 * console.log(withoutNullOptionals({ path: "a.txt", limit: null }, schema)); // { path: "a.txt" }
 * ```
 */
export function withoutNullOptionals(input: unknown, schema: JsonSchemaObject): unknown {
  const root = schema as Schema;
  return strip(input, root, root, 0);
}
