/**
 * The converters to model API tool formats: each call returns fresh, mutable
 * objects carrying the definitions' names, descriptions and schemas.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  finalizeToolset,
  toAnthropicTools,
  toGeminiFunctionDeclarations,
  type ToolDefinition,
  toOpenAIResponsesTools,
  toOpenAITools,
  toStrictJsonSchema,
} from "../mod.ts";
import { ALL_TOOLS, memorySession } from "./helpers.ts";

interface Converted {
  name: string;
  description: string;
  schema: Record<string, unknown> & { required?: string[]; properties: Record<string, unknown> };
  strict?: boolean;
}

/** Each converter, reduced to the parts every format carries. */
const CONVERTERS: Record<string, (definitions: readonly ToolDefinition[]) => Converted[]> = {
  "openai chat": (ds) =>
    toOpenAITools(ds).map((t) => {
      assert.equal(t.type, "function");
      return { ...t.function, schema: t.function.parameters };
    }),
  "openai chat strict": (ds) =>
    toOpenAITools(ds, { strict: true }).map((t) => {
      assert.equal(t.type, "function");
      return { ...t.function, schema: t.function.parameters };
    }),
  "openai responses": (ds) =>
    toOpenAIResponsesTools(ds).map((t) => {
      assert.equal(t.type, "function");
      return { ...t, schema: t.parameters };
    }),
  "openai responses strict": (ds) =>
    toOpenAIResponsesTools(ds, { strict: true }).map((t) => {
      assert.equal(t.type, "function");
      return { ...t, schema: t.parameters };
    }),
  "anthropic": (ds) => toAnthropicTools(ds).map((t) => ({ ...t, schema: t.input_schema })),
  "gemini": (ds) =>
    toGeminiFunctionDeclarations(ds).map((t) => ({ ...t, schema: t.parametersJsonSchema })),
};

async function definitions(): Promise<readonly ToolDefinition[]> {
  return finalizeToolset({ session: await memorySession() }).definitions;
}

function isFrozenDeep(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  return Object.isFrozen(value) || Object.values(value).some(isFrozenDeep);
}

test("converters: every format carries each definition's name, description and schema", async () => {
  const ds = await definitions();
  for (const [format, convert] of Object.entries(CONVERTERS)) {
    const tools = convert(ds);
    assert.deepEqual(tools.map((t) => t.name), ALL_TOOLS, format);
    const strict = format.endsWith("strict");
    for (const [i, tool] of tools.entries()) {
      assert.equal(tool.description, ds[i].description, `${format} ${tool.name}`);
      const expected = strict ? toStrictJsonSchema(ds[i].inputSchema) : ds[i].inputSchema;
      assert.deepEqual(tool.schema, expected, `${format} ${tool.name}`);
      if (format.startsWith("openai")) assert.equal(tool.strict, strict, `${format} ${tool.name}`);
      else assert.equal("strict" in tool, false, format);
    }
  }
});

test("converters: the strict variants require every field and let optional ones be null", async () => {
  const ds = await definitions();
  const read = ds.find((d) => d.name === "read")!;
  const chat = toOpenAITools([read], { strict: true })[0].function.parameters;
  const responses = toOpenAIResponsesTools([read], { strict: true })[0].parameters;
  for (const schema of [chat, responses]) {
    assert.deepEqual(schema.required, ["path", "offset", "limit"]);
    assert.deepEqual(schema.properties.path, read.inputSchema.properties.path);
    assert.deepEqual((schema.properties.limit as { type: unknown }).type, ["integer", "null"]);
    assert.equal(schema.additionalProperties, false);
  }
  // The plain variants leave the schema as defined.
  assert.deepEqual(toOpenAITools([read])[0].function.parameters.required, ["path"]);
  assert.deepEqual(toOpenAIResponsesTools([read])[0].parameters.required, ["path"]);
});

test("converters: results are fresh and mutable; changing one changes neither the definitions nor the next call", async () => {
  const ds = await definitions();
  const snapshot = structuredClone(ds);
  for (const [format, convert] of Object.entries(CONVERTERS)) {
    const first = convert(ds);
    assert.equal(isFrozenDeep(first), false, `${format}: nothing in the result is frozen`);
    for (const [i, tool] of first.entries()) {
      assert.notEqual(tool.schema, ds[i].inputSchema, format);
      assert.notEqual(tool.schema.properties, ds[i].inputSchema.properties, format);
      // What frameworks do to schemas they are given: add keys, rewrite required, annotate fields.
      tool.schema.required?.push("injected");
      tool.schema.properties.injected = { type: "string" };
      tool.schema.$schema = "http://json-schema.org/draft-07/schema#";
      for (const property of Object.values(tool.schema.properties)) {
        (property as Record<string, unknown>).title = "changed";
      }
    }
    assert.deepEqual(ds, snapshot, `${format}: the definitions are unchanged`);
    assert.deepEqual(convert(ds), convert(snapshot), `${format}: a second call is unaffected`);
    const second = convert(ds);
    assert.equal(second[0].schema.properties.injected, undefined, format);
    assert.equal(second[0].schema.$schema, undefined, format);
  }
});

test("converters: the schemas survive a JSON round trip, as a model API receives them", async () => {
  const ds = await definitions();
  for (const [format, convert] of Object.entries(CONVERTERS)) {
    const tools = convert(ds);
    assert.deepEqual(JSON.parse(JSON.stringify(tools)), tools, format);
  }
});
