/**
 * The params of the MCP requests this server answers, checked before a
 * handler sees them: a request whose params do not fit its method is
 * answered with -32602 and one line per field (`params.name: …`). A
 * `tools/call` whose `arguments` is not an object passes: the toolset
 * answers it with a tool result with `isError: true`, the same kind a
 * schema failure gets. A `tools/call` without `arguments` passes too: the
 * tool runs with `{}`.
 *
 * @module
 */
import * as v from "valibot";

/** The log levels of MCP (RFC 5424), least severe first. */
export const LOGGING_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const;

/** An MCP log level. */
export type LoggingLevel = (typeof LOGGING_LEVELS)[number];

const Meta = v.optional(
  v.looseObject({ progressToken: v.optional(v.union([v.string(), v.number()])) }),
);

/** Params that may be left out, and carry at most `_meta` the server reads. */
const OptionalParams = v.optional(v.looseObject({ _meta: Meta }));

/** The request, as far as each method's handler reads it. */
const REQUESTS: ReadonlyMap<string, v.GenericSchema> = new Map<string, v.GenericSchema>([
  [
    "initialize",
    v.looseObject({
      params: v.looseObject({
        protocolVersion: v.string(),
        capabilities: v.looseObject({}),
        clientInfo: v.looseObject({ name: v.string(), version: v.string() }),
        _meta: Meta,
      }),
    }),
  ],
  ["ping", v.looseObject({ params: OptionalParams })],
  [
    "tools/list",
    v.looseObject({
      params: v.optional(v.looseObject({ cursor: v.optional(v.string()), _meta: Meta })),
    }),
  ],
  [
    "tools/call",
    v.looseObject({
      // Optional, as the spec has it: a call without it runs with `{}`.
      params: v.looseObject({ name: v.string(), arguments: v.optional(v.unknown()), _meta: Meta }),
    }),
  ],
  [
    "logging/setLevel",
    v.looseObject({ params: v.looseObject({ level: v.picklist(LOGGING_LEVELS), _meta: Meta }) }),
  ],
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Field by field, why a request's params do not fit its method, or
 * `undefined` when they fit (or the method is not one checked here).
 */
export function paramsProblem(
  method: string,
  request: Readonly<Record<string, unknown>>,
): string | undefined {
  if (request.params !== undefined && !isObject(request.params)) {
    return "params: MCP params are a JSON object";
  }
  const schema = REQUESTS.get(method);
  if (schema === undefined) return undefined;
  const parsed = v.safeParse(schema, request);
  if (parsed.success) return undefined;
  return parsed.issues
    .map((issue) => `${v.getDotPath(issue) ?? "(request)"}: ${issue.message}`)
    .join("\n");
}
