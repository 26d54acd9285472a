/**
 * The shape of every process backend that changes what another starts (a
 * PID namespace, the sandbox, bash by its path): its own `spawn`, the rest
 * the inner backend's.
 *
 * @module
 */
import type { ProcessBackend } from "./process.ts";

/**
 * A backend whose processes start with `spawn` (which hands each request,
 * changed, to `inner`, or refuses it), and whose owned groups and shutdown
 * are `inner`'s.
 */
export function wrapSpawn(inner: ProcessBackend, spawn: ProcessBackend["spawn"]): ProcessBackend {
  return {
    get owned() {
      return inner.owned;
    },
    shutdown: () => inner.shutdown(),
    spawn,
  };
}
