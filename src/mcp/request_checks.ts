/**
 * The checks `createMcpServer`'s engine (`McpServer`) makes before a
 * 2025-era request reaches a handler, kept in front of the official server
 * package so that the 2025 revisions are answered as they always were:
 * params that do not fit their method get -32602 with one line per field,
 * and a request under the id of one still running gets -32600 (a second
 * request under that id would make the first one uncancellable). A
 * `tools/call` whose `arguments` is not an object is the toolset's to
 * refuse, as a tool result, where the server package would answer -32602:
 * it passes with `arguments: {}`, its own arguments kept here for the
 * handler ({@link RequestChecks.takeArguments}). A response to no request
 * the server sent, or to one already answered, is dropped. Connections of
 * revision 2026-07-28 are the server package's to check.
 *
 * @module
 */
import {
  errorReply,
  JSONRPC_ERROR,
  type JsonRpcErrorReply,
  type JsonRpcMessage,
  preview,
} from "./jsonrpc.ts";
import { paramsProblem } from "./requests.ts";

function isObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Why a request's params do not fit its method, field by field, or `undefined`. */
export type ParamsCheck = (
  method: string,
  request: Readonly<Record<string, unknown>>,
) => string | undefined;

/** The requests of one connection still running, and the checks made on each new one. */
export class RequestChecks {
  readonly #running = new Set<string | number>();
  readonly #arguments = new Map<string | number, { value: unknown }>();
  /** The server's requests to the client still unanswered (elicitation, roots). */
  readonly #asked = new Set<string | number>();
  readonly #more?: ParamsCheck;

  /** Checks params as `createMcpServer` does, then with `more` (the server package's own). */
  constructor(more?: ParamsCheck) {
    this.#more = more;
  }

  /**
   * The answer to a request that fails a check, the reason to drop a
   * response to no request of the server's (a forged or replayed answer to
   * a question), or the message to pass on (the same one, or a `tools/call`
   * whose arguments were set aside).
   */
  admit(
    message: JsonRpcMessage,
  ): { reply: JsonRpcErrorReply } | { drop: string } | { message: JsonRpcMessage } {
    if (typeof message.method !== "string" && ("result" in message || "error" in message)) {
      const id = message.id as string | number;
      if (!this.#asked.delete(id)) {
        return { drop: `a response to an unknown request: ${preview(id, 100)}` };
      }
      return { message };
    }
    const refused = this.#refusal(message);
    if (refused !== undefined) return { reply: refused };
    const params = message.params as Record<string, unknown> | undefined;
    const id = message.id as string | number;
    if (
      message.method === "tools/call" && params !== undefined &&
      "arguments" in params && !isObject(params.arguments)
    ) {
      this.#arguments.set(id, { value: params.arguments });
      return { message: { ...message, params: { ...params, arguments: {} } } };
    }
    return { message };
  }

  /** The arguments set aside for the `tools/call` request `id`, once. */
  takeArguments(id: string | number): { value: unknown } | undefined {
    const kept = this.#arguments.get(id);
    this.#arguments.delete(id);
    return kept;
  }

  #refusal(message: JsonRpcMessage): JsonRpcErrorReply | undefined {
    const { method, id } = message;
    if (typeof method !== "string" || !(typeof id === "string" || typeof id === "number")) {
      return undefined;
    }
    const problem = paramsProblem(method, message) ?? this.#more?.(method, message);
    if (problem !== undefined) {
      return errorReply(
        id,
        JSONRPC_ERROR.invalidParams,
        `Invalid params for ${method}:\n${problem}`,
      );
    }
    if (this.#running.has(id)) {
      return errorReply(
        id,
        JSONRPC_ERROR.invalidRequest,
        `Invalid Request: request ${JSON.stringify(id)} is already running`,
      );
    }
    this.#running.add(id);
    return undefined;
  }

  /**
   * Hears a message the server sends: an answer ends the client's request,
   * a request of the server's awaits its answer until answered or withdrawn.
   */
  sent(message: JsonRpcMessage): void {
    const id = message.id as string | number | undefined;
    if (("result" in message || "error" in message) && id !== undefined) {
      this.#running.delete(id);
      this.#arguments.delete(id);
    } else if (typeof message.method === "string" && id !== undefined) {
      this.#asked.add(id);
    } else if (message.method === "notifications/cancelled") {
      const withdrawn = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof withdrawn === "string" || typeof withdrawn === "number") {
        this.#asked.delete(withdrawn);
      }
    }
  }

  /** Hears that the client cancelled a request: it is no longer running for these checks. */
  cancelled(message: JsonRpcMessage): void {
    if (message.method !== "notifications/cancelled") return;
    const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof id === "string" || typeof id === "number") this.#running.delete(id);
  }
}
