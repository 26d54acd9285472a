/**
 * The pace of a 2026-07-28 request's HTTP exchange, as its engine sees it:
 * while the client is behind in reading the exchange's event stream, a
 * sink of the request's progress waits, so the tool's relay holds events
 * back and, past its budget, drops them, instead of piling them up in
 * memory. The exchange is found by the request the handler was given.
 *
 * @module
 */

/** Whether an exchange's client keeps up, and a wait for when it does again. */
export class ExchangePace {
  #behind?: Promise<void>;
  #caughtUp?: () => void;

  /** The client stopped taking what is written. */
  fellBehind(): void {
    this.#behind ??= new Promise((resolve) => (this.#caughtUp = resolve));
  }

  /** The client took what was written (or the exchange ended). */
  caughtUp(): void {
    this.#caughtUp?.();
    this.#behind = undefined;
    this.#caughtUp = undefined;
  }

  /** Resolves once the client keeps up. */
  ready(): Promise<void> {
    return this.#behind ?? Promise.resolve();
  }
}

const paces = new WeakMap<object, ExchangePace>();

/** The pace of the exchange whose request is `request`, made on first use. */
export function paceOf(request: object): ExchangePace {
  let pace = paces.get(request);
  if (pace === undefined) paces.set(request, pace = new ExchangePace());
  return pace;
}

/** The pace of the exchange of `request`, if it has one. */
export function knownPace(request: object | undefined): ExchangePace | undefined {
  return request === undefined ? undefined : paces.get(request);
}
