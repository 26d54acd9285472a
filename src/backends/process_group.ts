/**
 * The one termination path of both process backends, and the ownership
 * table that keeps every group until its end is confirmed.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import type { ProcessHandle } from "./process.ts";

/** The signals the termination path sends; `probe` only asks whether the group exists. */
export type GroupSignal = "SIGTERM" | "SIGKILL" | "probe";

/**
 * Sends `signal` to every process of group `pgid`; resolves `false` when the
 * group no longer exists, `true` otherwise (also when the answer is unclear).
 */
export type GroupSignaller = (pgid: number, signal: GroupSignal) => Promise<boolean>;

/**
 * Signals a group through bash's `kill` builtin. Under Deno, `Deno.kill` and
 * `process.kill` need unrestricted `--allow-run`; a host that grants only
 * `--allow-run=bash` still gets a working termination path this way.
 */
export function signalThroughBash(pgid: number, signal: GroupSignal): Promise<boolean> {
  const flag = signal === "probe" ? "-0" : `-${signal.slice(3)}`;
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-c", 'kill "$1" -- "-$2" 2>/dev/null', "kill", flag, String(pgid)],
      (error) => {
        // Exit status 1 means no process is left in the group; a failure to run bash leaves it unknown.
        const code = (error as { code?: unknown } | null)?.code;
        resolve(error === null || code !== 1);
      },
    );
  });
}

/**
 * Wraps a runtime's direct group signaller: when the runtime's permission
 * guard refuses it (Deno's `NotCapable`), every later signal goes through bash.
 */
export function withBashFallback(
  direct: (pgid: number, signal: GroupSignal) => boolean,
): GroupSignaller {
  let capable = true;
  return (pgid, signal) => {
    if (capable) {
      try {
        return Promise.resolve(direct(pgid, signal));
      } catch (error) {
        if ((error as { name?: string }).name !== "NotCapable") throw error;
        capable = false;
      }
    }
    return signalThroughBash(pgid, signal);
  };
}

/** Timing of the termination path. */
export interface TerminationTiming {
  /** How long a group may handle SIGTERM before SIGKILL (default 1000 ms). */
  readonly graceMs?: number;
  /** How long to wait for the group to vanish after SIGKILL (default 3000 ms). */
  readonly confirmMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Members of group `pgid` as `[state, …]` from /proc, or `null` where /proc cannot be read. */
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

/** Members of group `pgid` as states, through `ps` (for runtimes that refuse /proc). */
function statesFromPs(pgid: number): Promise<string[] | null> {
  return new Promise((resolve) => {
    execFile("bash", ["-c", "ps -eo pgid=,stat="], (error, stdout) => {
      if (error !== null) return resolve(null);
      const states = String(stdout).split("\n").map((line) => line.trim().split(/\s+/))
        .filter(([group]) => Number(group) === pgid).map(([, state]) => state);
      resolve(states);
    });
  });
}

/**
 * Whether every process left in group `pgid` is a zombie: dead, only waiting
 * for its new parent (init) to reap it, which some inits do late.
 */
async function onlyZombiesLeft(pgid: number): Promise<boolean> {
  const states = (await statesFromProc(pgid)) ?? (await statesFromPs(pgid));
  return states !== null && states.every((state) => state.startsWith("Z"));
}

async function vanishes(pgid: number, send: GroupSignaller, withinMs: number): Promise<boolean> {
  const end = Date.now() + withinMs;
  let delay = 1;
  while (true) {
    if (!(await send(pgid, "probe")) || await onlyZombiesLeft(pgid)) return true;
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
