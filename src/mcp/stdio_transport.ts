/**
 * The stdio transport of the MCP server: newline-delimited JSON-RPC read in
 * bounded memory, every bad line answered, and the server kept serving.
 *
 * It replaces the SDK's `StdioServerTransport`, which cannot do this: its
 * read buffer grows until it throws at 10 MiB and then closes the transport
 * (the process exits 0 without a word), and a line that does not parse or
 * does not fit its message schema goes to `onerror` only, so the client
 * waits forever for a reply. It implements `McpTransport` (start, send,
 * close, onmessage, onerror, onclose), as the SDK's transports do.
 *
 * @module
 */
import process from "node:process";
import { errorReply, JSONRPC_ERROR, type JsonRpcMessage, parseLine } from "./jsonrpc.ts";
import { type Era, eraChosenBy } from "./eras.ts";

/**
 * The longest line the stdio transport reads, in bytes (4 MiB). A longer
 * line is answered with an Invalid Request error (id null: it is never
 * parsed) and skipped up to its newline without being held in memory.
 */
export const MAX_LINE_BYTES: number = 4 * 1024 * 1024;

/** A readable byte stream, as `process.stdin` is. */
export interface ByteSource {
  /** Registers a listener (`data`, `end`, `close`, `error`). */
  on(event: string, listener: (...args: never[]) => void): unknown;
  /** Removes a listener. */
  off(event: string, listener: (...args: never[]) => void): unknown;
  /** Stops the flow of `data` events. */
  pause(): unknown;
  /** Restarts the flow of `data` events after `pause()`. */
  resume?(): unknown;
}

/** A writable byte stream, as `process.stdout` is. */
export interface ByteSink {
  /** Writes text; `false` asks the writer to wait for `drain`. */
  write(text: string): boolean;
  /** Registers a one-time listener (`drain`). */
  once(event: string, listener: () => void): unknown;
  /** Registers a listener (`error`: the reader went away); optional. */
  on?(event: string, listener: (error: Error) => void): unknown;
}

/** Options of {@link StdioTransport}. */
export interface StdioTransportOptions {
  /** Where messages come from (default `process.stdin`). */
  readonly input?: ByteSource;
  /** Where replies go (default `process.stdout`). */
  readonly output?: ByteSink;
  /** The longest line read, in bytes (default {@link MAX_LINE_BYTES}). */
  readonly maxLineBytes?: number;
  /**
   * Whether requests other than `initialize` and `ping` are refused until an
   * `initialize` request has arrived (default `true`, as the MCP lifecycle
   * asks); an `initialize` answered with an error closes the gate again. A
   * connection whose first request is of protocol revision 2026-07-28 (its
   * `_meta` names the protocol version), which has no `initialize`, is not
   * gated; on one that opened with `initialize`, that envelope passes no
   * request the gate holds.
   */
  readonly requireInitialize?: boolean;
}

/** A JSON-RPC message as the transport passes it on. */
export type TransportMessage = JsonRpcMessage;

const NEWLINE = 0x0a;

/**
 * An MCP transport over stdin and stdout. Unparseable lines are answered
 * with -32700 and id null, invalid requests with -32600 and their id, lines
 * over the cap with -32600 and id null, batches with -32600; invalid
 * notifications are dropped. Each refusal is also reported to `onerror`, so
 * a host can log it. The transport closes when its input ends.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { createMcpServer, StdioTransport } from "@openwork/tools/mcp";
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * await createMcpServer(toolset).connect(new StdioTransport({ maxLineBytes: 1024 * 1024 }));
 * ```
 */
export class StdioTransport {
  /** Called with each message that passed the checks. */
  onmessage?: (message: TransportMessage) => void;
  /** Called with each refused line and each stream error. */
  onerror?: (error: Error) => void;
  /** Called once, when the transport closes. */
  onclose?: () => void;

  readonly #input: ByteSource;
  readonly #output: ByteSink;
  readonly #max: number;
  readonly #requireInitialize: boolean;
  #gated: boolean;
  /** The era the connection's first request chose, once one has. */
  #era: Era | undefined;
  readonly #initializeIds = new Set<string | number>();
  #pending: Uint8Array[] = [];
  /** The sends waiting for the output to drain. */
  readonly #draining: (() => void)[] = [];
  #pendingBytes = 0;
  #discarding = false;
  #started = false;
  #closed = false;

  /** Makes a transport; nothing is read until `start()`. */
  constructor(options: StdioTransportOptions = {}) {
    this.#input = options.input ?? (process.stdin as unknown as ByteSource);
    this.#output = options.output ?? (process.stdout as unknown as ByteSink);
    this.#max = options.maxLineBytes ?? MAX_LINE_BYTES;
    this.#requireInitialize = options.requireInitialize ?? true;
    this.#gated = this.#requireInitialize;
  }

  /** Starts reading input. */
  start(): Promise<void> {
    if (this.#started) throw new Error("StdioTransport: start() was already called.");
    this.#started = true;
    this.#input.on("data", this.#onData);
    this.#input.on("error", this.#onStreamError);
    this.#input.on("end", this.#onEnd);
    this.#input.on("close", this.#onEnd);
    this.#output.on?.("error", this.#onOutputError);
    return Promise.resolve();
  }

  /**
   * Forgets the revision the connection's first request chose, when that
   * request was refused before it chose anything: the next request chooses,
   * and until an initialize the connection stays closed to the 2025
   * revisions' requests.
   */
  forgetEra(): void {
    this.#era = undefined;
  }

  /** Writes one message as a line; resolves when the output has taken it. */
  send(message: TransportMessage): Promise<void> {
    // An initialize that failed leaves the session uninitialized.
    if ("error" in message && this.#initializeIds.delete(message.id as string)) {
      this.#gated = this.#requireInitialize;
    }
    if (this.#closed) return Promise.resolve();
    if (this.#output.write(JSON.stringify(message) + "\n")) return Promise.resolve();
    return new Promise((resolve) => {
      this.#draining.push(resolve);
      if (this.#draining.length > 1) return;
      // A client that sends without reading what it is sent is not read from until it does:
      // otherwise its replies would pile up in memory without bound.
      this.#input.pause();
      this.#output.once("drain", () => {
        if (!this.#closed) this.#input.resume?.();
        for (const sent of this.#draining.splice(0)) sent();
      });
    });
  }

  /** Stops reading and reports the close once. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#input.off("data", this.#onData);
    this.#input.off("error", this.#onStreamError);
    this.#input.off("end", this.#onEnd);
    this.#input.off("close", this.#onEnd);
    this.#input.pause();
    this.#pending = [];
    this.onclose?.();
    return Promise.resolve();
  }

  #onEnd = (): void => void this.close();

  #onStreamError = (error: Error): void => this.onerror?.(error);

  // The client no longer reads (EPIPE): nothing more can reach it, so the connection is over.
  // The listener stays after the close: writes already under way may still fail, and an
  // unheard error would end the process before its calls' processes are ended.
  #onOutputError = (error: Error): void => {
    if (this.#closed) return;
    void this.close();
    this.onerror?.(error);
  };

  // Splits chunks at newlines; a line over the cap is refused as soon as it
  // passes the cap, and its remaining bytes are skipped, never buffered.
  #onData = (chunk: Uint8Array | string): void => {
    let bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
    while (bytes.length > 0 && !this.#closed) {
      const end = bytes.indexOf(NEWLINE);
      const piece = end === -1 ? bytes : bytes.subarray(0, end);
      if (!this.#discarding) {
        if (this.#pendingBytes + piece.length > this.#max) {
          this.#pending = [];
          this.#pendingBytes = 0;
          this.#discarding = true;
          this.#refuse(
            errorReply(
              null,
              JSONRPC_ERROR.invalidRequest,
              `Invalid Request: the line is longer than ${this.#max} bytes, the most this ` +
                "server reads; it was skipped. Send smaller messages.",
            ),
          );
        } else if (piece.length > 0) {
          // Copied: the stream may reuse its chunk's memory.
          this.#pending.push(piece.slice());
          this.#pendingBytes += piece.length;
        }
      }
      if (end === -1) return;
      if (this.#discarding) this.#discarding = false;
      else this.#line();
      bytes = bytes.subarray(end + 1);
    }
  };

  #line(): void {
    const joined = new Uint8Array(this.#pendingBytes);
    let at = 0;
    for (const piece of this.#pending) {
      joined.set(piece, at);
      at += piece.length;
    }
    this.#pending = [];
    this.#pendingBytes = 0;
    const text = new TextDecoder().decode(joined).replace(/\r$/, "");
    if (text.trim() === "") return;
    const incoming = parseLine(text);
    if (incoming.kind === "reply") return this.#refuse(incoming.reply);
    if (incoming.kind === "drop") return this.onerror?.(new Error(incoming.reason));
    const message = incoming.message;
    if (typeof message.method === "string" && "id" in message) {
      const id = message.id as string | number;
      this.#era ??= eraChosenBy(message);
      // Open from the moment initialize arrives: a client may pipeline its first requests.
      if (message.method === "initialize") {
        this.#initializeIds.add(id);
        this.#gated = false;
      } else if (this.#gated && this.#era !== "modern" && message.method !== "ping") {
        // Protocol revision 2026-07-28 has no initialize: a connection whose first request
        // carries its envelope is never gated. On one that opened with initialize, the envelope
        // does not stand in for a successful one.
        return this.#refuse(
          errorReply(
            id,
            JSONRPC_ERROR.invalidRequest,
            `Invalid Request: ${message.method} before initialize; the session starts with ` +
              "an initialize request.",
          ),
        );
      }
    }
    this.onmessage?.(message);
  }

  #refuse(reply: ReturnType<typeof errorReply>): void {
    this.onerror?.(new Error(`refused input: ${reply.error.message}`));
    this.send(reply as unknown as TransportMessage).catch((error) => this.onerror?.(error));
  }
}
