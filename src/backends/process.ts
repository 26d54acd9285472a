/**
 * The process backend interface: every process runs in a process group of
 * its own, and the backend owns it until its whole group, and every
 * descendant it finds outside the group, is confirmed gone.
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
