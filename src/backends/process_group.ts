/**
 * The one termination path of both process backends, and the ownership
 * table that keeps every group until its end is confirmed.
 *
 * @module
 */
import { readdir, readFile } from "node:fs/promises";
import type { ProcessHandle } from "./process.ts";

/** The signals the termination path sends; `probe` only asks whether the group exists. */
export type GroupSignal = "SIGTERM" | "SIGKILL" | "probe";

/** Runs a bash script with arguments; resolves its exit code and stdout. */
export type BashRunner = (
  script: string,
  args: readonly string[],
) => Promise<{ code: number; stdout: string }>;

/**
 * Sends a signal to a group directly through the runtime; returns `false`
 * when the group no longer exists. Throws Deno's `NotCapable` when the
 * runtime's permission guard refuses.
 */
export type DirectSignaller = (pgid: number, signal: GroupSignal) => boolean;

/** What the termination path needs from a runtime. */
export interface GroupControl {
  /** Sends `signal` to group `pgid`; `false` when the group no longer exists, `true` otherwise or when unsure. */
  signal(pgid: number, signal: GroupSignal): Promise<boolean>;
  /** Whether every process left in group `pgid` is a zombie (dead, waiting to be reaped by init). */
  onlyZombiesLeft(pgid: number): Promise<boolean>;
}

/** Timing of the termination path. */
export interface TerminationTiming {
  /** How long a group may handle SIGTERM before SIGKILL (default 1000 ms). */
  readonly graceMs?: number;
  /** How long to wait for the group to vanish after SIGKILL (default 3000 ms). */
  readonly confirmMs?: number;
}

/** Member states of group `pgid` read from /proc, or `null` where /proc cannot be read. */
async function statesFromProc(pgid: number): Promise<string[] | null> {
  try {
    const states: string[] = [];
    for (const name of await readdir("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      let stat: string;
      try {
        stat = await readFile(`/proc/${name}/stat`, "utf8");
      } catch (error) {
        if ((error as { name?: string }).name === "NotCapable") return null;
        continue; // the process ended meanwhile
      }
      // Fields after the command's closing parenthesis: state, ppid, pgrp, …
      const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(group) === pgid) states.push(state);
    }
    return states;
  } catch {
    return null;
  }
}

/**
 * The group control of a runtime: direct signals while the runtime allows
 * them, else bash's `kill` builtin (Deno's `kill` needs unrestricted
 * `--allow-run`; a host that grants only `--allow-run=bash` keeps a working
 * termination path). Member states come from /proc, else from `ps`.
 */
export function groupControl(direct: DirectSignaller, bash: BashRunner): GroupControl {
  let capable = true;
  const throughBash = async (pgid: number, signal: GroupSignal): Promise<boolean> => {
    const flag = signal === "probe" ? "-0" : `-${signal.slice(3)}`;
    try {
      // Exit status 1: no process is left in the group.
      return (await bash('kill "$1" -- "-$2" 2>/dev/null', [flag, String(pgid)])).code !== 1;
    } catch {
      return true;
    }
  };
  return {
    signal(pgid, signal) {
      if (capable) {
        try {
          return Promise.resolve(direct(pgid, signal));
        } catch (error) {
          // Anything but the permission guard leaves the answer unknown: the group may be alive.
          if ((error as { name?: string }).name !== "NotCapable") return Promise.resolve(true);
          capable = false;
        }
      }
      return throughBash(pgid, signal);
    },
    async onlyZombiesLeft(pgid) {
      let states = await statesFromProc(pgid);
      if (states === null) {
        try {
          const { code, stdout } = await bash("ps -eo pgid=,stat=", []);
          if (code !== 0) return false;
          states = stdout.split("\n").map((line) => line.trim().split(/\s+/))
            .filter(([group]) => Number(group) === pgid).map(([, state]) => state);
        } catch {
          return false;
        }
      }
      return states.every((state) => state.startsWith("Z"));
    },
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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
 */
export async function terminateGroup(
  pgid: number,
  control: GroupControl,
  timing: TerminationTiming = {},
): Promise<boolean> {
  if (!(await control.signal(pgid, "SIGTERM"))) return true;
  if (await vanishes(pgid, control, timing.graceMs ?? 1000, 16)) return true;
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
 * backend keeps the handle until the group is confirmed gone.
 */
export function ownedHandle(
  owned: OwnedGroups,
  parts: Omit<ProcessHandle, "terminate">,
  control: GroupControl,
  timing: TerminationTiming,
): ProcessHandle {
  let pending: Promise<boolean> | null = null;
  const handle: ProcessHandle = {
    ...parts,
    terminate() {
      // Concurrent callers (timeout and cancel at once) share one termination.
      pending ??= terminateGroup(parts.pid, control, timing).catch(() => false).then((gone) => {
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
