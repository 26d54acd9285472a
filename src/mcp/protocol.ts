/**
 * The MCP protocol engine of the server side: the lifecycle (`initialize`
 * with version negotiation, `notifications/initialized`, `ping`), logging
 * (`logging/setLevel`, `notifications/message`), request handlers with
 * cancellation (`notifications/cancelled`) and progress, and requests from
 * the server to the client (`roots/list`, `elicitation/create`) with ids and
 * timeouts. It speaks JSON-RPC over any {@link McpTransport}; what the
 * server offers (tools) is registered on it by {@link createMcpServer}.
 *
 * @module
 */
import * as v from "valibot";
import { JSONRPC_ERROR, type JsonRpcMessage, preview } from "./jsonrpc.ts";
import { LOGGING_LEVELS, type LoggingLevel, paramsProblem } from "./requests.ts";

/** The newest protocol revision this server speaks; offered when the client's is unknown. */
export const LATEST_PROTOCOL_VERSION = "2025-11-25";

/** Every protocol revision this server accepts, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

/** How long a request to the client may go unanswered by default: 60 seconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** The MCP error code of a request that timed out or whose connection closed. */
const REQUEST_TIMEOUT = -32001;
const CONNECTION_CLOSED = -32000;
const INTERNAL_ERROR = -32603;

/** A JSON-RPC request or response id. */
export type RequestId = string | number;

/** Where a message is going: the request it belongs to, if any (HTTP sends it on that request's stream). */
export interface SendOptions {
  /** The id of the client request this message answers or accompanies. */
  readonly relatedRequestId?: RequestId;
}

/**
 * A connection the server speaks JSON-RPC over: the package's
 * {@link StdioTransport}, a Streamable HTTP session of {@link serveHttp}, or
 * any object with these members (the MCP SDK's transports have them).
 */
export interface McpTransport {
  /** Starts receiving messages. */
  start(): Promise<void>;
  /** Sends one message. */
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  /** Closes the connection; `onclose` follows. */
  close(): Promise<void>;
  /** Receives each message that arrives. */
  onmessage?: (message: JsonRpcMessage, extra?: unknown) => void;
  /** Hears what went wrong on the connection. */
  onerror?: (error: Error) => void;
  /** Hears that the connection closed. */
  onclose?: () => void;
  /** The session id, where the transport has sessions. */
  readonly sessionId?: string;
}

/** An error answered to a request with its JSON-RPC code. */
export class McpError extends Error {
  /** The JSON-RPC error code. */
  readonly code: number;

  /** An error with `code` and `message`. */
  constructor(code: number, message: string) {
    super(message);
    this.name = "McpError";
    this.code = code;
  }
}

/** The name and version a party gives in `initialize`. */
export interface Implementation {
  /** The program's name. */
  readonly name: string;
  /** Its version. */
  readonly version: string;
  /** More the party said about itself. */
  readonly [key: string]: unknown;
}

/** What the client said it can do in `initialize` (`roots`, `elicitation`, `sampling`, …). */
export type ClientCapabilities = Readonly<Record<string, unknown>>;

/** What a request handler gets besides the request. */
export interface RequestContext {
  /** The request's id. */
  readonly requestId: RequestId;
  /** Aborted when the client cancels the request or the connection closes. */
  readonly signal: AbortSignal;
  /** Sends a notification on the request's behalf (dropped once it is cancelled). */
  notify(method: string, params: Record<string, unknown>): Promise<void>;
}

/** Answers one request method; a thrown {@link McpError} is answered with its code. */
export type RequestHandler = (
  params: Record<string, unknown>,
  context: RequestContext,
) => Promise<Record<string, unknown>> | Record<string, unknown>;

/** Hears one notification method. */
export type NotificationHandler = (params: Record<string, unknown>) => void;

/** Options of a request sent to the client. */
export interface RequestOptions extends SendOptions {
  /** Cancels the request (the client hears `notifications/cancelled`). */
  readonly signal?: AbortSignal;
  /** How long to wait for the answer (default {@link DEFAULT_REQUEST_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
}

/** A log message sent as `notifications/message`. */
export interface LoggingMessage {
  /** How severe it is. */
  readonly level: LoggingLevel;
  /** Who logs it. */
  readonly logger?: string;
  /** What it says. */
  readonly data: unknown;
}

/** Options of {@link McpServer}. */
export interface McpServerInit {
  /** The server's name and version in `initialize`. */
  readonly info: Implementation;
  /** The capabilities `initialize` announces. */
  readonly capabilities: Readonly<Record<string, unknown>>;
  /** Instructions for the client's model, sent with `initialize`. */
  readonly instructions?: string;
}

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: Error): void;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is RequestId {
  return typeof value === "string" || typeof value === "number";
}

const Cancelled = v.looseObject({ requestId: v.union([v.string(), v.number()]) });

/**
 * The server side of an MCP connection: one transport at a time; the
 * lifecycle, `ping` and logging are built in, the rest is registered with
 * {@link McpServer.setRequestHandler} and
 * {@link McpServer.setNotificationHandler}.
 *
 * @example
 * ```ts
 * import { McpServer, StdioTransport } from "@openwork/tools/mcp";
 * const server = new McpServer({
 *   info: { name: "echo", version: "1.0.0" },
 *   capabilities: { tools: {} },
 * });
 * server.setRequestHandler("tools/list", () => ({ tools: [] }));
 * await server.connect(new StdioTransport());
 * ```
 */
export class McpServer {
  /** Hears that the connection closed. */
  onclose?: () => void;
  /** Hears what went wrong (refused input, failed sends). */
  onerror?: (error: Error) => void;
  /** Hears `notifications/initialized`. */
  oninitialized?: () => void;

  readonly #init: McpServerInit;
  readonly #requests = new Map<string, RequestHandler>();
  readonly #notifications = new Map<string, NotificationHandler>();
  readonly #running = new Map<RequestId, AbortController>();
  readonly #pending = new Map<RequestId, Pending>();
  #transport?: McpTransport;
  #nextId = 0;
  #client?: { capabilities: ClientCapabilities; info: Implementation; version: string };
  #level?: LoggingLevel;

  /** A server that announces `init.info` and `init.capabilities`. */
  constructor(init: McpServerInit) {
    this.#init = init;
    this.setRequestHandler("initialize", (params) => this.#initialize(params));
    this.setRequestHandler("ping", () => ({}));
    this.setRequestHandler("logging/setLevel", (params) => {
      this.#level = params.level as LoggingLevel;
      return {};
    });
    this.setNotificationHandler("notifications/initialized", () => this.oninitialized?.());
    this.setNotificationHandler("notifications/cancelled", (params) => {
      const parsed = v.safeParse(Cancelled, params);
      if (parsed.success) this.#running.get(parsed.output.requestId)?.abort(params.reason);
    });
  }

  /** Answers `method` with `handler` (replacing any earlier one). */
  setRequestHandler(method: string, handler: RequestHandler): void {
    this.#requests.set(method, handler);
  }

  /** Hears `method` with `handler` (replacing any earlier one). */
  setNotificationHandler(method: string, handler: NotificationHandler): void {
    this.#notifications.set(method, handler);
  }

  /** What the client said it can do, once it has initialized. */
  getClientCapabilities(): ClientCapabilities | undefined {
    return this.#client?.capabilities;
  }

  /** The client's name and version, once it has initialized. */
  getClientVersion(): Implementation | undefined {
    return this.#client?.info;
  }

  /** The protocol revision agreed in `initialize`. */
  getProtocolVersion(): string | undefined {
    return this.#client?.version;
  }

  /**
   * Serves over `transport`, chaining its own `onclose` and `onerror`, and
   * starts it.
   */
  async connect(transport: McpTransport): Promise<void> {
    if (this.#transport !== undefined) {
      throw new Error("McpServer: already connected; close() first");
    }
    this.#transport = transport;
    const closed = transport.onclose;
    const failed = transport.onerror;
    transport.onclose = () => {
      closed?.();
      this.#closed(transport);
    };
    transport.onerror = (error: Error) => {
      failed?.(error);
      this.onerror?.(error);
    };
    transport.onmessage = (message: JsonRpcMessage) => this.#receive(transport, message);
    await transport.start();
  }

  /** Closes the transport; running handlers are aborted and requests to the client fail. */
  async close(): Promise<void> {
    await this.#transport?.close();
  }

  /** Sends a notification. */
  async notify(
    method: string,
    params?: Record<string, unknown>,
    options?: SendOptions,
  ): Promise<void> {
    const transport = this.#connected();
    await transport.send(
      { jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) },
      options,
    );
  }

  /**
   * Sends `notifications/message`, unless the client set a level above
   * `message.level`.
   */
  async sendLoggingMessage(message: LoggingMessage): Promise<void> {
    const level = this.#level;
    if (
      level !== undefined && LOGGING_LEVELS.indexOf(message.level) < LOGGING_LEVELS.indexOf(level)
    ) {
      return;
    }
    await this.notify("notifications/message", { ...message });
  }

  /**
   * Sends a request to the client and resolves its result. It fails with an
   * {@link McpError} when the client answers an error, the time runs out or
   * the connection closes; `signal` cancels it.
   */
  request(
    method: string,
    params: Record<string, unknown> | undefined,
    options: RequestOptions = {},
  ): Promise<Record<string, unknown>> {
    const { signal, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS } = options;
    return new Promise((resolve, reject) => {
      const transport = this.#connected();
      const id = this.#nextId++;
      const cancel = (reason: string, error: Error) => {
        if (!this.#pending.delete(id)) return;
        settle();
        transport.send(
          { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } },
          options,
        ).catch((error) => this.onerror?.(error));
        reject(error);
      };
      const timer = setTimeout(
        () => cancel("timed out", new McpError(REQUEST_TIMEOUT, `Request timed out: ${method}`)),
        timeoutMs,
      );
      const onAbort = () =>
        cancel(String(signal?.reason ?? "aborted"), new McpError(REQUEST_TIMEOUT, "Cancelled"));
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      this.#pending.set(id, {
        resolve: (result) => (settle(), resolve(result)),
        reject: (error) => (settle(), reject(error)),
      });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      transport.send(
        { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) },
        options,
      ).catch((error: Error) => {
        if (this.#pending.delete(id)) {
          settle();
          reject(error);
        }
      });
    });
  }

  #connected(): McpTransport {
    if (this.#transport === undefined) throw new McpError(CONNECTION_CLOSED, "Not connected");
    return this.#transport;
  }

  #initialize(params: Record<string, unknown>): Record<string, unknown> {
    const asked = params.protocolVersion as string;
    const version = SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
    this.#client = {
      capabilities: params.capabilities as ClientCapabilities,
      info: params.clientInfo as Implementation,
      version,
    };
    return {
      protocolVersion: version,
      capabilities: this.#init.capabilities,
      serverInfo: this.#init.info,
      ...(this.#init.instructions === undefined ? {} : { instructions: this.#init.instructions }),
    };
  }

  #closed(transport: McpTransport): void {
    if (this.#transport !== transport) return;
    this.#transport = undefined;
    for (const controller of this.#running.values()) controller.abort("the connection closed");
    this.#running.clear();
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    this.onclose?.();
    for (const request of pending) {
      request.reject(new McpError(CONNECTION_CLOSED, "Connection closed"));
    }
  }

  #receive(transport: McpTransport, message: JsonRpcMessage): void {
    const { method, id } = message;
    if (typeof method === "string") {
      if (isId(id)) return this.#request(transport, id, method, message);
      const handler = this.#notifications.get(method);
      if (handler === undefined) return;
      const params = isObject(message.params) ? message.params : {};
      try {
        handler(params);
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
      return;
    }
    if (isId(id) && ("result" in message || "error" in message)) {
      const pending = this.#pending.get(id);
      if (pending === undefined) {
        this.onerror?.(new Error(`a response to an unknown request: ${JSON.stringify(id)}`));
        return;
      }
      this.#pending.delete(id);
      const error = message.error as { code: number; message: string } | undefined;
      if (error !== undefined) pending.reject(new McpError(error.code, error.message));
      else if (isObject(message.result)) pending.resolve(message.result);
      else {pending.reject(
          new McpError(JSONRPC_ERROR.invalidRequest, "The result is not an object"),
        );}
      return;
    }
    this.onerror?.(new Error(`an unknown message: ${preview(message, 200)}`));
  }

  #request(transport: McpTransport, id: RequestId, method: string, message: JsonRpcMessage): void {
    const reply = (body: { result: unknown } | { error: { code: number; message: string } }) =>
      transport.send({ jsonrpc: "2.0", id, ...body }, { relatedRequestId: id })
        .catch((error: Error) => this.onerror?.(error));
    const handler = this.#requests.get(method);
    if (handler === undefined) {
      return void reply({
        error: { code: JSONRPC_ERROR.methodNotFound, message: "Method not found" },
      });
    }
    const problem = paramsProblem(method, message);
    if (problem !== undefined) {
      return void reply({
        error: {
          code: JSONRPC_ERROR.invalidParams,
          message: `Invalid params for ${method}:\n${problem}`,
        },
      });
    }
    // A second request under the id of a running one would make the first one uncancellable.
    if (this.#running.has(id)) {
      return void reply({
        error: {
          code: JSONRPC_ERROR.invalidRequest,
          message: `Invalid Request: request ${JSON.stringify(id)} is already running`,
        },
      });
    }
    const controller = new AbortController();
    this.#running.set(id, controller);
    const context: RequestContext = {
      requestId: id,
      signal: controller.signal,
      notify: async (name, params) => {
        if (!controller.signal.aborted) await this.notify(name, params, { relatedRequestId: id });
      },
    };
    const params = isObject(message.params) ? message.params : {};
    Promise.resolve()
      .then(() => handler(params, context))
      .then(
        (result) => {
          if (!controller.signal.aborted) return reply({ result });
        },
        (error) => {
          if (controller.signal.aborted) return;
          const code = error instanceof McpError ? error.code : INTERNAL_ERROR;
          return reply({ error: { code, message: String(error?.message ?? error) } });
        },
      )
      .finally(() => {
        if (this.#running.get(id) === controller) this.#running.delete(id);
      });
  }
}
