/**
 * The connection budget of the HTTP server, kept apart for connections
 * that have not yet presented the bearer token: they get a budget of
 * their own and a short deadline, so that however many of them are open,
 * the token holder can still connect.
 *
 * @module
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";

/** Limits of a {@link ConnectionGate}. */
export interface ConnectionGateLimits {
  /**
   * How long a new connection may take to present request headers that
   * carry the token; one that has not by then is closed.
   */
  readonly headersTimeoutMs: number;
  /**
   * How many connections without the token may be open at once; a new one
   * beyond it closes the oldest of them.
   */
  readonly maxUnauthenticated: number;
  /** How many connections that presented the token may be open at once. */
  readonly maxAuthenticated: number;
}

/**
 * Watches every connection of a `node:http` server from its first byte:
 * a connection is unauthenticated until a request on it carries the token
 * ({@link ConnectionGate.authenticate}).
 *
 * Unauthenticated connections are capped by closing the oldest, not by
 * refusing the newest: a new connection is the one that may be the token
 * holder's, and it sends its headers at once, while the sockets it pushes
 * out have had their chance. The deadline is this gate's own timer, since
 * `node:http` checks `headersTimeout` only every 30 s or so.
 */
export class ConnectionGate {
  readonly #limits: ConnectionGateLimits;
  /** Connections without the token, oldest first, with their deadlines. */
  readonly #unauthenticated = new Map<Socket, ReturnType<typeof setTimeout>>();
  readonly #authenticated = new Set<Socket>();

  /** A gate on `server`'s connections. */
  constructor(server: Server, limits: ConnectionGateLimits) {
    this.#limits = limits;
    server.on("connection", (socket: Socket) => this.#connected(socket));
  }

  /** Whether a request on `socket` carried the token before. */
  trusted(socket: Socket): boolean {
    return this.#authenticated.has(socket);
  }

  /**
   * Counts `socket` as the token holder's (its request carried the token);
   * false when as many such connections are open as allowed.
   */
  authenticate(socket: Socket): boolean {
    if (this.#authenticated.has(socket)) return true;
    if (this.#authenticated.size >= this.#limits.maxAuthenticated) return false;
    this.#forget(socket);
    this.#authenticated.add(socket);
    return true;
  }

  #connected(socket: Socket): void {
    if (this.#unauthenticated.size >= this.#limits.maxUnauthenticated) {
      const [oldest] = this.#unauthenticated.keys();
      this.#forget(oldest);
      oldest.destroy();
    }
    const deadline = setTimeout(() => {
      if (!this.#unauthenticated.has(socket)) return;
      this.#forget(socket);
      socket.destroy();
    }, this.#limits.headersTimeoutMs);
    // A waiting connection alone does not keep the process alive.
    (deadline as { unref?: () => void }).unref?.();
    this.#unauthenticated.set(socket, deadline);
    socket.once("close", () => {
      this.#forget(socket);
      this.#authenticated.delete(socket);
    });
  }

  #forget(socket: Socket): void {
    const deadline = this.#unauthenticated.get(socket);
    if (deadline === undefined) return;
    clearTimeout(deadline);
    this.#unauthenticated.delete(socket);
  }
}
