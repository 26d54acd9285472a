/**
 * The one termination path of both process backends, and the ownership
 * table that keeps every group until its end is confirmed.
 *
 * @module
 */
import type { ProcessHandle } from "./process.ts";

/** The signals the termination path sends; `probe` only asks whether the group exists. */
export type GroupSignal = "SIGTERM" | "SIGKILL" | "probe";

/**
 * Sends `signal` to every process of group `pgid`; resolves `false` when the
 * group no longer exists, `true` otherwise (also when the answer is unclear).
 */
export type GroupSignaller = (pgid: number, signal: GroupSignal) => Promise<boolean>;

/** Timing of the termination path. */
export interface TerminationTiming {
  /** How long a group may handle SIGTERM before SIGKILL (default 1000 ms). */
  readonly graceMs?: number;
  /** How long to wait for the group to vanish after SIGKILL (default 3000 ms). */
  readonly confirmMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function vanishes(pgid: number, send: GroupSignaller, withinMs: number): Promise<boolean> {
  const end = Date.now() + withinMs;
  let delay = 1;
  while (true) {
    if (!(await send(pgid, "probe"))) return true;
    if (Date.now() >= end) return false;
    await sleep(Math.min(delay, Math.max(1, end - Date.now())));
    delay = Math.min(delay * 2, 16);
  }
}

/**
 * Ends process group `pgid`: SIGTERM, up to `graceMs` for it to go, SIGKILL,
 * then up to `confirmMs` until no member is left. `true` means confirmed gone.
 */
export async function terminateGroup(
  pgid: number,
  send: GroupSignaller,
  timing: TerminationTiming = {},
): Promise<boolean> {
  if (!(await send(pgid, "SIGTERM"))) return true;
  if (await vanishes(pgid, send, timing.graceMs ?? 1000)) return true;
  if (!(await send(pgid, "SIGKILL"))) return true;
  return await vanishes(pgid, send, timing.confirmMs ?? 3000);
}

/**
 * The set of groups a backend owns. A handle leaves it only once its group
 * is confirmed gone; `shutdown` ends every one still in it.
 */
export class OwnedGroups {
  #handles = new Set<ProcessHandle>();

  /** Starts owning a handle. */
  add(handle: ProcessHandle): void {
    this.#handles.add(handle);
  }

  /** Stops owning a handle whose group is confirmed gone. */
  release(handle: ProcessHandle): void {
    this.#handles.delete(handle);
  }

  /** How many groups are owned. */
  get size(): number {
    return this.#handles.size;
  }

  /** Terminates every owned group; `true` when all are confirmed gone. */
  async shutdown(): Promise<boolean> {
    const results = await Promise.all([...this.#handles].map((handle) => handle.terminate()));
    return results.every(Boolean);
  }
}

/**
 * Wraps a started process so that its `terminate` is the shared path and the
 * backend keeps the handle until the group is confirmed gone. The group is
 * also ended, and released, after the leader exits: no member outlives a call.
 */
export function ownedHandle(
  owned: OwnedGroups,
  parts: Omit<ProcessHandle, "terminate">,
  send: GroupSignaller,
  timing: TerminationTiming,
): ProcessHandle {
  let pending: Promise<boolean> | null = null;
  const handle: ProcessHandle = {
    ...parts,
    terminate() {
      // Concurrent callers (timeout and cancel at once) share one termination.
      pending ??= terminateGroup(parts.pid, send, timing).then((gone) => {
        if (gone) owned.release(handle);
        pending = null;
        return gone;
      });
      return pending;
    },
  };
  owned.add(handle);
  return handle;
}
