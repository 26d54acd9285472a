/**
 * Protocol revision 2026-07-28 over Streamable HTTP: the official server
 * package's handler, behind the gatekeeping of {@link serveHttp} (token,
 * Host, Origin, body and connection caps, timeouts), which has admitted the
 * request and read its body before it gets here. Each request is served by
 * a fresh server instance from the one engine; there are no sessions. An
 * exchange the client drops aborts its call (and ends its process group).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Buffer } from "node:buffer";
import { createMcpHandler } from "@modelcontextprotocol/server";
import type { ModernEngine } from "./modern.ts";
import { paceOf } from "./http_pace.ts";
import { drainedOrClosed } from "./http_transport.ts";

/** The request headers not passed on: the body is handed over whole, already read. */
const HOP_HEADERS = new Set(["host", "connection", "content-length", "transfer-encoding"]);

/** Serves admitted 2026-07-28 requests with `engine`. */
export class ModernHttp {
  readonly #handler: ReturnType<typeof createMcpHandler>;

  /** A handler whose requests are served by `engine`; `onerror` hears what it refuses. */
  constructor(engine: ModernEngine, onerror: (error: Error) => void, maxBodyBytes: number) {
    this.#handler = createMcpHandler(() => engine.server(), {
      legacy: "reject",
      onerror,
      maxRequestBodySize: maxBodyBytes,
    });
  }

  /** Serves one request whose body (a POST's) is `text`, parsed as `body`. */
  async serve(
    request: IncomingMessage,
    response: ServerResponse,
    text: string | undefined,
    body: unknown,
  ): Promise<void> {
    const controller = new AbortController();
    response.once("close", () => {
      if (!response.writableFinished) controller.abort(new Error("the HTTP client went away"));
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || HOP_HEADERS.has(name)) continue;
      headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const forwarded = new Request(url, {
      method: request.method,
      headers,
      ...(text === undefined ? {} : { body: text }),
      signal: controller.signal,
    });
    const pace = paceOf(forwarded);
    response.once("close", () => pace.caughtUp());
    const answered = await this.#handler.fetch(
      forwarded,
      text === undefined ? {} : { parsedBody: body },
    );
    response.writeHead(answered.status, Object.fromEntries(answered.headers));
    if (answered.body === null) return void response.end();
    const reader = answered.body.getReader();
    // The client's pace: an event stream is written no faster than the client reads it.
    const closed = () => response.destroyed || response.writableEnded;
    try {
      while (!closed()) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!response.write(Buffer.from(value))) {
          pace.fellBehind();
          await drainedOrClosed(response);
          pace.caughtUp();
        }
      }
    } finally {
      if (closed()) void reader.cancel().catch(() => {});
      else response.end();
    }
  }

  /** Aborts the exchanges still open. */
  close(): Promise<void> {
    return this.#handler.close();
  }
}
