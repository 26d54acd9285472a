/**
 * Process groups on this machine, as the local process backends see them:
 * signals sent through the runtime (or bash's `kill` where the runtime's
 * permission guard refuses), and member states read by a probe of this
 * machine's process table. A backend whose processes run elsewhere brings
 * its own {@link GroupControl}.
 *
 * @module
 */
import { readdir, readFile } from "node:fs/promises";
import type { GroupControl, GroupSignal } from "./process_group.ts";

/** Runs a bash script with arguments on this machine; resolves its exit code and stdout. */
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

/**
 * The states (`R`, `S`, `Z`, …) of the members of process group `pgid`, or
 * `null` where the probe cannot see the process table.
 */
export type GroupProbe = (pgid: number) => Promise<string[] | null>;

/** The member states of a group read from this machine's `/proc`; `null` where it cannot be read. */
export const procfsGroupProbe: GroupProbe = async (pgid) => {
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
};

/**
 * The control of this machine's process groups: direct signals while the
 * runtime allows them, else bash's `kill` builtin (Deno's `kill` needs
 * unrestricted `--allow-run`; a host that grants only `--allow-run=bash`
 * keeps a working termination path). Member states come from `probe`, else
 * from `ps`.
 */
export function localProcessGroups(
  direct: DirectSignaller,
  bash: BashRunner,
  probe: GroupProbe,
): GroupControl {
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
      let states = await probe(pgid);
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
