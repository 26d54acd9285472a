/**
 * Process groups and the process table on this machine, as the local
 * process backends see them: signals sent through the runtime (or bash's
 * `kill` where the runtime's permission guard refuses), and member states,
 * parents and environments read from `/proc` (or by a bash script where the
 * runtime refuses `/proc`, as Deno does short of `--allow-all`). A backend
 * whose processes run elsewhere brings its own {@link GroupControl} and
 * {@link ProcessTable}.
 *
 * @module
 */
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { GroupControl, GroupSignal, ProcessRef, ProcessRow, ProcessTable } from "./process.ts";
import { helperBash } from "./helper_bash.ts";

/** Runs a bash script with arguments on this machine; resolves its exit code and stdout. */
export type BashRunner = (
  script: string,
  args: readonly string[],
) => Promise<{ code: number; stdout: string }>;

/**
 * Sends a signal directly through the runtime to `target`, a pid as `kill(2)`
 * takes it (a negative one names a process group); returns `false` when no
 * such process or group exists. Throws Deno's `NotCapable` when the
 * runtime's permission guard refuses.
 */
export type DirectSignaller = (target: number, signal: GroupSignal) => boolean;

/**
 * The states (`R`, `S`, `Z`, …) of the members of process group `pgid`, or
 * `null` where the probe cannot see the process table.
 */
export type GroupProbe = (pgid: number) => Promise<string[] | null>;

/**
 * The member states of a group read from this machine's `/proc`; `null` where
 * it cannot be read. Read synchronously, as {@link procfsStat} reads: about
 * 2 ms for a table of a hundred processes against about 15 ms through
 * promises, and the termination path reads it at every end of a call whose
 * group is left with only zombies (a PID namespace's init).
 */
export const procfsGroupProbe: GroupProbe = (pgid) => {
  try {
    const states: string[] = [];
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${name}/stat`, "latin1");
      } catch (error) {
        if ((error as { name?: string }).name === "NotCapable") return Promise.resolve(null);
        continue; // the process ended meanwhile
      }
      // Fields after the command's closing parenthesis: state, ppid, pgrp, …
      const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(group) === pgid) states.push(state);
    }
    return Promise.resolve(states);
  } catch {
    return Promise.resolve(null);
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
          return Promise.resolve(direct(-pgid, signal));
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
          const { code, stdout } = await bash("ps -A -o pgid=,stat=", []);
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

/** Whether a runtime error is the permission guard's refusal. */
const refused = (error: unknown) => (error as { name?: string }).name === "NotCapable";

/**
 * Process `pid` as `/proc/<pid>/stat` shows it, `null` when it is gone or a
 * zombie; throws `NotCapable`. Read synchronously: the kernel writes the
 * line without waiting on the process, and a table of a hundred processes
 * is read in about 2 ms this way against about 15 ms through promises.
 */
function procfsStat(pid: number): Omit<ProcessRow, "marked"> | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch (error) {
    if (refused(error)) throw error;
    return null; // the process ended meanwhile
  }
  // The fields after the command's closing parenthesis: state, ppid, pgrp, …, and the
  // start time (the 22nd field of the whole line).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z" || fields[0] === "X") return null;
  return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), start: Number(fields[19]) };
}

/**
 * Whether the environment of process `pid` holds the entry `marker`. Read
 * asynchronously: reading another process's memory waits on its locks.
 */
async function procfsMarked(pid: number, marker: string): Promise<boolean> {
  try {
    // Entries end in NUL; the marker is ASCII, so Latin-1 reads it byte for byte.
    return `\0${await readFile(`/proc/${pid}/environ`, "latin1")}`.includes(`\0${marker}\0`);
  } catch (error) {
    if (refused(error)) throw error;
    return false; // another user's process, or one that ended
  }
}

/** The process table read from this machine's `/proc`; throws `NotCapable` where the runtime refuses it. */
async function procfsTable(marker: string | null, since: number): Promise<ProcessRow[]> {
  const rows: Omit<ProcessRow, "marked">[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const row = procfsStat(Number(name));
    if (row !== null) rows.push(row);
  }
  return await Promise.all(rows.map(async (row) => ({
    ...row,
    marked: marker !== null && row.start >= since && await procfsMarked(row.pid, marker),
  })));
}

/**
 * The process table by bash: `pid ppid pgid start` of every live process,
 * a line `-`, then the environments that hold the marker `$1`, searched by
 * one `grep` among the processes started at or after `$2`. Builtins only in
 * the loop: it forks nothing per process. Without `/proc` (macOS) it fails,
 * so that the table counts as unreadable rather than empty.
 */
const TABLE_SCRIPT = `
[ -r /proc/self/stat ] || exit 3
dirs=(/proc/[0-9]*)
young=()
set -f
for dir in "\${dirs[@]}"; do
  stat=
  IFS= read -r -d '' stat 2>/dev/null < "$dir/stat"
  [ -n "$stat" ] || continue
  command=\${stat%)*}
  fields=(\${stat:\${#command}+2})
  case \${fields[0]} in Z|X) continue ;; esac
  echo "\${dir#/proc/} \${fields[1]} \${fields[2]} \${fields[19]}"
  [ "\${fields[19]}" -ge "$2" ] && young+=("$dir/environ")
done
echo -
[ -n "$1" ] && [ \${#young[@]} -gt 0 ] && grep -lzxF -- "$1" "\${young[@]}" 2>/dev/null
exit 0`;

/**
 * Signals processes given as `pid:start` by bash, each only while it is
 * alive and started at `start`; prints the pids it found alive. Without
 * `/proc` it fails, and whether each is alive stays unknown.
 */
const SIGNAL_SCRIPT = `
[ -r /proc/self/stat ] || exit 3
signal=$1
shift
set -f
for process in "$@"; do
  pid=\${process%%:*}
  stat=
  IFS= read -r -d '' stat 2>/dev/null < "/proc/$pid/stat"
  [ -n "$stat" ] || continue
  command=\${stat%)*}
  fields=(\${stat:\${#command}+2})
  [ "\${fields[19]}" = "\${process#*:}" ] || continue
  case \${fields[0]} in Z|X) continue ;; esac
  [ "$signal" = probe ] || kill -s "$signal" "$pid" 2>/dev/null
  echo "$pid"
done`;

/**
 * This machine's process table: read from `/proc` and signalled directly
 * while the runtime allows it, else through bash. Where neither can read
 * `/proc` (a system without it), the table is unreadable and the sweep
 * falls back to the group alone.
 */
export function localProcessTable(direct: DirectSignaller, bash: BashRunner): ProcessTable {
  let capable = true;
  const readByBash = async (marker: string | null, since: number) => {
    try {
      const { code, stdout } = await bash(TABLE_SCRIPT, [marker ?? "", String(since)]);
      const [table, marks] = stdout.split(/^-$/m);
      if (code !== 0 || marks === undefined) return null;
      const marked = new Set(marks.split("\n").map((line) => line.split("/")[2]).filter(Boolean));
      return table.split("\n").filter(Boolean).map((line): ProcessRow => {
        const [pid, ppid, pgid, start] = line.split(" ");
        return {
          pid: Number(pid),
          ppid: Number(ppid),
          pgid: Number(pgid),
          start: Number(start),
          marked: marked.has(pid),
        };
      });
    } catch {
      return null;
    }
  };
  const signalByBash = async (processes: readonly ProcessRef[], signal: GroupSignal) => {
    const args = processes.map(({ pid, start }) => `${pid}:${start}`);
    try {
      const { code, stdout } = await bash(SIGNAL_SCRIPT, [signal.replace(/^SIG/, ""), ...args]);
      if (code !== 0) return [...processes];
      const alive = new Set(stdout.split("\n").filter(Boolean).map(Number));
      return processes.filter(({ pid }) => alive.has(pid));
    } catch {
      return [...processes]; // unknown: each may be alive
    }
  };
  return {
    async read(marker, since) {
      if (capable) {
        try {
          return await procfsTable(marker, since);
        } catch (error) {
          if (!refused(error)) return null;
          capable = false;
        }
      }
      return await readByBash(marker, since);
    },
    async signal(processes, signal) {
      if (processes.length === 0) return [];
      if (capable) {
        try {
          const alive: ProcessRef[] = [];
          for (const process of processes) {
            const row = procfsStat(process.pid);
            if (row === null || row.start !== process.start) continue;
            if (signal === "probe" || direct(process.pid, signal)) alive.push(process);
          }
          return alive;
        } catch (error) {
          if (!refused(error)) return [...processes];
          capable = false;
        }
      }
      return await signalByBash(processes, signal);
    },
  };
}

/** A local backend's group control and process table, over the scripts of one bash. */
export interface LocalHelpers {
  /** Ends and probes process groups. */
  readonly control: GroupControl;
  /** Reads the process table. */
  readonly table: ProcessTable;
}

/**
 * The helpers of a local backend that signals with `direct` and runs its
 * scripts with the runner `runner` makes for a bash: for each bash (the
 * session's, given as a spawn request's `shell`, else {@link helperBash}),
 * made on its first use and kept.
 */
export function localHelpers(
  direct: DirectSignaller,
  runner: (program: string) => BashRunner,
): (shell?: string) => LocalHelpers {
  const made = new Map<string, LocalHelpers>();
  return (shell = helperBash()) => {
    let helpers = made.get(shell);
    if (helpers === undefined) {
      const bash = runner(shell);
      helpers = {
        control: localProcessGroups(direct, bash, procfsGroupProbe),
        table: localProcessTable(direct, bash),
      };
      made.set(shell, helpers);
    }
    return helpers;
  };
}
