/**
 * The one termination path of the process backends, and the ownership
 * table that keeps every group until its end is confirmed. How a group is
 * signalled and inspected comes from the backend ({@link GroupControl}).
 *
 * @module
 */
import type { DescendantSweep, GroupControl, ProcessHandle, TerminationTiming } from "./process.ts";
import { sleep } from "./sleep.ts";
import { checkOptionBag, isNonNegativeNumber, refuseOption } from "../runtime/options.ts";
import type { OptionNames } from "../runtime/options.ts";

const TIMING_OPTIONS: OptionNames<TerminationTiming> = { graceMs: true, confirmMs: true };

/**
 * Refuses what the types would: an unknown option, or a time that is not a
 * finite, non-negative number. `where` is the backend factory's name.
 */
export function checkTiming(where: string, timing: unknown): void {
  checkOptionBag(where, timing, TIMING_OPTIONS);
  for (const name of ["graceMs", "confirmMs"] as const) {
    const value = timing[name];
    if (value !== undefined && !isNonNegativeNumber(value)) {
      refuseOption(where, name, "a finite, non-negative number of milliseconds", value);
    }
  }
}

/**
 * Polls until group `pgid` is gone. Scanning for zombies costs more than a
 * probe, so it starts only once the poll delay reaches `zombiesAfter` ms.
 */
async function vanishes(
  pgid: number,
  control: GroupControl,
  withinMs: number,
  zombiesAfter: number,
): Promise<boolean> {
  const end = Date.now() + withinMs;
  let delay = 1;
  while (true) {
    if (!(await control.signal(pgid, "probe"))) return true;
    if (delay >= zombiesAfter && await control.onlyZombiesLeft(pgid)) return true;
    if (Date.now() >= end) return false;
    await sleep(Math.min(delay, Math.max(1, end - Date.now())));
    delay = Math.min(delay * 2, 16);
  }
}

/**
 * Ends process group `pgid`: SIGTERM, up to `graceMs` for it to go, SIGKILL,
 * then up to `confirmMs` until no live member is left. `true` means confirmed gone.
 * `leaderExited` says the group's leader has already exited: what is left
 * then is often only waiting to be reaped (a PID namespace's init, children
 * that died meanwhile), by an init that may reap late, so zombies are looked
 * for from the first poll on.
 */
export async function terminateGroup(
  pgid: number,
  control: GroupControl,
  timing: TerminationTiming = {},
  leaderExited = false,
): Promise<boolean> {
  if (!(await control.signal(pgid, "SIGTERM"))) return true;
  if (await vanishes(pgid, control, timing.graceMs ?? 1000, leaderExited ? 1 : 16)) return true;
  if (!(await control.signal(pgid, "SIGKILL"))) return true;
  // After SIGKILL every member dies at once; what lingers is only waiting to be reaped.
  return await vanishes(pgid, control, timing.confirmMs ?? 3000, 2);
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
 * backend keeps the handle until the group, and every descendant that
 * `descendants` finds outside it, is confirmed gone.
 */
export function ownedHandle(
  owned: OwnedGroups,
  parts: Omit<ProcessHandle, "terminate">,
  control: GroupControl,
  timing: TerminationTiming,
  descendants: DescendantSweep | null = null,
): ProcessHandle {
  let pending: Promise<boolean> | null = null;
  let leaderExited = false;
  void parts.exited.then(() => (leaderExited = true), () => {});
  const endGroup = () => terminateGroup(parts.pid, control, timing, leaderExited);
  const handle: ProcessHandle = {
    ...parts,
    terminate() {
      // Concurrent callers (timeout and cancel at once) share one termination.
      pending ??= (descendants === null ? endGroup() : descendants.sweep(endGroup, timing))
        .catch(() => false).then((gone) => {
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
