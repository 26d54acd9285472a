/**
 * The MCP server over Streamable HTTP: the same server as over stdio, on the
 * official server package, one toolset session per MCP session of the 2025
 * revisions and stateless 2026-07-28 requests, behind a bearer token, on
 * `node:http` (Deno and Node alike).
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Buffer } from "node:buffer";
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { HttpSessionTransport, isInitializeRequest, sendHttpError } from "./http_transport.ts";
import { JSONRPC_ERROR, type JsonRpcId, type JsonRpcMessage, requestIdOf } from "./jsonrpc.ts";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./json_depth.ts";
import type { FinalizedToolset } from "../contract/toolset.ts";
import type { McpServerOptions } from "./options.ts";
import { ConnectionGate } from "./connection_gate.ts";
import type { ModernEngine } from "./modern.ts";
import type { ModernHttp } from "./http_modern.ts";
import { EraChannel, isModernHttpRequest } from "./eras.ts";
import { RequestChecks } from "./request_checks.ts";

/** How long a new connection may take to present request headers with the token, by default. */
const HEADERS_TIMEOUT_MS = 10_000;
/** How long a connection may take to send a whole request (not its response stream). */
const REQUEST_TIMEOUT_MS = 60_000;
/** Connections of the token holder served at once; more get 503. */
const MAX_CONNECTIONS = 256;
/**
 * Connections that have not presented the token open at once, by default.
 * The token holder's new connection is closed if this many more arrive
 * before its headers are read, so the budget is what a flood has to beat
 * in that time: against a local flood at the rate the server can accept
 * (thousands a second), 32 lost about one holder's connection in three,
 * 256 none in a thousand.
 */
const MAX_UNAUTHENTICATED_CONNECTIONS = 256;

/** How long an MCP session may go without an open HTTP exchange before it ends: 30 minutes. */
export const DEFAULT_IDLE_TIMEOUT_MS: number = 30 * 60 * 1000;

/**
 * How many MCP sessions may be open at once: 64. Each holds a toolset (and
 * its processes) until it ends, so one token holder cannot open them without
 * bound.
 */
export const DEFAULT_MAX_SESSIONS: number = 64;

/** The path the MCP endpoint is served at. */
export const MCP_HTTP_PATH = "/mcp";

/** The largest request body read (as much as a line of stdio): 4 MiB. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"];

/** Options of {@link serveHttp}. */
export interface HttpMcpServerOptions extends McpServerOptions {
  /** The address to listen on (default `127.0.0.1`: only this machine). */
  readonly host?: string;
  /** The port (default 0: one the system picks; the answer's `url` names it). */
  readonly port?: number;
  /** The bearer token every request must carry (default: 32 random bytes, base64url). */
  readonly token?: string;
  /** How long a session may sit without an open HTTP exchange before it ends (default {@link DEFAULT_IDLE_TIMEOUT_MS}). */
  readonly idleTimeoutMs?: number;
  /**
   * How many sessions may be open at once (default {@link DEFAULT_MAX_SESSIONS});
   * an `initialize` beyond it gets 503 until one ends (`DELETE`, idle, close).
   */
  readonly maxSessions?: number;
  /**
   * The `Host` header values accepted, as `name:port`. Default: the loopback
   * names with the port, and the listening host with the port unless it is a
   * wildcard (`0.0.0.0`, `::`), where any `Host` is accepted.
   */
  readonly allowedHosts?: readonly string[];
  /**
   * The `Origin` header values accepted; a request without `Origin` (not
   * from a browser) passes. Default: `http://` and each allowed host.
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * How long a new connection may take to present request headers that
   * carry the token (default 10 000 ms); one that has not by then (idle, or
   * sending its headers slowly) is closed.
   */
  readonly headersTimeoutMs?: number;
  /**
   * How many connections that have not yet presented the token may be open
   * at once (default 256); a new one beyond it closes the oldest of them, so
   * that they cannot keep the token holder out. The token holder's new
   * connection is among them until its headers are read: fewer than this
   * many connections opened meanwhile leave it open.
   */
  readonly maxUnauthenticatedConnections?: number;
}

/** A running {@link serveHttp} server. */
export interface HttpMcpServer {
  /** The endpoint, e.g. `http://127.0.0.1:8765/mcp`. */
  readonly url: string;
  /** The bearer token clients send as `Authorization: Bearer <token>`. */
  readonly token: string;
  /** Stops listening, ends every session and its process groups. */
  close(): Promise<void>;
}

/** Makes a fresh toolset for a new MCP session. */
export type ToolsetFactory = () => Promise<FinalizedToolset>;

interface McpSession {
  readonly toolset: FinalizedToolset;
  readonly transport: HttpSessionTransport;
  readonly close: () => Promise<void>;
  /** Whether the server behind the transport has accepted the client's `initialize`. */
  readonly initialized: () => boolean;
  open: number;
  idle?: ReturnType<typeof setTimeout>;
}

/** Hashed first: `timingSafeEqual` needs equal lengths, and the length must not leak either. */
function sameToken(given: string, expected: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function sendJson(
  response: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  id: JsonRpcId = null,
): void {
  sendHttpError(response, status, -32000, message, headers, id);
}

function readBody(request: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const onData = (chunk: Uint8Array) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        // Stops reading (nothing more is kept); the socket closes once the 413 is sent.
        request.off("data", onData);
        request.pause();
        chunks.length = 0;
        resolve(null);
      } else chunks.push(chunk);
    };
    request.on("data", onData);
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]";
}

/**
 * Serves MCP over Streamable HTTP at `/mcp`. Each `initialize` without a
 * session id starts an MCP session with its own toolset (from
 * `makeToolset`), server and transport; requests carrying `Mcp-Session-Id`
 * go to theirs, an unknown id gets 404. A session ends on `DELETE /mcp`,
 * after `idleTimeoutMs` without an open HTTP exchange, or on `close()`, and
 * its process groups end with it. Every request needs the bearer token
 * (401 otherwise); a foreign `Host` or `Origin` gets 403 (against DNS
 * rebinding). Connections that have not presented the token have their own
 * budget and deadline (`maxUnauthenticatedConnections`, `headersTimeoutMs`),
 * so that they cannot keep the token holder out. An `initialize` that fails
 * leaves no session. A call the client cancels, or whose HTTP exchange the
 * client drops, ends its process group.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { serveHttp } from "@openwork/tools/mcp";
 * const served = await serveHttp(
 *   async () => finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) }),
 *   { port: 0 },
 * );
 * console.log(served.url, served.token);
 * await served.close();
 * ```
 */
export async function serveHttp(
  makeToolset: ToolsetFactory,
  options: HttpMcpServerOptions = {},
): Promise<HttpMcpServer> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? randomBytes(32).toString("base64url");
  if (token.length === 0) throw new TypeError("serveHttp: the token must not be empty");
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const headersTimeoutMs = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  if (!(headersTimeoutMs > 0 && Number.isFinite(headersTimeoutMs))) {
    throw new TypeError("serveHttp: headersTimeoutMs must be a positive number of milliseconds");
  }
  const maxUnauthenticated = options.maxUnauthenticatedConnections ??
    MAX_UNAUTHENTICATED_CONNECTIONS;
  if (!(Number.isSafeInteger(maxUnauthenticated) && maxUnauthenticated >= 1)) {
    throw new TypeError(
      "serveHttp: maxUnauthenticatedConnections must be an integer of at least 1",
    );
  }
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const sessions = new Map<string, McpSession>();
  /** Sessions being made (their toolsets are on the way): they count against the cap. */
  let starting = 0;
  let allowedHosts: readonly string[] | null = null;
  let allowedOrigins: readonly string[] = [];
  let closing = false;

  function touch(session: McpSession, id: string): void {
    if (session.idle !== undefined) clearTimeout(session.idle);
    session.idle = undefined;
    if (session.open > 0 || closing) return;
    session.idle = setTimeout(() => void endSession(id), idleTimeoutMs);
    // An idle session alone does not keep the process alive.
    (session.idle as { unref?: () => void }).unref?.();
  }

  async function endSession(id: string): Promise<void> {
    const session = sessions.get(id);
    if (session === undefined) return;
    sessions.delete(id);
    if (session.idle !== undefined) clearTimeout(session.idle);
    await session.close();
  }

  /** Starts a session for an `initialize` request, registered under a fresh id. */
  async function startSession(): Promise<McpSession> {
    starting++;
    try {
      return await makeSession();
    } finally {
      starting--;
    }
  }

  /** The 2026-07-28 engine: stateless, one for every such request, made on the first. */
  let modern: Promise<{ engine: ModernEngine; http: ModernHttp }> | undefined;
  function modernHttp(): Promise<{ engine: ModernEngine; http: ModernHttp }> {
    // The official server package is loaded with the first such request.
    modern ??= Promise.all([
      makeToolset(),
      import("./modern.ts"),
      import("./http_modern.ts"),
    ]).then(([toolset, { createModernEngine }, { ModernHttp }]) => {
      const engine = createModernEngine(toolset, options);
      return { engine, http: new ModernHttp(engine, () => {}, MAX_BODY_BYTES) };
    });
    modern.catch(() => (modern = undefined));
    return modern;
  }

  async function makeSession(): Promise<McpSession> {
    const toolset = await makeToolset();
    const { createLegacyInstance, packageSchemaProblem } = await import("./legacy_sdk.ts");
    // The 2025-era checks of createMcpServer's engine, kept in front of the server package.
    const checks = new RequestChecks(packageSchemaProblem);
    // A session's working directory is its toolset's: roots of its client are not read here.
    const { server } = createLegacyInstance(
      toolset,
      { ...options, toolsetForRoot: undefined },
      (id) => checks.takeArguments(id),
    );
    let ended = false;
    const close = async () => {
      if (ended) return;
      ended = true;
      await server.close().catch(() => {});
      await toolset.session.processes.shutdown();
    };
    const id = randomUUID();
    const transport = new HttpSessionTransport(id);
    const channel = new EraChannel(transport, (message) => checks.sent(message));
    transport.onmessage = (message) => {
      const admitted = checks.admit(message);
      if ("reply" in admitted) {
        void transport.send(admitted.reply as unknown as JsonRpcMessage).catch(() => {});
        return;
      }
      // Already answered 202: a response to no question of the session's goes no further.
      if ("drop" in admitted) return;
      checks.cancelled(message);
      channel.deliver(admitted.message);
    };
    transport.onerror = (error) => channel.onerror?.(error);
    // However the transport closes, the toolset ends.
    transport.onclose = () => {
      channel.onclose?.();
      void endSession(id);
      void close();
    };
    await server.connect(channel);
    const session: McpSession = {
      toolset,
      transport,
      close,
      initialized: () => server.getClientVersion() !== undefined,
      open: 0,
    };
    sessions.set(id, session);
    return session;
  }

  /**
   * Checks `Host`, `Origin` and the token, and counts the connection as the
   * token holder's; answers and returns false when one fails.
   */
  function admitted(request: IncomingMessage, response: ServerResponse): boolean {
    const hostHeader = request.headers.host ?? "";
    if (allowedHosts !== null && !allowedHosts.includes(hostHeader.toLowerCase())) {
      sendJson(response, 403, `Forbidden: Host ${JSON.stringify(hostHeader)} is not served here`);
      return false;
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !allowedOrigins.includes(origin.toLowerCase())) {
      sendJson(response, 403, `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`);
      return false;
    }
    const authorization = request.headers.authorization ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match === null || !sameToken(match[1], token)) {
      sendJson(response, 401, "Unauthorized: send Authorization: Bearer <token>", {
        "www-authenticate": 'Bearer realm="openwork-tools"',
      });
      return false;
    }
    if (!gate.authenticate(request.socket)) {
      sendJson(response, 503, `Too many connections: ${MAX_CONNECTIONS} are open`, {
        "retry-after": "1",
      });
      return false;
    }
    return true;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    // A connection that has not presented the token gets one answer, then it is closed.
    if (!gate.trusted(request.socket)) response.setHeader("connection", "close");
    const path = (request.url ?? "/").split("?")[0];
    if (path !== MCP_HTTP_PATH) {
      return sendJson(response, 404, `Not found: MCP is at ${MCP_HTTP_PATH}`);
    }
    if (!admitted(request, response)) return;
    response.removeHeader("connection");
    if (closing) return sendJson(response, 503, "The server is shutting down");

    let body: unknown = undefined;
    let text: string | null | undefined;
    if (request.method === "POST") {
      text = await readBody(request);
      if (text === null) {
        response.once("finish", () => request.destroy());
        return sendJson(response, 413, "Payload too large", { connection: "close" });
      }
      try {
        body = JSON.parse(text);
      } catch {
        return sendHttpError(
          response,
          400,
          JSONRPC_ERROR.parseError,
          "Parse error: the body is not JSON",
        );
      }
      // Before either era's server: the package checks its schemas recursively.
      if (nestedDeeperThan(body, MAX_JSON_DEPTH)) {
        return sendHttpError(
          response,
          400,
          JSONRPC_ERROR.invalidRequest,
          `Invalid Request: the message is nested deeper than ${MAX_JSON_DEPTH} levels, the ` +
            "most this server reads.",
          {},
          requestIdOf(body),
        );
      }
    }

    // Protocol revision 2026-07-28: stateless, served by its own server instances.
    if (isModernHttpRequest(request, body)) {
      return await (await modernHttp()).http.serve(request, response, text ?? undefined, body);
    }

    // What is refused from here on answers the request by its id, when it has one.
    const replyId = requestIdOf(body);
    const header = request.headers["mcp-session-id"];
    const given = Array.isArray(header) ? header[0] : header;
    if (given === undefined && (request.method !== "POST" || !isInitializeRequest(body))) {
      return sendJson(response, 400, "Bad Request: Mcp-Session-Id header is required", {}, replyId);
    }
    if (given === undefined && sessions.size + starting >= maxSessions) {
      return sendJson(
        response,
        503,
        `Too many sessions: ${maxSessions} are open; end one with DELETE ${MCP_HTTP_PATH}`,
        { "retry-after": "1" },
        replyId,
      );
    }
    // Heard before the session is made: a client may drop the exchange of its initialize while
    // the toolset is on the way, and the listener below would come too late to hear it.
    let dropped = false;
    const onDropped = () => (dropped = true);
    response.once("close", onDropped);
    const session = given === undefined ? await startSession() : sessions.get(given);
    response.off("close", onDropped);
    if (session === undefined) {
      return sendHttpError(response, 404, -32001, "Session not found", {}, replyId);
    }
    const id = session.transport.sessionId;
    // A session that started while the server was closing ends at once.
    if (closing) {
      await endSession(id);
      return sendJson(response, 503, "The server is shutting down", {}, replyId);
    }
    // Nobody is left to answer: the session its initialize was for is not left behind.
    if (dropped) return await endSession(id);
    session.open++;
    touch(session, id);
    const message = body as { id?: unknown; method?: unknown } | undefined;
    const requestId = typeof message?.method === "string" ? message.id : undefined;
    response.once("close", () => {
      session.open--;
      // An initialize that failed, or whose exchange dropped before its answer, leaves no
      // session: whatever server answers, its id is refused from now on.
      if (given === undefined && !session.initialized()) void endSession(id);
      if (sessions.has(id)) touch(session, id);
      // The client dropped the exchange before its answer: its call is cancelled, as if it had said so.
      if (
        !response.writableFinished &&
        (typeof requestId === "string" || typeof requestId === "number")
      ) {
        session.transport.onmessage?.({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId, reason: "the HTTP client went away" },
        });
      }
    });
    session.transport.handle(request, response, body);
    // An initialize the transport refused (Accept, Content-Type) leaves no session behind.
    if (!session.transport.initialized) await endSession(id);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      if (!response.headersSent) sendJson(response, 500, `Internal error: ${String(error)}`);
      else response.destroy();
    });
  });
  // Connections without the token have a budget and a deadline of their own, so that they
  // cannot use up descriptors nor keep the token holder out.
  const gate = new ConnectionGate(server, {
    headersTimeoutMs,
    maxUnauthenticated,
    maxAuthenticated: MAX_CONNECTIONS,
  });
  // For the later requests of the token holder's connections.
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = Math.max(REQUEST_TIMEOUT_MS, headersTimeoutMs);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host.replace(/^\[(.*)\]$/, "$1"), () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port ?? 0;
  const shownHost = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const named = isWildcard(host) ? [] : [shownHost];
  allowedHosts = options.allowedHosts?.map((h) => h.toLowerCase()) ??
    (isWildcard(host) ? null : [...new Set([...LOOPBACK, ...named])].map((h) => `${h}:${port}`));
  allowedOrigins = options.allowedOrigins?.map((o) => o.toLowerCase()) ??
    (allowedHosts ?? LOOPBACK.map((h) => `${h}:${port}`)).map((h) => `http://${h}`);
  const urlHost = isWildcard(host) ? "127.0.0.1" : shownHost;

  return {
    url: `http://${urlHost}:${port}${MCP_HTTP_PATH}`,
    token,
    async close() {
      if (closing) return;
      closing = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...sessions.keys()].map((id) => endSession(id)));
      const served = await modern?.catch(() => undefined);
      if (served !== undefined) {
        await served.http.close().catch(() => {});
        await Promise.all(served.engine.toolsets().map((t) => t.session.processes.shutdown()));
      }
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      await stopped;
    },
  };
}

/**
 * Parses a `[HOST:]PORT` listening address (`8765`, `0.0.0.0:8765`,
 * `[::1]:8765`); the host defaults to `127.0.0.1`.
 */
export function parseListenAddress(text: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (match === null || port > 65535) {
    throw new TypeError(
      `expected [HOST:]PORT, e.g. 8765 or 0.0.0.0:8765, not ${JSON.stringify(text)}`,
    );
  }
  return { host: match[1] ?? "127.0.0.1", port };
}
