/**
 * The process backend interface: every process runs in a process group of
 * its own, and the backend owns it until its whole group, and every
 * descendant it finds outside the group, is confirmed gone. Below it, what
 * the local backends' one termination path needs from a backend: how a
 * group is signalled and inspected ({@link GroupControl}) and how the
 * process table is read ({@link ProcessTable}).
 *
 * @module
 */
import type { CheckedPath } from "../path/checked_path.ts";

/** What to start. */
export interface SpawnRequest {
  /** The program, e.g. `bash`. */
  readonly command: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** The checked directory it runs in. */
  readonly cwd: CheckedPath;
  /**
   * The whole environment of the process (nothing is inherited besides it).
   * A local backend adds `OPENWORK_CALL`, a marker unique to the process, by
   * which it finds the descendants that leave the group.
   */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Bytes written to the process's standard input, which is then closed;
   * without them, standard input is `/dev/null`.
   */
  readonly input?: Uint8Array;
  /**
   * The bash a local backend runs its own scripts with for this process
   * (ending its group where the runtime refuses a signal, reading the
   * process table where it refuses `/proc`): a session gives the path of
   * the bash it found (see `createSession`). Default: the bash on
   * `/usr/local/bin:/usr/bin:/bin`.
   */
  readonly shell?: string;
}

/** How the group leader ended. */
export interface ProcessExit {
  /** Its exit code, or `null` when a signal ended it. */
  readonly code: number | null;
  /** The signal that ended it, or `null`. */
  readonly signal: string | null;
}

/**
 * One output pipe of a process, the only shape the bash tool reads. It pushes
 * its chunks to one reader: each backend adapts its runtime's pipes to it at
 * its own edge, in whatever way drains them fastest (a read into one reused
 * buffer where the runtime allows it). A chunk is valid only while `take`
 * runs, so a reader that keeps it copies it. Pushed, not pulled: pulling
 * chunk by chunk from Node's FIFO reader (pausing its socket between reads,
 * or rotating four buffers) drained `head -c 2G /dev/zero` 10–12% slower.
 */
export interface ProcessOutput {
  /**
   * Calls `take` with every chunk, in order, until the pipe ends; settles then
   * (rejecting on a read error, or with what `take` threw, after which the
   * pipe is closed). Called at most once: a second call rejects. After `close`,
   * resolves at once.
   */
  forEach(take: (chunk: Uint8Array) => void): Promise<void>;
  /** Closes the pipe; a pending `forEach` then resolves. */
  close(): void;
}

/** A started process; stdin is closed, stdout and stderr are piped. */
export interface ProcessHandle {
  /** The leader's pid, which is also its process-group id. */
  readonly pid: number;
  /** The leader's standard output. */
  readonly stdout: ProcessOutput;
  /** The leader's standard error. */
  readonly stderr: ProcessOutput;
  /** Settles when the leader exits. */
  readonly exited: Promise<ProcessExit>;
  /**
   * The one termination path, for timeout, cancel and clean-up alike: signal
   * the whole group (SIGTERM, a grace period, then SIGKILL) and wait until it
   * is gone, and end the same way every descendant found outside the group
   * (best effort: see the local backends). Resolves `true` once confirmed;
   * `false` when it could not be confirmed, in which case the backend keeps
   * the handle.
   */
  terminate(): Promise<boolean>;
}

/** Starts processes and owns every one until its group is confirmed gone. */
export interface ProcessBackend {
  /** Starts a process in a new process group; throws `spawn_failed` when it cannot. */
  spawn(request: SpawnRequest): Promise<ProcessHandle>;
  /** How many process groups the backend still owns. */
  readonly owned: number;
  /** Terminates every group it still owns; resolves `true` when all are confirmed gone. */
  shutdown(): Promise<boolean>;
}

/** The signals the termination path sends; `probe` only asks whether the group exists. */
export type GroupSignal = "SIGTERM" | "SIGKILL" | "probe";

/** What the termination path needs from a backend to signal and inspect a process group. */
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

/** A process, told apart from a later one with the same pid by its start time. */
export interface ProcessRef {
  /** Its pid. */
  readonly pid: number;
  /** Its start time, as the process table gives it (clock ticks since boot on Linux). */
  readonly start: number;
}

/** One live process (not a zombie) of the process table. */
export interface ProcessRow extends ProcessRef {
  /** Its parent's pid. */
  readonly ppid: number;
  /** Its process group. */
  readonly pgid: number;
  /** Whether its environment holds the marker asked for. */
  readonly marked: boolean;
}

/** What the sweep needs from a backend to read the process table and signal single processes. */
export interface ProcessTable {
  /**
   * The live processes, each `marked` when its environment holds the entry
   * `marker` (`NAME=value`; `null` asks for none); `null` when the table
   * cannot be read. Only the environments of processes started at or after
   * `since` are read, and only where the system lets this process read
   * them: those of its own user.
   */
  read(marker: string | null, since: number): Promise<ProcessRow[] | null>;
  /**
   * Sends `signal` (none for `probe`) to each process that is still alive and
   * still the one started at `start`; resolves those it found alive.
   */
  signal(processes: readonly ProcessRef[], signal: GroupSignal): Promise<ProcessRef[]>;
}

/**
 * What ends a call's descendants that left its process group, besides the
 * group itself: the local backends' sweep of the process table.
 */
export interface DescendantSweep {
  /**
   * Ends what it finds outside the group while `endGroup` ends the group;
   * `true` means all confirmed gone.
   */
  sweep(endGroup: () => Promise<boolean>, timing: TerminationTiming): Promise<boolean>;
}
