/**
 * The request state of an approval asked across two round trips (MCP
 * 2026-07-28, multi-round-trip requests): the server answers a call that
 * needs approval with `input_required` and a `requestState`; the client
 * asks the person and retries the call with the answer and the state. The
 * state round-trips through the client, so it is signed (HMAC-SHA256 with a
 * secret of this server alone, bound to `tools/call`, expiring after
 * {@link APPROVAL_STATE_TTL_SECONDS}) and names what it approves: the tool,
 * a hash of its arguments, a hash of the question the person saw (every
 * effect in full), the working directory, and a nonce that is accepted once.
 * A forged, expired, replayed or foreign state, or one whose call differs
 * from the retried one, approves nothing.
 *
 * @module
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createRequestStateCodec, type ServerContext } from "@modelcontextprotocol/server";

/** How long an approval question stays answerable: 10 minutes. */
export const APPROVAL_STATE_TTL_SECONDS = 600;

/** What a signed approval state names. */
export interface ApprovalState {
  /** The tool asked about. */
  readonly name: string;
  /** SHA-256 of the call's arguments as JSON. */
  readonly input: string;
  /** SHA-256 of the question the person was shown. */
  readonly question: string;
  /** The working directory the call runs in. */
  readonly root: string;
  /** Accepted once. */
  readonly nonce: string;
}

/**
 * SHA-256 of `value` as JSON, hex. A value the runtime cannot serialize
 * (nested deeper than its stack: Node's is smaller than Deno's) gets a
 * digest of its own that nothing else has, so that no approval state ever
 * matches it: such a call is asked about anew, or refused by its tool.
 */
export function digest(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(value) ?? "undefined";
  } catch {
    return `unserializable-${randomUUID()}`;
  }
  return createHash("sha256").update(json).digest("hex");
}

/** The most questions open at once; past it the oldest can no longer be answered. */
const MAX_OPEN = 10_000;

/** Mints and checks approval states with a secret of its own, made at construction. */
export class ApprovalStates {
  readonly #codec = createRequestStateCodec<ApprovalState>({
    key: randomBytes(32),
    ttlSeconds: APPROVAL_STATE_TTL_SECONDS,
    bind: (ctx) => ctx.mcpReq.method,
  });
  /** Nonces minted and not yet used, with when they expire (ms). */
  readonly #open = new Map<string, number>();

  /** Signs a state for `call`, with a fresh nonce. */
  mint(
    call: Omit<ApprovalState, "nonce">,
    ctx: ServerContext,
  ): Promise<string> {
    this.#prune();
    const nonce = randomBytes(16).toString("base64url");
    this.#open.set(nonce, Date.now() + APPROVAL_STATE_TTL_SECONDS * 1000);
    if (this.#open.size > MAX_OPEN) this.#open.delete(this.#open.keys().next().value!);
    return this.#codec.mint({ ...call, nonce }, ctx);
  }

  /** Checks the signature, the binding and the expiry; throws when one fails. */
  verify(state: string, ctx: ServerContext): Promise<ApprovalState> {
    return this.#codec.verify(state, ctx);
  }

  /** Uses the nonce of a verified state: true the first time, false after. */
  consume(nonce: string): boolean {
    this.#prune();
    return this.#open.delete(nonce);
  }

  #prune(): void {
    const now = Date.now();
    for (const [nonce, expires] of this.#open) if (expires <= now) this.#open.delete(nonce);
  }
}
