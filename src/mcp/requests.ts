/**
 * The params of MCP requests, checked before the SDK's protocol layer sees
 * them. The SDK answers a request whose params do not fit its method with
 * -32603 and a raw validation dump; here it gets -32602 and one line per
 * field. A `tools/call` whose `arguments` is not an object is handed to the
 * toolset instead, whose answer is a tool result with `isError: true`, the
 * same kind a schema failure gets.
 *
 * @module
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ClientRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { errorReply, JSONRPC_ERROR } from "./jsonrpc.ts";

/** Answers a `tools/call` whose `arguments` is not an object, as a `tools/call` result. */
export type BadArgumentsCall = (name: string, input: unknown, id: string | number) => Promise<
  Record<string, unknown>
>;

/** A JSON-RPC message, as far as this module looks into it. */
interface Message {
  [key: string]: unknown;
}

/** The SDK's `Transport`, as far as this module uses it. */
interface Wire {
  start(): Promise<void>;
  send(message: Message, options?: { relatedRequestId?: string | number }): Promise<void>;
  close(): Promise<void>;
  onmessage?: (message: Message, extra?: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  readonly sessionId?: string;
  setProtocolVersion?: (version: string) => void;
}

interface Schema {
  safeParse(value: unknown): {
    success: boolean;
    error?: { issues: { path: PropertyKey[]; message: string }[] };
  };
}

// The params schema of every request a client may send, by method.
const REQUESTS: ReadonlyMap<string, Schema> = new Map(
  (ClientRequestSchema.options as unknown as { shape: { method: { value: string } } }[]).map((
    schema,
  ): [string, Schema] => [schema.shape.method.value, schema as unknown as Schema]),
);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Field by field, why a request's params do not fit its method, or `undefined`. */
export function paramsProblem(method: string, request: unknown): string | undefined {
  const schema = REQUESTS.get(method);
  if (schema === undefined) return undefined;
  const parsed = schema.safeParse(request);
  if (parsed.success) return undefined;
  return (parsed.error?.issues ?? [])
    .map((issue) => `${issue.path.map(String).join(".") || "(request)"}: ${issue.message}`)
    .join("\n");
}

/**
 * Wraps a transport so that requests with params that do not fit their
 * method are answered with -32602 before the server sees them, and a
 * `tools/call` with non-object `arguments` is answered by `badArguments`.
 * Everything else passes through unchanged, in order.
 */
export function checkingParams(transport: Transport, badArguments: BadArgumentsCall): Transport {
  const inner = transport as unknown as Wire;
  let deliver: Wire["onmessage"];
  const screen = (message: Message, extra?: unknown): void => {
    const request = message as { id?: string | number; method?: unknown; params?: unknown };
    if (typeof request.method !== "string" || request.id === undefined) {
      return deliver?.(message, extra);
    }
    const id = request.id;
    const params = request.params;
    const reply = (answer: Promise<Message>): void =>
      void answer
        .then((m: Message) => inner.send(m, { relatedRequestId: id }))
        .catch((error: Error) => inner.onerror?.(error));
    if (
      request.method === "tools/call" && isObject(params) && typeof params.name === "string" &&
      "arguments" in params && !isObject(params.arguments)
    ) {
      const name = params.name;
      return reply(
        badArguments(name, params.arguments, id).then((result): Message => ({
          jsonrpc: "2.0" as const,
          id,
          result,
        })),
      );
    }
    const problem = params !== undefined && !isObject(params)
      ? "params: MCP params are a JSON object"
      : paramsProblem(request.method, message);
    if (problem === undefined) return deliver?.(message, extra);
    reply(Promise.resolve(
      errorReply(
        id,
        JSONRPC_ERROR.invalidParams,
        `Invalid params for ${request.method}:\n${problem}`,
      ) as unknown as Message,
    ));
  };
  const outer: Wire = {
    start: () => inner.start(),
    send: (message: Message, options?: { relatedRequestId?: string | number }) =>
      inner.send(message, options),
    close: () => inner.close(),
    get sessionId() {
      return inner.sessionId;
    },
    setProtocolVersion: (version: string) => inner.setProtocolVersion?.(version),
    get onclose() {
      return inner.onclose;
    },
    set onclose(handler: Wire["onclose"]) {
      inner.onclose = handler;
    },
    get onerror() {
      return inner.onerror;
    },
    set onerror(handler: Wire["onerror"]) {
      inner.onerror = handler;
    },
    get onmessage() {
      return deliver;
    },
    set onmessage(handler: Wire["onmessage"]) {
      deliver = handler;
      inner.onmessage = handler === undefined ? undefined : screen;
    },
  };
  return outer as unknown as Transport;
}
