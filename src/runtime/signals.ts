/**
 * Signal combination for every Node 20 release: `AbortSignal.any` arrived in
 * Node 20.3.
 *
 * @module
 */

/** A combined signal, and how to stop it following its sources. */
export interface CombinedSignal {
  /** Aborts with the reason of the first source that aborts. */
  readonly signal: AbortSignal;
  /** Removes its listeners from the sources (once the work it guards is over). */
  readonly release: () => void;
}

/**
 * A signal that aborts when the first of `signals` aborts, with its reason;
 * already aborted when one of them is. Its listeners leave the sources once
 * it aborts or is released, so a long-lived source does not keep them.
 */
export function anySignal(signals: readonly AbortSignal[]): CombinedSignal {
  const controller = new AbortController();
  const listeners = new Map<AbortSignal, () => void>();
  const release = () => {
    for (const [signal, listener] of listeners) signal.removeEventListener("abort", listener);
    listeners.clear();
  };
  const aborted = signals.find((signal) => signal.aborted);
  if (aborted !== undefined) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, release };
  }
  for (const signal of signals) {
    const listener = () => {
      release();
      controller.abort(signal.reason);
    };
    listeners.set(signal, listener);
    signal.addEventListener("abort", listener, { once: true });
  }
  return { signal: controller.signal, release };
}
