/**
 * Strict mode (OpenAI Structured Outputs): the strict form of every input
 * schema obeys the documented rules, and a strict-mode caller, which sends
 * `null` for every optional field it does not use, gets exactly what the
 * same call without those fields gets.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  defineTool,
  finalizeToolset,
  type JsonSchemaObject,
  ToolRegistry,
  toStrictJsonSchema,
} from "../mod.ts";
import { ALL_TOOLS, memorySession } from "./helpers.ts";

// The rules of OpenAI's "Supported schemas" (Structured Outputs guide), restated
// here independently of the implementation so each side checks the other.
const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
const ANY_KEYWORDS = new Set(["type", "description", "enum", "const", "anyOf", "$ref", "$defs"]);
const KEYWORDS_BY_TYPE: Record<string, readonly string[]> = {
  object: ["properties", "required", "additionalProperties"],
  array: ["items", "minItems", "maxItems"],
  string: ["pattern", "format"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  boolean: [],
  null: [],
};
const FORMATS = new Set([
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
const MAX_DEPTH = 10;
const MAX_PROPERTIES = 5000;
const MAX_STRING_BUDGET = 120_000;
const MAX_ENUM_VALUES = 1000;
const LARGE_ENUM = 250;
const LARGE_ENUM_BUDGET = 15_000;

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function typeMatches(value: unknown, type: string): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "integer":
      return Number.isInteger(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return isNode(value);
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    default:
      return false;
  }
}

/** Every way `schema` breaks the strict-mode rules; empty when it follows them. */
function strictModeViolations(schema: unknown): string[] {
  const problems: string[] = [];
  let properties = 0;
  let budget = 0;
  let enumValues = 0;
  const root = isNode(schema) ? schema : {};
  if (root.type !== "object") problems.push("(root): must be type object");
  if (root.anyOf !== undefined) problems.push("(root): must not be anyOf");

  function visit(node: unknown, where: string, depth: number): void {
    if (!isNode(node)) return void problems.push(`${where}: not a schema object`);
    if (depth > MAX_DEPTH) problems.push(`${where}: nested deeper than ${MAX_DEPTH}`);
    if (typeof node.$ref === "string") {
      const extra = Object.keys(node).filter((k) =>
        k !== "$ref" && !(depth === 0 && k === "$defs")
      );
      if (extra.length > 0) problems.push(`${where}: $ref with siblings ${extra.join(", ")}`);
      if (!/^#(\/\$defs\/[^/]+)?$/.test(node.$ref)) problems.push(`${where}: $ref ${node.$ref}`);
      return;
    }
    const types = node.type === undefined
      ? []
      : Array.isArray(node.type)
      ? node.type.map(String)
      : [String(node.type)];
    for (const t of types) if (!TYPES.has(t)) problems.push(`${where}: type ${t}`);
    if (types.length === 0 && !Array.isArray(node.anyOf)) {
      problems.push(`${where}: neither type nor anyOf`);
    }
    const allowed = new Set([...ANY_KEYWORDS, ...types.flatMap((t) => KEYWORDS_BY_TYPE[t] ?? [])]);
    for (const key of Object.keys(node)) {
      if (!allowed.has(key)) problems.push(`${where}: keyword ${key} not accepted`);
    }
    if (node.$defs !== undefined && depth !== 0) problems.push(`${where}: $defs below the root`);
    if (node.format !== undefined && !FORMATS.has(String(node.format))) {
      problems.push(`${where}: format ${node.format}`);
    }
    if (Array.isArray(node.enum)) {
      enumValues += node.enum.length;
      let length = 0;
      for (const value of node.enum) {
        if (typeof value === "string") length += value.length;
        if (types.length > 0 && !types.some((t) => typeMatches(value, t))) {
          problems.push(`${where}: enum value ${JSON.stringify(value)} outside its type`);
        }
      }
      budget += length;
      if (node.enum.length > LARGE_ENUM && length > LARGE_ENUM_BUDGET) {
        problems.push(`${where}: enum of ${node.enum.length} values, ${length} characters`);
      }
    }
    if (typeof node.const === "string") budget += node.const.length;
    if (types.includes("object")) {
      if (node.additionalProperties !== false) {
        problems.push(`${where}: additionalProperties must be false`);
      }
      const props = isNode(node.properties) ? node.properties : undefined;
      if (props === undefined) return void problems.push(`${where}: object without properties`);
      const names = Object.keys(props);
      const required = Array.isArray(node.required) ? node.required : [];
      for (const name of names) {
        if (!required.includes(name)) problems.push(`${where}.${name}: not in required`);
        budget += name.length;
        properties++;
        visit(props[name], `${where}.${name}`, depth + 1);
      }
      for (const name of required) {
        if (!names.includes(String(name))) problems.push(`${where}: requires unknown ${name}`);
      }
    }
    if (types.includes("array")) {
      if (!isNode(node.items)) problems.push(`${where}: array without one items schema`);
      else visit(node.items, `${where}[]`, depth + 1);
    }
    if (Array.isArray(node.anyOf)) {
      node.anyOf.forEach((branch, i) => visit(branch, `${where}|${i}`, depth + 1));
    }
    if (depth === 0 && isNode(node.$defs)) {
      for (const [name, def] of Object.entries(node.$defs)) {
        budget += name.length;
        visit(def, `$defs.${name}`, 1);
      }
    }
  }
  visit(schema, "(root)", 0);
  if (properties > MAX_PROPERTIES) problems.push(`${properties} properties in all`);
  if (budget > MAX_STRING_BUDGET) problems.push(`${budget} characters of names and values`);
  if (enumValues > MAX_ENUM_VALUES) problems.push(`${enumValues} enum values in all`);
  return problems;
}

async function builtinDefinitions() {
  return finalizeToolset({ session: await memorySession() }).definitions;
}

test("strict mode: the strict schema of every built-in tool follows the strict-mode rules", async () => {
  const definitions = await builtinDefinitions();
  assert.deepEqual(definitions.map((d) => d.name), ALL_TOOLS);
  for (const d of definitions) {
    const strict = toStrictJsonSchema(d.inputSchema);
    assert.deepEqual(strictModeViolations(strict), [], d.name);
    assert.deepEqual(Object.keys(strict.properties), Object.keys(d.inputSchema.properties), d.name);
  }
});

test("strict mode: the checker rejects the non-strict schemas it is meant to catch", async () => {
  const definitions = await builtinDefinitions();
  const grep = definitions.find((d) => d.name === "grep")!;
  // As defined: optional fields are left out of required, and pattern has minLength.
  const problems = strictModeViolations(grep.inputSchema);
  assert.ok(problems.includes("(root).path: not in required"), problems.join("\n"));
  assert.ok(
    problems.includes("(root).pattern: keyword minLength not accepted"),
    problems.join("\n"),
  );
  const object = (properties: Node, extra: Node = {}): Node => ({
    type: "object",
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
    ...extra,
  });
  const cases: [string, unknown][] = [
    ["(root): must not be anyOf", { anyOf: [object({})] }],
    [
      "(root).a: additionalProperties must be false",
      object({ a: { type: "object", properties: {} } }),
    ],
    ["(root).a: keyword default not accepted", object({ a: { type: "string", default: "x" } })],
    ["(root): keyword $schema not accepted", object({}, { $schema: "x" })],
    ["(root).a: format uri", object({ a: { type: "string", format: "uri" } })],
    [
      "(root).a: enum value null outside its type",
      object({ a: { type: "string", enum: ["x", null] } }),
    ],
    ["(root).a: neither type nor anyOf", object({ a: {} })],
    ["(root).a: keyword allOf not accepted", object({ a: { type: "string", allOf: [] } })],
  ];
  for (const [expected, schema] of cases) {
    const found = strictModeViolations(schema);
    assert.ok(found.includes(expected), `${expected} not in ${JSON.stringify(found)}`);
  }
  let deep: Node = object({ leaf: { type: "string" } });
  for (let i = 0; i < 11; i++) deep = object({ child: deep });
  assert.ok(strictModeViolations(deep).some((p) => p.includes("nested deeper than 10")));
  const wide = object(Object.fromEntries(
    Array.from({ length: 5001 }, (_, i) => [`p${i}`, { type: "string" }]),
  ));
  assert.ok(strictModeViolations(wide).includes("5001 properties in all"));
});

test("strict mode: optional fields become nullable and required, constraints survive or move to the description", () => {
  const schema: JsonSchemaObject = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      name: { type: "string", minLength: 1, description: "Who." },
      mode: { type: "string", enum: ["a", "b"] },
      count: { type: "integer", minimum: 1, maximum: 5, default: 2 },
      tags: { type: "array", items: { type: "string", maxLength: 8 }, uniqueItems: true },
      when: { type: "string", format: "date-time" },
      site: { type: "string", format: "uri" },
      nested: {
        type: "object",
        properties: { deep: { type: "boolean" }, need: { type: "number" } },
        required: ["need"],
      },
      either: { oneOf: [{ type: "string" }, { $ref: "#/$defs/Point" }] },
      point: { $ref: "#/$defs/Point", description: "Where." },
      both: {
        allOf: [
          { type: "object", properties: { x: { type: "number" } }, required: ["x"] },
          { properties: { y: { type: "number" } } },
        ],
      },
      anything: {},
    },
    required: ["name"],
    additionalProperties: false,
    $defs: {
      Point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] },
    },
  };
  const before = structuredClone(schema);
  const strict = toStrictJsonSchema(schema);
  assert.deepEqual(schema, before, "the input is not changed");
  assert.deepEqual(strictModeViolations(strict), []);
  const p = strict.properties as Record<string, Node>;
  assert.deepEqual(strict.required, Object.keys(schema.properties));
  assert.equal(strict.$schema, undefined);
  assert.deepEqual(p.name, { type: "string", description: "Who. At least 1 character." });
  assert.deepEqual(p.mode, { type: ["string", "null"], enum: ["a", "b", null] });
  assert.deepEqual(p.count, {
    type: ["integer", "null"],
    minimum: 1,
    maximum: 5,
    description: "Default: 2.",
  });
  assert.deepEqual(p.when, { type: ["string", "null"], format: "date-time" });
  assert.deepEqual(p.site, { type: ["string", "null"], description: "Format: uri." });
  const tags = p.tags as { anyOf: Node[]; description: string };
  assert.deepEqual(tags.anyOf[1], { type: "null" });
  assert.deepEqual(tags.anyOf[0].items, { type: "string", description: "At most 8 characters." });
  assert.equal(tags.description, "Items must be unique.");
  const nested = (p.nested.anyOf as Node[])[0];
  assert.deepEqual(nested.required, ["deep", "need"]);
  assert.deepEqual((nested.properties as Node).need, { type: "number" });
  assert.deepEqual((nested.properties as Node).deep, { type: ["boolean", "null"] });
  assert.deepEqual(p.either.anyOf, [{ type: "string" }, { $ref: "#/$defs/Point" }, {
    type: "null",
  }]);
  assert.equal(p.point.description, "Where.");
  assert.deepEqual((p.point.anyOf as Node[])[0].required, ["x"]);
  const both = (p.both.anyOf as Node[])[0];
  assert.deepEqual(Object.keys(both.properties as Node), ["x", "y"]);
  assert.deepEqual(both.required, ["x", "y"]);
  assert.ok(Array.isArray(p.anything.anyOf));
  // Fresh and mutable: changing the result changes neither the input nor the next result.
  strict.required!.push("extra");
  (strict.properties.name as Node).type = "number";
  assert.deepEqual(schema, before);
  assert.deepEqual(
    toStrictJsonSchema(schema).properties.name,
    { type: "string", description: "Who. At least 1 character." },
  );
});

/** A valid value for each required field of the built-in tools. */
const REQUIRED_VALUES: Record<string, Record<string, unknown>> = {
  read: { path: "a.txt" },
  write: { path: "new.txt", content: "new\n" },
  edit: { path: "a.txt", old_text: "beta", new_text: "gamma" },
  grep: { pattern: "a" },
  glob: { pattern: "*.txt" },
  list: {},
  bash: { command: "echo hi" },
};

const LAYOUT = { "repo/a.txt": "alpha\nbeta\n", "repo/b.txt": "beta\n" };

function comparable(result: { ok: boolean; output: string; data?: unknown; error?: unknown }) {
  return { ok: result.ok, output: result.output, data: result.data, error: result.error };
}

test("strict mode: for every tool, null in every optional field behaves exactly like leaving it out", async () => {
  for (const d of await builtinDefinitions()) {
    const strict = toStrictJsonSchema(d.inputSchema);
    const plain = REQUIRED_VALUES[d.name];
    // What a strict-mode model sends: every field, null for the unused ones.
    const full = Object.fromEntries(
      Object.keys(strict.properties).map((name) => [name, name in plain ? plain[name] : null]),
    );
    assert.ok(
      Object.values(full).includes(null) || d.name === "write" || d.name === "edit",
      d.name,
    );
    const a = finalizeToolset({ session: await memorySession("acceptEdits", LAYOUT) });
    const b = finalizeToolset({ session: await memorySession("acceptEdits", LAYOUT) });
    const withNulls = await a.prepare(d.name, full);
    const without = await b.prepare(d.name, plain);
    assert.equal(withNulls.ok, true, `${d.name}: ${JSON.stringify(withNulls)}`);
    assert.deepEqual(
      withNulls.ok && { input: withNulls.input, effects: withNulls.effects },
      without.ok && { input: without.input, effects: without.effects },
      d.name,
    );
    if (d.name === "bash") continue; // runs a process; its preparation is what nulls could change
    const called = await a.call({ name: d.name, input: full, callId: "1" });
    const plainCalled = await b.call({ name: d.name, input: plain, callId: "1" });
    assert.equal(called.ok, true, `${d.name}: ${called.output}`);
    assert.deepEqual(comparable(called), comparable(plainCalled), d.name);
  }
});

test("strict mode: null for a required field is invalid_input naming the field", async () => {
  const toolset = finalizeToolset({ session: await memorySession("acceptEdits", LAYOUT) });
  for (const [name, plain] of Object.entries(REQUIRED_VALUES)) {
    for (const field of Object.keys(plain)) {
      const prepared = await toolset.prepare(name, { ...plain, [field]: null });
      assert.equal(prepared.ok, false, `${name}.${field}`);
      assert.equal(!prepared.ok && prepared.error.code, "invalid_input", `${name}.${field}`);
      assert.match(!prepared.ok ? prepared.error.message : "", new RegExp(`^${field}:`, "m"));
    }
  }
});

test("strict mode: nested optional fields read null as absent; a field that accepts null keeps it", async () => {
  const seen: unknown[] = [];
  const probe = defineTool({
    id: "test/probe",
    name: "probe",
    description: "Records its input.",
    risk: "read",
    input: v.strictObject({
      target: v.strictObject({
        path: v.pipe(v.string(), v.description("Path.")),
        depth: v.optional(v.pipe(v.number(), v.description("Depth."))),
      }),
      items: v.optional(
        v.array(v.strictObject({
          id: v.string(),
          note: v.optional(v.string()),
        })),
      ),
      label: v.optional(v.nullable(v.string())),
      size: v.optional(v.number(), 10),
    }),
    effects: () => Promise.resolve([]),
    execute: (input) => {
      seen.push(input);
      return Promise.resolve({ data: "ok" });
    },
    toText: (text) => text,
  });
  const registry = new ToolRegistry().register(probe);
  const toolset = finalizeToolset({ session: await memorySession(), registry });
  const strictSchema = toStrictJsonSchema(toolset.definitions[0].inputSchema);
  assert.deepEqual(strictModeViolations(strictSchema), []);
  const sent = {
    target: { path: "x", depth: null },
    items: [{ id: "1", note: null }, { id: "2", note: "n" }],
    label: null,
    size: null,
  };
  const result = await toolset.call({ name: "probe", input: sent, callId: "1" });
  assert.equal(result.ok, true, result.output);
  assert.deepEqual(seen[0], {
    target: { path: "x" },
    items: [{ id: "1" }, { id: "2", note: "n" }],
    label: null,
    size: 10,
  });
  assert.deepEqual(sent.target, { path: "x", depth: null }, "the caller's input is not changed");
  const nestedRequired = await toolset.prepare("probe", { target: { path: null } });
  assert.equal(!nestedRequired.ok && nestedRequired.error.code, "invalid_input");
  assert.match(!nestedRequired.ok ? nestedRequired.error.message : "", /^target\.path:/m);
  const rootRequired = await toolset.prepare("probe", { target: null });
  assert.equal(!rootRequired.ok && rootRequired.error.code, "invalid_input");
  const unknown = await toolset.prepare("probe", { target: { path: "x" }, other: null });
  assert.equal(!unknown.ok && unknown.error.code, "invalid_input", "unknown keys stay errors");
});
