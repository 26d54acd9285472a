/**
 * The sweep of a call's descendants that left its process group (`setsid`,
 * a double fork, a daemon): what the termination path ends besides the
 * group. A process is the call's when its environment holds the call's
 * marker (which a new session keeps), or when it descends from the leader,
 * or from a process seen descending from it while the call ran (which
 * catches one that cleared its environment after it was seen).
 *
 * Best effort, without OS isolation: a process that clears its environment
 * and leaves the parent chain before it is sampled (`env -i setsid -f …`)
 * is not found. How the table is read comes from the backend
 * ({@link ProcessTable}).
 *
 * @module
 */
import type {
  DescendantSweep,
  ProcessRef,
  ProcessRow,
  ProcessTable,
  TerminationTiming,
} from "./process.ts";
import { sleep } from "./sleep.ts";

/** The environment variable that carries a call's marker to every descendant. */
export const MARKER_VARIABLE = "OPENWORK_CALL";

/** Polls until none of `processes` is alive; resolves those still alive at the end. */
async function vanish(
  processes: ProcessRef[],
  table: ProcessTable,
  withinMs: number,
): Promise<ProcessRef[]> {
  const end = Date.now() + withinMs;
  let delay = 1;
  let alive = processes;
  while (true) {
    alive = await table.signal(alive, "probe");
    if (alive.length === 0 || Date.now() >= end) return alive;
    await sleep(Math.min(delay, Math.max(1, end - Date.now())));
    delay = Math.min(delay * 2, 16);
  }
}

/**
 * Ends single processes as {@link terminateGroup} ends a group: SIGTERM, up
 * to `graceMs` for them to go, SIGKILL, then up to `confirmMs` until none is
 * alive. `true` means confirmed gone.
 */
export async function terminateProcesses(
  processes: readonly ProcessRef[],
  table: ProcessTable,
  timing: TerminationTiming = {},
): Promise<boolean> {
  if (processes.length === 0) return true;
  let alive = await table.signal(processes, "SIGTERM");
  if (alive.length === 0) return true;
  alive = await vanish(alive, table, timing.graceMs ?? 1000);
  if (alive.length === 0) return true;
  alive = await table.signal(alive, "SIGKILL");
  if (alive.length === 0) return true;
  return (await vanish(alive, table, timing.confirmMs ?? 3000)).length === 0;
}

/** The first sampling delay after a spawn, and the longest one: escapes happen early more often than late. */
const FIRST_SAMPLE_MS = 10;
const LONGEST_SAMPLE_MS = 500;
/** How many times the sweep looks again for what forked while the last ones were ending. */
const SWEEP_ROUNDS = 4;

/**
 * The descendants of one leader: samples the parent chain while the leader
 * runs, and collects what the termination path must end besides the group.
 */
export class Descendants implements DescendantSweep {
  readonly #leader: number;
  readonly #marker: string;
  readonly #table: ProcessTable;
  /** Processes seen descending from the leader, by pid, with their start times. */
  #seen = new Map<number, number>();
  #leaderStart: number | null = null;
  #leaderReaped = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #sampling: Promise<void> | null = null;
  #stopped = false;

  /**
   * Starts sampling the descendants of `leader`, whose environment holds
   * `marker` (`NAME=value`), until {@link stop} or until `exited` settles.
   */
  constructor(leader: number, marker: string, table: ProcessTable, exited: Promise<unknown>) {
    this.#leader = leader;
    this.#marker = marker;
    this.#table = table;
    void exited.finally(() => {
      // Once the runtime has reaped the leader its pid may be reused: it is a root only by start time.
      this.#leaderReaped = true;
      void this.stop();
    });
    this.#schedule(0);
  }

  #schedule(delay: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#sampling = this.#sample().then(
        () => this.#schedule(Math.min(LONGEST_SAMPLE_MS, Math.max(FIRST_SAMPLE_MS, delay * 2))),
        () => this.#schedule(LONGEST_SAMPLE_MS),
      );
    }, delay);
  }

  async #sample(): Promise<void> {
    const rows = await this.#table.read(null, 0);
    if (rows === null) {
      this.#stopped = true; // the table cannot be read: sampling would only cost
      return;
    }
    this.#descendants(rows);
  }

  /**
   * The descendants of the leader, of the processes seen before and of the
   * marked ones, among `rows`; remembers them as seen. Nothing older than the
   * leader is the call's: once the leader's start is known, older rows are
   * left out.
   */
  #descendants(all: readonly ProcessRow[]): ProcessRow[] {
    const children = new Map<number, ProcessRow[]>();
    const roots: ProcessRow[] = [];
    const leader = all.find((row) => row.pid === this.#leader);
    if (leader !== undefined && this.#leaderStart === null && !this.#leaderReaped) {
      this.#leaderStart = leader.start;
    }
    const rows = all.filter((row) => row.start >= (this.#leaderStart ?? 0));
    for (const row of rows) {
      const siblings = children.get(row.ppid);
      if (siblings === undefined) children.set(row.ppid, [row]);
      else siblings.push(row);
      if (row.pid === this.#leader) {
        if (row.start === this.#leaderStart) roots.push(row);
      } else if (row.marked || this.#seen.get(row.pid) === row.start) roots.push(row);
    }
    const found = new Map<number, ProcessRow>();
    const queue = [...roots];
    while (queue.length > 0) {
      const row = queue.pop()!;
      if (found.has(row.pid)) continue;
      found.set(row.pid, row);
      queue.push(...children.get(row.pid) ?? []);
    }
    // Only the living are kept: a pid that is gone is no root, and its number may be reused.
    this.#seen = new Map([...found.values()].map((row) => [row.pid, row.start]));
    return [...found.values()];
  }

  /** Stops sampling; resolves once a sample under way has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#sampling?.catch(() => {});
  }

  /**
   * The processes to end besides the leader's group: the marked ones and
   * every descendant, found now; `null` when the table cannot be read.
   */
  async collect(): Promise<ProcessRow[] | null> {
    const rows = await this.#table.read(this.#marker, this.#leaderStart ?? 0);
    return rows === null ? null : this.#descendants(rows);
  }

  /**
   * Ends every process {@link collect} finds outside the group, as `endGroup`
   * ends the group, and looks again for what forked meanwhile. The first
   * collection comes before the group is signalled, while its members still
   * hold their children in the parent chain. `true` means all confirmed gone.
   */
  async sweep(endGroup: () => Promise<boolean>, timing: TerminationTiming): Promise<boolean> {
    await this.stop();
    const first = await this.collect();
    if (first === null) return await endGroup();
    const [group, swept] = await Promise.all([
      endGroup(),
      terminateProcesses(first.filter((row) => row.pgid !== this.#leader), this.#table, timing),
    ]);
    let gone = group && swept;
    // Nothing was alive: nothing of the call is left to fork.
    if (first.length === 0) return gone;
    for (let round = 0;; round++) {
      const more = await this.collect();
      if (more === null || more.length === 0) return gone;
      if (round === SWEEP_ROUNDS) return false; // still forking: its end cannot be confirmed
      gone = (await terminateProcesses(more, this.#table, timing)) && gone;
    }
  }
}
