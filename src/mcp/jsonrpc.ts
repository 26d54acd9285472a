/**
 * JSON-RPC 2.0 envelopes, checked one line at a time: a line is a message to
 * pass on, an error reply to send back, or something to drop (an invalid
 * notification gets no reply, per the spec). Pure functions; no MCP here.
 *
 * @module
 */
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./json_depth.ts";

/** The JSON-RPC 2.0 error codes this server answers with. */
export const JSONRPC_ERROR = {
  /** The line is not JSON. */
  parseError: -32700,
  /** The JSON is not a valid request object (or is a batch, which MCP does not take). */
  invalidRequest: -32600,
  /** The method does not exist. */
  methodNotFound: -32601,
  /** The method exists; its params do not fit it. */
  invalidParams: -32602,
} as const;

/** A request id, as JSON-RPC allows it (`null` only in replies to what could not be read). */
export type JsonRpcId = string | number | null;

/** A JSON-RPC 2.0 error reply. */
export interface JsonRpcErrorReply {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The failed request's id, or `null` when it could not be read. */
  id: JsonRpcId;
  /** What went wrong. */
  error: { code: number; message: string };
}

/** A message that passed the envelope check: a request, notification or response. */
export type JsonRpcMessage = { jsonrpc: "2.0"; [key: string]: unknown };

/** What one line of input comes to. */
export type Incoming =
  | { readonly kind: "message"; readonly message: JsonRpcMessage }
  | { readonly kind: "reply"; readonly reply: JsonRpcErrorReply }
  | { readonly kind: "drop"; readonly reason: string };

/** An error reply. */
export function errorReply(id: JsonRpcId, code: number, message: string): JsonRpcErrorReply {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

// Integers only: a fractional id is not one a client would match its answer to.
function isId(value: unknown): value is string | number {
  return typeof value === "string" || Number.isSafeInteger(value);
}

/**
 * The id an error answer to `value` carries: its id when it is a request
 * whose id can be read, else `null` (JSON-RPC's id for what could not be read).
 */
export function requestIdOf(value: unknown): JsonRpcId {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const { id, method } = value as { id?: unknown; method?: unknown };
  return typeof method === "string" && isId(id) ? id : null;
}

const MEMBERS = {
  request: ["jsonrpc", "id", "method", "params"],
  response: ["jsonrpc", "id", "result", "error"],
} as const;

function strangeMember(value: Record<string, unknown>, allowed: readonly string[]) {
  return Object.keys(value).find((key) => !allowed.includes(key));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Why an object is not a valid JSON-RPC 2.0 request, notification or response, or `undefined`. */
function envelopeProblem(value: Record<string, unknown>): string | undefined {
  if (value.jsonrpc !== "2.0") return `"jsonrpc" must be "2.0", not ${show(value.jsonrpc)}`;
  if ("method" in value) {
    if (typeof value.method !== "string") {
      return `"method" must be a string, not ${show(value.method)}`;
    }
    if ("id" in value && !isId(value.id)) {
      return `"id" must be a string or an integer, not ${show(value.id)}`;
    }
    const strange = strangeMember(value, MEMBERS.request);
    if (strange !== undefined) return `unexpected member ${show(strange)}`;
    if ("params" in value && (typeof value.params !== "object" || value.params === null)) {
      return `"params" must be an object or an array, not ${show(value.params)}`;
    }
    return undefined;
  }
  // A response to a request this server sent (elicitation): an id and exactly one of result or error.
  if (("result" in value) !== ("error" in value) && (isId(value.id) || value.id === null)) {
    const strange = strangeMember(value, MEMBERS.response);
    if (strange !== undefined) return `unexpected member ${show(strange)}`;
    if ("error" in value) {
      const error = value.error;
      if (!isObject(error) || typeof error.code !== "number" || typeof error.message !== "string") {
        return `"error" must be an object with a numeric "code" and a string "message"`;
      }
    }
    return undefined;
  }
  return `a request needs a string "method"`;
}

function show(value: unknown): string {
  if (value === undefined) return "missing";
  return preview(value, 40);
}

/**
 * At most `max` characters of `value` as JSON, for a message. It never
 * throws: a value nested too deeply to serialize (Node's `JSON.stringify`
 * overflows its stack at a few thousand levels) is named by its kind.
 */
export function preview(value: unknown, max: number): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Array.isArray(value) ? "[…]" : typeof value === "object" ? "{…}" : String(value);
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Checks one line of input. Unparseable text is a parse error with id null;
 * an invalid envelope with a readable id is answered with that id; one without
 * an id is a notification (or unreadable), answered with id null when it is
 * not even an object and dropped when it looks like a notification. Batches
 * (arrays) are refused as a whole: MCP removed batching in its 2025-06-18
 * revision. A message nested too deeply is refused first ({@link checkDepth}).
 */
export function parseLine(line: string): Incoming {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return reply(null, JSONRPC_ERROR.parseError, `Parse error: the line is not JSON (${reason}).`);
  }
  return checkDepth(value) ?? checkMessage(value);
}

/**
 * The answer to a message nested deeper than {@link MAX_JSON_DEPTH} levels,
 * or `undefined` when it is not: a request is answered -32600 with its id
 * (`null` when it cannot be read), a notification or a response is dropped
 * (JSON-RPC answers neither).
 */
export function checkDepth(value: unknown): Incoming | undefined {
  if (!nestedDeeperThan(value, MAX_JSON_DEPTH)) return undefined;
  const problem = `the message is nested deeper than ${MAX_JSON_DEPTH} levels, the most ` +
    "this server reads";
  const id = requestIdOf(value);
  if (id !== null) return reply(id, JSONRPC_ERROR.invalidRequest, `Invalid Request: ${problem}.`);
  if (isObject(value) && !("id" in value) && typeof value.method === "string") {
    return { kind: "drop", reason: `notification dropped: ${problem}` };
  }
  if (isObject(value) && !("method" in value) && ("result" in value || "error" in value)) {
    return { kind: "drop", reason: `response dropped: ${problem}` };
  }
  return reply(null, JSONRPC_ERROR.invalidRequest, `Invalid Request: ${problem}.`);
}

/**
 * The envelope checks of {@link parseLine} on a value already parsed (an
 * HTTP body): a message to pass on, an error reply, or something to drop.
 */
export function checkMessage(value: unknown): Incoming {
  if (Array.isArray(value)) {
    return reply(
      null,
      JSONRPC_ERROR.invalidRequest,
      "Invalid Request: batches (JSON arrays) are not supported; MCP sends one message a line.",
    );
  }
  if (!isObject(value)) {
    return reply(
      null,
      JSONRPC_ERROR.invalidRequest,
      `Invalid Request: a message must be a JSON object, not ${show(value)}.`,
    );
  }
  const problem = envelopeProblem(value);
  if (problem === undefined) return { kind: "message", message: value as JsonRpcMessage };
  if (isId(value.id)) {
    return reply(value.id, JSONRPC_ERROR.invalidRequest, `Invalid Request: ${problem}.`);
  }
  // No usable id: a notification is dropped silently; anything else cannot be matched to a reply.
  if (!("id" in value) && typeof value.method === "string") {
    return { kind: "drop", reason: `invalid notification dropped: ${problem}` };
  }
  return reply(null, JSONRPC_ERROR.invalidRequest, `Invalid Request: ${problem}.`);
}

function reply(id: JsonRpcId, code: number, message: string): Incoming {
  return { kind: "reply", reply: errorReply(id, code, message) };
}
