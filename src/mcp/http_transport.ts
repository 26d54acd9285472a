/**
 * One MCP session over Streamable HTTP (MCP 2025-06-18, "Transports"), on
 * `node:http` requests that {@link serveHttp} has already admitted (token,
 * Host, Origin, body size). A POST carries one JSON-RPC message: a
 * notification or response gets 202; a request gets its answer as an SSE
 * stream (which also carries the request's progress) when the client
 * accepts `text/event-stream`, else as one JSON body. A GET opens the
 * session's stream (one at a time) for messages that belong to no request,
 * and for the server's questions (elicitation) while it is open; without it
 * a question goes on the stream of the request it is about. DELETE ends the
 * session. Every event stream opens with `retry` and a priming event (an id,
 * empty data), and every event has an id unique within the session; a GET
 * whose `Last-Event-ID` names a request's stream gets 204, since nothing of
 * it is left to send (streams are not replayed). An `initialize` the server
 * refuses is answered without `Mcp-Session-Id`, and its session ends.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  checkMessage,
  errorReply,
  type JsonRpcId,
  type JsonRpcMessage,
  requestIdOf,
} from "./jsonrpc.ts";
import {
  type McpTransport,
  type RequestId,
  type SendOptions,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./protocol.ts";

/** The header that names the session. */
const SESSION_HEADER = "mcp-session-id";

/**
 * The `retry` every event stream opens with: how long a client waits before
 * it reconnects, in milliseconds.
 */
const RETRY_MS = 1000;

/**
 * One SSE stream of a session. Its events carry ids `S-N`: `S` numbers the
 * stream within the session and `N` the event within the stream, so an id
 * is unique across the session's streams and names the stream it came on.
 */
class EventStream {
  readonly response: ServerResponse;
  readonly number: number;
  #next = 1;

  constructor(response: ServerResponse, number: number) {
    this.response = response;
    this.number = number;
  }

  /**
   * The first event: `retry`, and an id with empty data, which a client
   * records as its `Last-Event-ID` without seeing a message (MCP
   * 2025-11-25, "Sending Messages to the Server").
   */
  priming(): string {
    return `retry: ${RETRY_MS}\nid: ${this.number}-0\ndata:\n\n`;
  }

  /** A message as the stream's next event. */
  event(message: JsonRpcMessage): string {
    return `id: ${this.number}-${this.#next++}\nevent: message\ndata: ${
      JSON.stringify(message)
    }\n\n`;
  }
}

/** The exchange of a POST that carries a request, open until its answer. */
interface Exchange {
  readonly response: ServerResponse;
  /** Whether the answer (and what comes before it) is an SSE stream, not one JSON body. */
  readonly sse: boolean;
  /** Whether it carries the session's `initialize`, whose failure leaves no session. */
  readonly initialize: boolean;
  /** Its event stream, once opened (an `initialize`'s opens with its first message). */
  stream?: EventStream;
}

/**
 * Sends a JSON-RPC error with an HTTP status, answering the request whose id
 * is `id` (`null`: none could be read, or there was no request).
 */
export function sendHttpError(
  response: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: JsonRpcId = null,
): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(errorReply(id, code, message)));
}

function accepts(request: IncomingMessage, type: string): boolean {
  const accept = request.headers.accept ?? "";
  return accept.split(",").some((part) => {
    const media = part.split(";")[0].trim().toLowerCase();
    return media === type || media === "*/*" || media === `${type.split("/")[0]}/*`;
  });
}

/** Writes an event; resolves once the stream has taken it (or has closed). */
function write(stream: EventStream, message: JsonRpcMessage): Promise<void> {
  const response = stream.response;
  if (response.write(stream.event(message))) return Promise.resolve();
  return drainedOrClosed(response);
}

/** Resolves once `response` has drained what it holds, or has closed. */
export function drainedOrClosed(response: ServerResponse): Promise<void> {
  // Closed already (the client left while the message was made): 'close' has been emitted and
  // will not be again, and nothing drains, so a wait for either would never end.
  if (response.destroyed || response.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.on("drain", done);
    response.on("close", done);
  });
}

/** Whether a parsed body is an `initialize` request. */
export function isInitializeRequest(body: unknown): boolean {
  const message = body as { method?: unknown; id?: unknown } | null;
  return typeof message === "object" && message !== null && !Array.isArray(message) &&
    message.method === "initialize" && message.id !== undefined;
}

/**
 * The transport of one Streamable HTTP session: the server sends through
 * it, {@link HttpSessionTransport.handle} feeds it the session's HTTP
 * requests.
 */
export class HttpSessionTransport implements McpTransport {
  /** Receives each message a POST carries. */
  onmessage?: (message: JsonRpcMessage, extra?: unknown) => void;
  /** Hears refused input and failed writes. */
  onerror?: (error: Error) => void;
  /** Hears that the session closed. */
  onclose?: () => void;
  /** The session id, sent as `Mcp-Session-Id`. */
  readonly sessionId: string;

  /** The open exchange of each request not yet answered. */
  readonly #byRequest = new Map<RequestId, Exchange>();
  #stream?: EventStream;
  /** The numbers of the GET streams opened so far; every other stream number was a POST's. */
  readonly #getStreams = new Set<number>();
  /** How many event streams the session has opened. */
  #streams = 0;
  #initialized = false;
  #closed = false;

  /** A session named `sessionId`. */
  constructor(sessionId: string) {
    this.sessionId = sessionId;
  }

  /** Whether the session's `initialize` request has arrived. */
  get initialized(): boolean {
    return this.#initialized;
  }

  /** Nothing to start: messages arrive through `handle`. */
  start(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Sends a message on the stream it belongs to: an answer, or a message
   * about a request, on that request's exchange; anything else on the GET
   * stream. With no stream to take it, a notification is dropped (the spec
   * lets the server drop it) and a question to the client fails at once.
   */
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if ("result" in message || "error" in message) {
      const id = message.id as RequestId;
      const exchange = this.#byRequest.get(id);
      // Its client went away: the answer has nowhere to go.
      if (exchange === undefined) return Promise.resolve();
      this.#byRequest.delete(id);
      if (exchange.initialize && "error" in message) {
        return this.#refuseInitialize(exchange, message);
      }
      if (exchange.sse) {
        const stream = this.#streamOf(exchange);
        exchange.response.end(stream.event(message));
      } else {
        exchange.response.writeHead(200, {
          "content-type": "application/json",
          [SESSION_HEADER]: this.sessionId,
        });
        exchange.response.end(JSON.stringify(message));
      }
      return Promise.resolve();
    }
    // A question to the client goes where the client listens for them, its GET stream, when
    // it has one open; anything else about a request goes on that request's stream.
    const isQuestion = "id" in message;
    const related = options?.relatedRequestId === undefined
      ? undefined
      : this.#byRequest.get(options.relatedRequestId);
    const stream = isQuestion && this.#stream !== undefined
      ? this.#stream
      : related?.sse === true
      ? this.#streamOf(related)
      : this.#stream;
    if (stream !== undefined) return write(stream, message);
    // A notification may be dropped; a question dropped would wait for an answer that cannot come.
    if (!isQuestion) return Promise.resolve();
    return Promise.reject(
      new Error(
        "no stream is open to ask the client on (the request is answered as JSON and no GET " +
          "stream is open)",
      ),
    );
  }

  /** Ends every open stream of the session; `onclose` follows once. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    for (const exchange of this.#byRequest.values()) {
      if (!exchange.response.headersSent) {
        sendHttpError(exchange.response, 404, -32001, "Session ended");
      } else exchange.response.end();
    }
    this.#byRequest.clear();
    this.#stream?.response.end();
    this.#stream = undefined;
    this.onclose?.();
    return Promise.resolve();
  }

  /** Serves one HTTP request of the session; a POST's `body` is already parsed. */
  handle(request: IncomingMessage, response: ServerResponse, body: unknown): void {
    if (this.#closed) {
      return sendHttpError(response, 404, -32001, "Session not found", {}, requestIdOf(body));
    }
    switch (request.method) {
      case "POST":
        return this.#post(request, response, body);
      case "GET":
        return this.#get(request, response);
      case "DELETE":
        if (!this.#versionFits(request, response)) return;
        void this.close();
        response.writeHead(200).end();
        return;
      default:
        return sendHttpError(response, 405, -32000, "Method not allowed", {
          allow: "GET, POST, DELETE",
        });
    }
  }

  /**
   * Checks `MCP-Protocol-Version` (absent means 2025-03-26, as the spec says);
   * answers 400 if unknown, to the request whose id is `id`.
   */
  #versionFits(request: IncomingMessage, response: ServerResponse, id: JsonRpcId = null): boolean {
    const header = request.headers["mcp-protocol-version"];
    const version = Array.isArray(header) ? header[0] : header;
    if (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return true;
    sendHttpError(
      response,
      400,
      -32000,
      `Bad Request: unsupported protocol version ${JSON.stringify(version)} ` +
        `(supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
      {},
      id,
    );
    return false;
  }

  #get(request: IncomingMessage, response: ServerResponse): void {
    if (!accepts(request, "text/event-stream")) {
      return sendHttpError(response, 406, -32000, "Not Acceptable: accept text/event-stream");
    }
    if (!this.#versionFits(request, response)) return;
    if (this.#endedStream(request)) {
      // No replay: a request's stream ends with its answer, or with the call cancelled when its
      // exchange drops, so nothing of it is left to send.
      response.writeHead(204, { [SESSION_HEADER]: this.sessionId }).end();
      return;
    }
    if (this.#stream !== undefined) {
      return sendHttpError(response, 409, -32000, "Conflict: the session has a stream open");
    }
    const stream = this.#openEventStream(response);
    this.#getStreams.add(stream.number);
    this.#stream = stream;
    response.once("close", () => {
      if (this.#stream === stream) this.#stream = undefined;
    });
  }

  /**
   * Whether a GET resumes (by `Last-Event-ID`) a stream that was a POST's.
   * One that resumes the GET stream gets a new GET stream; what was sent
   * while none was open is not replayed.
   */
  #endedStream(request: IncomingMessage): boolean {
    const header = request.headers["last-event-id"];
    const last = /^(\d+)-\d+$/.exec((Array.isArray(header) ? header[0] : header) ?? "");
    if (last === null) return false;
    const number = Number(last[1]);
    return number >= 1 && number <= this.#streams && !this.#getStreams.has(number);
  }

  #post(request: IncomingMessage, response: ServerResponse, body: unknown): void {
    // What is refused here answers the request by its id, when it has one.
    const replyId = requestIdOf(body);
    const sse = accepts(request, "text/event-stream");
    if (!sse && !accepts(request, "application/json")) {
      return sendHttpError(
        response,
        406,
        -32000,
        "Not Acceptable: accept application/json and text/event-stream",
        {},
        replyId,
      );
    }
    const type = (request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (type !== "application/json") {
      return sendHttpError(
        response,
        415,
        -32000,
        "Unsupported Media Type: the body must be application/json",
        {},
        replyId,
      );
    }
    // The same envelope checks as a line of stdio (a batch is refused whole).
    const incoming = checkMessage(body);
    if (incoming.kind === "drop") {
      this.onerror?.(new Error(incoming.reason));
      return sendHttpError(response, 400, -32600, `Invalid Request: ${incoming.reason}`);
    }
    if (incoming.kind === "reply") {
      this.onerror?.(new Error(`refused input: ${incoming.reply.error.message}`));
      response.writeHead(400, { "content-type": "application/json" });
      response.end(JSON.stringify(incoming.reply));
      return;
    }
    const message = incoming.message;
    const isRequest = typeof message.method === "string" && "id" in message;
    const initialize = message.method === "initialize" && isRequest;
    if (initialize) {
      if (this.#initialized) {
        return sendHttpError(
          response,
          400,
          -32600,
          "Invalid Request: the session is initialized",
          {},
          replyId,
        );
      }
      this.#initialized = true;
    } else if (!this.#versionFits(request, response, replyId)) return;
    if (!isRequest) {
      response.writeHead(202).end();
      this.onmessage?.(message);
      const params = message.params as { requestId?: unknown } | undefined;
      const cancelled = params?.requestId;
      if (
        message.method === "notifications/cancelled" &&
        (typeof cancelled === "string" || typeof cancelled === "number")
      ) this.#cancelled(cancelled);
      return;
    }
    const id = message.id as RequestId;
    if (this.#byRequest.has(id)) {
      // Not by its id: that id names the running request, whose answer is still to come.
      return sendHttpError(response, 409, -32600, `Invalid Request: request ${id} is running`);
    }
    const exchange: Exchange = { response, sse, initialize };
    this.#byRequest.set(id, exchange);
    response.once("close", () => {
      if (this.#byRequest.get(id) === exchange) this.#byRequest.delete(id);
    });
    // An initialize's stream waits for its first message: refused, it must not name the session.
    if (sse && !initialize) this.#streamOf(exchange);
    this.onmessage?.(message);
  }

  /**
   * Answers an `initialize` the server refused, without naming the session
   * (unless a message before the answer already had), and ends the session:
   * a failed initialize leaves none behind.
   */
  #refuseInitialize(exchange: Exchange, message: JsonRpcMessage): Promise<void> {
    const response = exchange.response;
    if (exchange.stream !== undefined) response.end(exchange.stream.event(message));
    else {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(message));
    }
    return this.close();
  }

  /** The event stream of a request's exchange, opened on first use. */
  #streamOf(exchange: Exchange): EventStream {
    exchange.stream ??= this.#openEventStream(exchange.response);
    return exchange.stream;
  }

  /**
   * Forgets a request the client cancelled: its exchange ends without an
   * answer (the server sends none for a cancelled request).
   */
  #cancelled(id: RequestId): void {
    const exchange = this.#byRequest.get(id);
    if (exchange === undefined) return;
    this.#byRequest.delete(id);
    if (exchange.response.headersSent) exchange.response.end();
    else exchange.response.writeHead(204).end();
  }

  /** Sends the headers and the priming event of an event stream of this session, at once. */
  #openEventStream(response: ServerResponse): EventStream {
    const stream = new EventStream(response, ++this.#streams);
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      [SESSION_HEADER]: this.sessionId,
    });
    response.write(stream.priming());
    return stream;
  }
}
