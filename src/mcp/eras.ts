/**
 * One connection, two protocol eras: the first request of a stdio
 * connection that chooses one (a `ping` does not) decides which revision it
 * speaks. A request that carries the 2026-07-28 envelope
 * (`_meta["io.modelcontextprotocol/protocolVersion"]`, as `server/discover`
 * and every later request of such a client do) pins the connection to
 * 2026-07-28; an `initialize` to the 2025 revisions. Both are served by the
 * official server package through the {@link EraChannel} over the
 * connection's own transport, which keeps its checks (every line answered,
 * bounded memory, a client that does not read paused).
 *
 * @module
 */
import type { JsonRpcMessage } from "./jsonrpc.ts";
import type { IncomingMessage } from "node:http";
import { LATEST_PROTOCOL_VERSION, type McpTransport, type SendOptions } from "./protocol.ts";

/** The `_meta` key of the 2026-07-28 envelope that names the protocol revision. */
export const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";

/** Whether `message` carries the 2026-07-28 per-request envelope (its protocol version). */
export function carriesEnvelope(message: unknown): boolean {
  if (typeof message !== "object" || message === null) return false;
  const params = (message as { params?: unknown }).params;
  if (typeof params !== "object" || params === null) return false;
  const meta = (params as { _meta?: unknown })._meta;
  if (typeof meta !== "object" || meta === null) return false;
  return typeof (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY] === "string";
}

/**
 * The era a request of a stdio connection chooses, if it chooses one: the
 * 2026-07-28 envelope chooses `modern`, an `initialize` `legacy`; anything
 * else (a `ping`, which both eras answer) leaves the choice to a later request.
 */
export function eraChosenBy(message: unknown): Era | undefined {
  if (carriesEnvelope(message)) return "modern";
  const method = (message as { method?: unknown } | null)?.method;
  return method === "initialize" ? "legacy" : undefined;
}

/** Whether a request of `serveHttp` belongs to the 2026-07-28 revision. */
export function isModernHttpRequest(request: IncomingMessage, body: unknown): boolean {
  if (carriesEnvelope(body)) return true;
  const header = request.headers["mcp-protocol-version"];
  const version = Array.isArray(header) ? header[0] : header;
  // A request that names a revision after 2025-11-25 without the envelope is the 2026-07-28
  // handler's to refuse (revisions are dates: their order is the text's).
  return version !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(version) &&
    version > LATEST_PROTOCOL_VERSION;
}

/** The era an engine serves. */
export type Era = "legacy" | "modern";

/**
 * The transport the server package sees: it sends through the connection's
 * transport and hears what the connection's checks pass on to it.
 */
export class EraChannel implements McpTransport {
  /** Hears what went wrong on the connection. */
  onerror?: (error: Error) => void;
  /** Hears that the connection closed. */
  onclose?: () => void;
  readonly #wire: McpTransport;
  readonly #sent?: (message: JsonRpcMessage) => void;
  #receive?: (message: JsonRpcMessage, extra?: unknown) => void;
  /** What arrived before the server package listened (it connects asynchronously). */
  #held: [JsonRpcMessage, unknown][] = [];

  /** A channel over `wire`; `sent` hears each message the server package sends. */
  constructor(wire: McpTransport, sent?: (message: JsonRpcMessage) => void) {
    this.#wire = wire;
    this.#sent = sent;
  }

  /** Receives the messages of its era; set, it first gets those that were held. */
  get onmessage(): ((message: JsonRpcMessage, extra?: unknown) => void) | undefined {
    return this.#receive;
  }

  set onmessage(receive: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined) {
    this.#receive = receive;
    if (receive === undefined) return;
    for (const [message, extra] of this.#held.splice(0)) receive(message, extra);
  }

  /** Passes a message on to the server package, or holds it until it listens. */
  deliver(message: JsonRpcMessage, extra?: unknown): void {
    if (this.#receive === undefined) this.#held.push([message, extra]);
    else this.#receive(message, extra);
  }

  /** Nothing to start: the connection's transport is started by its owner. */
  start(): Promise<void> {
    return Promise.resolve();
  }

  /** Sends on the connection. */
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    this.#sent?.(message);
    return this.#wire.send(message, options);
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return this.#wire.close();
  }
}
