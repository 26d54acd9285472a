/**
 * The search index in a long-running host, against ripgrep and fd, in one run.
 *
 * Run: deno task bench:index [--kernel DIR] [--rounds N] [--builds N]. It needs the Linux
 * kernel source tree from Debian's linux-source-6.1 (installed and unpacked
 * to a temporary folder when --kernel is not given), ripgrep and fd, and the
 * npm build (made when missing). It starts six hosts (bench/index_host.mjs,
 * bench/index_host_deno.ts) on the tree: Node on the npm build, and Deno on
 * the sources with `-A` and under exactly the flags `denoPermissionFlags`
 * returns for the tree (the user's configuration), each with the index on
 * and with it off. For each indexed host it reports the time from
 * createSession to the index being ready (the median of --builds builds,
 * default 3, alternating between the runtimes; an indexed host closes once
 * built, so that no other watcher of the tree is there while one builds,
 * loads or searches: a watcher wakes on the files other processes open) and
 * its ratio to Node's,
 * its stats(), the longest its
 * event loop was held up meanwhile (whether the build blocks calls), and the resident
 * memory of the index (stats().memory, and the process's RSS growth over the
 * build) as a fraction of the indexed bytes (each build on a warm page cache:
 * the tree is read just before it; these builds keep no cache). Then the
 * restart from the cache: a Node host builds with a cache directory of its
 * own (a new folder in the temporary directory, removed at the end of the run) and
 * closes, writing the cache file; then, --builds times, alternating between
 * the runtimes, a new host on that directory loads it, warm page cache (tree
 * and cache file read just before), and it reports the time from
 * createSession to the index being ready (target ≤ 1.5 s), the first
 * rare-identifier search right after (target ≤ 50 ms), the cache file's size
 * on disk, and the process's RSS growth over the load against
 * stats().memory, and again in a host whose search workers already run (it
 * ran one walk search before it took its baseline, as every host that
 * searched once has them); then one more load of each with the page cache dropped
 * first (`/proc/sys/vm/drop_caches`, where this process may write it): the
 * cold start. It then times, warm cache, each indexed host alone (a new one
 * per runtime, loaded from that cache), with N rounds (default 9) alternating
 * between its calls and the reference tool, then the hosts without the index
 * together (they watch nothing) in 5 rounds:
 * a rare identifier (files_with_matches, vs `rg -l`), `EXPORT_SYMBOL_GPL`
 * (files_with_matches, vs `rg -l`), `spin_lock_irq(save|restore)\(` (count,
 * vs `rg -c`) and the glob `**\/*.c` (vs `fdfind -g`). A host's time is the
 * call alone, measured inside the host; the reference tool's is its whole
 * process; the ratio is the reference's median in the host's own phase over
 * the host's median. Every result is checked against the reference's, path
 * by path. At the end of its phase, each indexed host is written to from
 * this process (a new file, a changed file, a deleted file in the tree, each
 * with a fresh token) and timed from the write until its grep for the token
 * answers with the change seen. The writes go to a
 * folder of its own in the tree (`owt-bench-fresh/`, made before the hosts
 * start and removed at the end); the kernel's own files are not touched.
 * The whole run takes a few minutes.
 */
import { join } from "node:path";
import { ensureTools, kernelTree, option, repo, sh } from "./setup.ts";

const rounds = Number(option("--rounds") ?? 9);
/** Rounds for the hosts without the index: their walks take seconds each and are there for reference. */
const walkRounds = Math.min(rounds, 5);
/** Builds of each indexed host, alternating between the hosts: the build time is their median. */
const builds = Number(option("--builds") ?? 3);

/** In under 20 files of linux-source-6.1 (6: the ath9k driver's power limit setter). */
const RARE = "ath9k_hw_set_txpowerlimit";
const FRESH = "owt-bench-fresh";

/** What a host prints once its session (and index) is ready. */
interface Startup {
  readonly index: boolean;
  readonly buildMs: number | null;
  readonly stats: IndexStats | null;
  readonly rssBefore: number;
  readonly rssAfter: number;
  /** The longest a 10 ms timer in the host fired late during the build. */
  readonly stallMs: number;
  /** How many times it fired more than 50 ms late. */
  readonly stalls: number;
  readonly error: string | null;
}

/** The part of the index's stats() the bench reports. */
interface IndexStats {
  readonly state: string;
  readonly files: number;
  readonly directories: number;
  readonly bytes: number;
  readonly memory: number;
  readonly searches: { readonly indexed: number; readonly walked: number };
  readonly buildMs: number;
  readonly reason: string | null;
  readonly cache?: {
    readonly file: string | null;
    readonly loads: number;
    readonly reused: number;
    readonly writes: number;
    readonly note: string | null;
  };
}

/** A host's answer to one search. */
interface Answer {
  readonly ms: number;
  readonly found: number;
  readonly skipped: Record<string, number> | null;
  readonly indexed: boolean;
  readonly walked: boolean;
  readonly results?: string[];
  readonly error?: string;
}

/** The peak resident memory of a process so far, in bytes (read from outside: a Deno host may not read /proc). */
async function peakRss(pid: number): Promise<number> {
  const { out } = await sh(`grep VmHWM /proc/${pid}/status`);
  return Number(/VmHWM:\s+(\d+) kB/.exec(out)?.[1] ?? NaN) * 1024;
}

/** One long-running host process, spoken to a line at a time. */
class Host {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";
  readonly pid: number;

  constructor(readonly name: string, readonly indexed: boolean, command: string[]) {
    this.#child = new Deno.Command(command[0], {
      args: command.slice(1),
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.pid = this.#child.pid;
    this.#writer = this.#child.stdin.getWriter();
    this.#reader = this.#child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next line the host prints, parsed. */
  async next<T>(): Promise<T> {
    for (;;) {
      const end = this.#buffer.indexOf("\n");
      if (end !== -1) {
        const line = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 1);
        return JSON.parse(line);
      }
      const { value, done } = await this.#reader.read();
      if (done) throw new Error(`${this.name} ended without answering`);
      this.#buffer += value;
    }
  }

  async ask<T>(command: unknown): Promise<T> {
    await this.#writer.write(new TextEncoder().encode(JSON.stringify(command) + "\n"));
    return await this.next<T>();
  }

  async search(tool: string, input: Record<string, unknown>, list = false): Promise<Answer> {
    const answer = await this.ask<Answer>({ tool, input, list });
    if (answer.error) throw new Error(`${this.name}: ${answer.error}`);
    return answer;
  }

  async close(): Promise<void> {
    try {
      await this.#writer.write(new TextEncoder().encode(JSON.stringify({ tool: "close" }) + "\n"));
      await this.#writer.close();
    } catch {
      // the host has already gone
    }
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), 10_000);
    await this.#reader.cancel().catch(() => {});
    await this.#child.status;
    clearTimeout(timer);
  }
}

/** Where a host runs: Node on the npm build, or Deno on the sources with all or the narrow flags. */
type HostRuntime = "node" | "deno -A" | "deno narrow";

/**
 * The flags `denoPermissionFlags` returns for a session on `tree` (the user's
 * configuration), granting the cache directory `cache` (none when `null`).
 */
async function narrowFlags(tree: string, cache: string | null): Promise<string[]> {
  const { denoPermissionFlags } = await import("../deno.ts");
  return denoPermissionFlags({ workingDirectory: tree, cacheDirectory: cache });
}

/**
 * A host on `tree`, its index cached in `cache` when one is given (else
 * built, memory only); `warm`: its search workers run (one walk search)
 * before it takes its resident memory as the baseline.
 */
async function startHost(
  runtime: HostRuntime,
  tree: string,
  indexed: boolean,
  cache: string | null = null,
  warm = false,
): Promise<Host> {
  const tail = [
    ...(indexed ? (cache === null ? [] : [`--cache=${cache}`]) : ["--no-index"]),
    ...(warm ? ["--warm"] : []),
  ];
  const name = `openwork-tools (${runtime}, index ${indexed ? "on" : "off"})`;
  if (runtime === "node") {
    return new Host(name, indexed, [
      "node",
      `${repo}bench/index_host.mjs`,
      `${repo}npm/mod.js`,
      tree,
      ...tail,
    ]);
  }
  const flags = runtime === "deno -A" ? ["-A"] : await narrowFlags(tree, cache);
  return new Host(name, indexed, [
    "deno",
    "run",
    "--quiet",
    ...flags,
    `${repo}bench/index_host_deno.ts`,
    tree,
    ...tail,
  ]);
}

/** A reference tool as a whole process, its output parsed to the host's form. */
interface Reference {
  readonly name: string;
  readonly command: string[];
  /** It lists symbolic links, which the walk reports but never follows nor matches. */
  readonly listsLinks?: boolean;
  /** The number of results (files, paths, or the sum of counts). */
  readonly found: (results: string[]) => number;
}

const lines = (out: string) => out.split("\n").filter((line) => line !== "");
const strip = (path: string) => path.startsWith("./") ? path.slice(2) : path;
const sumCounts = (results: string[]) =>
  results.reduce((sum, r) => sum + Number(r.slice(r.lastIndexOf(":") + 1)), 0);

interface Row {
  readonly name: string;
  readonly tool: "grep" | "glob";
  readonly input: Record<string, unknown>;
  readonly reference: Reference;
  readonly target: number;
}

const ROWS: Row[] = [
  {
    name: `rare identifier \`${RARE}\`, files_with_matches`,
    tool: "grep",
    input: { pattern: RARE, mode: "files_with_matches" },
    reference: {
      name: "rg -l --no-ignore --hidden",
      command: ["rg", "-l", "--no-ignore", "--hidden", RARE],
      found: (results) => results.length,
    },
    target: 20,
  },
  {
    name: "`EXPORT_SYMBOL_GPL`, files_with_matches",
    tool: "grep",
    input: { pattern: "EXPORT_SYMBOL_GPL", mode: "files_with_matches" },
    reference: {
      name: "rg -l --no-ignore --hidden",
      command: ["rg", "-l", "--no-ignore", "--hidden", "EXPORT_SYMBOL_GPL"],
      found: (results) => results.length,
    },
    target: 3,
  },
  {
    name: "`spin_lock_irq(save|restore)\\(`, count",
    tool: "grep",
    input: { pattern: "spin_lock_irq(save|restore)\\(", mode: "count" },
    reference: {
      name: "rg -c --no-ignore --hidden",
      command: ["rg", "-c", "--no-ignore", "--hidden", "spin_lock_irq(save|restore)\\("],
      found: sumCounts,
    },
    target: 3,
  },
  {
    name: "glob `**/*.c`",
    tool: "glob",
    input: { pattern: "**/*.c" },
    reference: {
      name: "fdfind -g '*.c' --no-ignore -H",
      command: ["fdfind", "-g", "*.c", "--no-ignore", "-H"],
      listsLinks: true,
      found: (results) => results.length,
    },
    target: 3,
  },
];

/**
 * Runs a reference tool as a whole process; its time includes start-up and
 * reading its output. Its results are its output's lines as the host lists
 * them (paths relative to the tree, or path:count).
 */
async function reference(ref: Reference, tree: string): Promise<{ ms: number; results: string[] }> {
  const started = performance.now();
  const { code, stdout, stderr } = await new Deno.Command(ref.command[0], {
    args: ref.command.slice(1),
    cwd: tree,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - started;
  // rg exits 1 when nothing matched.
  if (code !== 0 && code !== 1) {
    throw new Error(`${ref.name} failed: ${new TextDecoder().decode(stderr)}`);
  }
  return { ms, results: lines(new TextDecoder().decode(stdout)).map(strip) };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;
const percent = (part: number, whole: number) => `${(100 * part / whole).toFixed(1)}%`;

/** Differences between two result lists as sets, for the report. */
function difference(ours: string[], theirs: string[]): string | null {
  const a = new Set(ours);
  const b = new Set(theirs);
  const missing = theirs.filter((r) => !a.has(r));
  const extra = ours.filter((r) => !b.has(r));
  if (missing.length === 0 && extra.length === 0 && ours.length === theirs.length) return null;
  return `${missing.length} missing (${missing.slice(0, 3).join(", ")}), ${extra.length} extra (${
    extra.slice(0, 3).join(", ")
  })${ours.length === a.size ? "" : ", duplicates"}`;
}

const problems: string[] = [];

/** The machine's 1-minute load average: other work on the two cores shows in every timing. */
const load = async () => (await sh("cat /proc/loadavg")).out.split(" ")[0];

/** Reads every file of the tree (twice: the second pass finds them all cached). */
async function warmCache(tree: string): Promise<void> {
  for (let pass = 0; pass < 2; pass++) {
    await sh("rg -c --no-ignore --hidden --no-messages 'owt-no-such-token' . >/dev/null", tree);
  }
}

/** A row's timings in one phase: the hosts' answers and the reference's times beside them. */
interface PhaseRow {
  readonly answers: Map<Host, Answer[]>;
  readonly refTimes: number[];
  /** The reference's result in this phase (a phase's writes add files for the next). */
  readonly refFound: number;
  /** The same, symbolic links the reference lists included. */
  readonly refListed: number;
}

/**
 * One phase of the searches: every row, each host's results checked against
 * the reference's, then `rounds` rounds alternating the hosts' calls and the
 * reference tool (the hosts without the index in the first few only).
 */
async function searchPhase(tree: string, hosts: Host[], phaseRounds: number): Promise<PhaseRow[]> {
  const rows: PhaseRow[] = [];
  for (const row of ROWS) {
    // Warm-up: the page cache, each host's workers and code; the results are checked here.
    const listed = (await reference(row.reference, tree)).results;
    const expected = row.reference.listsLinks
      ? listed.filter((path) => !Deno.lstatSync(join(tree, path)).isSymlink)
      : listed;
    for (const host of hosts) {
      const answer = await host.search(row.tool, row.input, true);
      const diff = difference(answer.results ?? [], expected);
      if (diff !== null) problems.push(`${row.name}, ${host.name}: ${diff}`);
    }
    const refTimes: number[] = [];
    const answers = new Map<Host, Answer[]>(hosts.map((host) => [host, []]));
    for (let round = 0; round < phaseRounds; round++) {
      const runners: (Host | null)[] = [null, ...hosts];
      const order = round % 2 === 0 ? runners : runners.reverse();
      for (const host of order) {
        if (host === null) refTimes.push((await reference(row.reference, tree)).ms);
        else answers.get(host)!.push(await host.search(row.tool, row.input));
      }
    }
    rows.push({
      answers,
      refTimes,
      refFound: row.reference.found(expected),
      refListed: row.reference.found(listed),
    });
  }
  return rows;
}

/** What an indexed host's phase measured besides its searches. */
interface IndexedPhase {
  readonly rows: PhaseRow[];
  readonly freshness: Awaited<ReturnType<typeof freshness>>;
  readonly end: { stats: IndexStats | null; rss: number; peak: number };
}

/**
 * The searches, then the external writes: each indexed host alone (loaded
 * from `cache`, or built when there is none), closed before the next starts,
 * since a watcher of the tree wakes on every file another process opens
 * (Deno's asks inotify for opens), so hosts of the tree watching at once
 * would load each other's and the reference's timings; then the hosts
 * without the index (they watch nothing) together. Each host's ratio is to
 * the reference's median in its own phase.
 */
async function searchRows(
  tree: string,
  walkers: Host[],
  cache: string | null,
  existing: string,
  original: string,
): Promise<void> {
  const phases = new Map<Host, IndexedPhase>();
  for (const runtime of ["node", "deno -A", "deno narrow"] as const) {
    await warmCache(tree);
    const host = await startHost(runtime, tree, true, cache);
    try {
      const startup = await host.next<Startup>();
      if (startup.error !== null) problems.push(`${host.name}: index not ready: ${startup.error}`);
      const rows = await searchPhase(tree, [host], rounds);
      const fresh = await freshness(tree, host, existing, original);
      const end = await host.ask<{ stats: IndexStats | null; rss: number }>({ tool: "stats" });
      phases.set(host, { rows, freshness: fresh, end: { ...end, peak: await peakRss(host.pid) } });
    } finally {
      await host.close();
    }
  }
  await warmCache(tree);
  const walked = await searchPhase(tree, walkers, walkRounds);

  console.log(
    `\n### Searches (warm cache; each indexed host alone, loaded from the cache, ${rounds} rounds ` +
      `alternating its calls and the reference tool; then the hosts without the index, which walk, ` +
      `together, ${walkRounds} rounds; medians; a host's time is the call alone inside the running ` +
      `host, the reference's its whole process; "x faster" is the reference's median in the ` +
      `host's own phase over the host's; the reference row gives its median over every phase)\n`,
  );
  console.log(
    "| search | tool | median ms | x faster | target | result | reference result | from index |",
  );
  console.log("|---|---|---:|---:|---:|---|---|---:|");
  const measured: [Host, PhaseRow[]][] = [
    ...[...phases].map(([host, phase]) => [host, phase.rows] as [Host, PhaseRow[]]),
    ...walkers.map((host) => [host, walked] as [Host, PhaseRow[]]),
  ];
  for (const [r, row] of ROWS.entries()) {
    const allRef = measured.flatMap(([, rows]) => rows[r].refTimes);
    // As the first phase found it; each host is checked against its own phase's.
    const first = measured[0][1][r];
    const links = first.refListed - first.refFound;
    console.log(
      `| ${row.name} | ${row.reference.name} (whole process) | ${
        median(allRef).toFixed(1)
      } | — | — | — | ${first.refListed}${
        links === 0 ? "" : ` (${first.refFound} without its ${links} symbolic links)`
      } | — |`,
    );
    for (const [host, rows] of measured) {
      const answers = rows[r].answers.get(host)!;
      const refFound = rows[r].refFound;
      const refMs = median(rows[r].refTimes);
      const ms = median(answers.map((a) => a.ms));
      const found = answers[0].found;
      const agree = answers.every((a) => a.found === refFound);
      if (!agree) {
        problems.push(
          `${row.name}, ${host.name}: ${answers.map((a) => a.found).join(", ")} vs ${refFound}`,
        );
      }
      const indexed = answers.filter((a) => a.indexed).length;
      const skipped = answers[0].skipped;
      const skips = skipped === null
        ? ""
        : ` (skipped ${skipped.too_large} too large, ${skipped.binary} binary, ${skipped.unreadable} unreadable)`;
      console.log(
        `| ${row.name} | ${host.name} | ${ms.toFixed(1)} | ${(refMs / ms).toFixed(1)}x | ${
          host.indexed ? `≥ ${row.target}x` : "—"
        } | ${found}${skips}${agree ? "" : " **MISMATCH**"} | ${refFound} | ${
          host.indexed ? `${indexed}/${answers.length}` : "—"
        } |`,
      );
    }
  }

  console.log(
    `\n### External write to visible (${rounds} rounds; a plain write from the bench ` +
      `process, then at once the host's grep files_with_matches for a fresh token; medians)\n`,
  );
  console.log(
    "| host | change | write → answer ms | grep call ms | max write → answer ms | from index |",
  );
  console.log("|---|---|---:|---:|---:|---:|");
  for (const [host, phase] of phases) {
    for (const [change, list] of Object.entries(phase.freshness)) {
      console.log(
        `| ${host.name} | ${change} file | ${median(list.map((v) => v.ms)).toFixed(1)} | ${
          median(list.map((v) => v.callMs)).toFixed(1)
        } | ${Math.max(...list.map((v) => v.ms)).toFixed(1)} | ${
          list.filter((v) => v.indexed).length
        }/${list.length} |`,
      );
    }
  }

  console.log("\n### Memory at the end of each host's searches\n");
  console.log("| host | state | stats().memory | RSS | peak RSS | searches indexed / walked |");
  console.log("|---|---|---:|---:|---:|---|");
  const ends: [Host, { stats: IndexStats | null; rss: number; peak: number }][] = [
    ...[...phases].map(([host, phase]) => [host, phase.end] as [Host, IndexedPhase["end"]]),
  ];
  for (const host of walkers) {
    const end = await host.ask<{ stats: IndexStats | null; rss: number }>({ tool: "stats" });
    ends.push([host, { ...end, peak: await peakRss(host.pid) }]);
  }
  for (const [host, end] of ends) {
    console.log(
      `| ${host.name} | ${end.stats?.state ?? "off"} | ${
        end.stats ? mib(end.stats.memory) : "—"
      } | ${mib(end.rss)} | ${mib(end.peak)} | ${
        end.stats ? `${end.stats.searches.indexed} / ${end.stats.searches.walked}` : "—"
      } |`,
    );
  }
}

/**
 * The restart from the cache: a Node host builds with a cache directory and
 * closes (writing the cache file); then new hosts of each runtime load it,
 * --builds rounds, alternating; each reports load-to-ready and the first
 * rare-identifier search right after, and closes.
 */
async function restarts(tree: string, cache: string): Promise<boolean> {
  {
    const expected = (await reference(ROWS[0].reference, tree)).results.length;
    await warmCache(tree);
    const writer = await startHost("node", tree, true, cache);
    const built = await writer.next<Startup>();
    await writer.close();
    const file = built.stats?.cache?.file ?? null;
    if (file === null) {
      problems.push(`the cache was not written: ${built.stats?.cache?.note ?? built.error}`);
      return false;
    }
    const size = (await Deno.stat(file)).size;
    const loads = new Map<HostRuntime, { ready: number; first: number; growth: number }[]>();
    /** RSS growth over loads in hosts whose search workers already ran (one walk search first). */
    const warmGrowth = new Map<HostRuntime, number[]>();
    const memory = new Map<HostRuntime, number>();
    const runtimes: HostRuntime[] = ["node", "deno -A", "deno narrow"];
    for (let round = 0; round < builds; round++) {
      for (const runtime of round % 2 === 0 ? runtimes : [...runtimes].reverse()) {
        await warmCache(tree);
        await sh(`cat '${file}' > /dev/null`);
        const host = await startHost(runtime, tree, true, cache);
        try {
          const startup = await host.next<Startup>();
          const stats = startup.stats;
          if (startup.error !== null || stats === null || stats.cache?.loads !== 1) {
            problems.push(
              `${host.name}: the cache was not loaded: ${startup.error ?? stats?.cache?.note}`,
            );
            continue;
          }
          const first = await host.search("grep", ROWS[0].input);
          if (!first.indexed || first.found !== expected) {
            problems.push(
              `${host.name}: first search after the restart found ${first.found} of ${expected}, ` +
                `from the index: ${first.indexed}`,
            );
          }
          memory.set(runtime, stats.memory);
          const list = loads.get(runtime) ?? [];
          list.push({
            ready: startup.buildMs!,
            first: first.ms,
            growth: startup.rssAfter - startup.rssBefore,
          });
          loads.set(runtime, list);
        } finally {
          await host.close();
        }
        // The same load in a host that searched before: its search workers already run, and
        // their memory is in the baseline, as in every host that searched once.
        await sh(`cat '${file}' > /dev/null`);
        const warmHost = await startHost(runtime, tree, true, cache, true);
        try {
          const startup = await warmHost.next<Startup>();
          if (startup.error !== null || startup.stats?.cache?.loads !== 1) {
            problems.push(
              `${warmHost.name}: the cache was not loaded after a search: ` +
                `${startup.error ?? startup.stats?.cache?.note}`,
            );
            continue;
          }
          const list = warmGrowth.get(runtime) ?? [];
          list.push(startup.rssAfter - startup.rssBefore);
          warmGrowth.set(runtime, list);
        } finally {
          await warmHost.close();
        }
      }
    }
    // One more load of each with the page cache dropped: the tree and the cache file read from disk.
    const cold = new Map<HostRuntime, { ready: number; first: number }>();
    for (const runtime of runtimes) {
      if (!await dropPageCache()) break;
      const host = await startHost(runtime, tree, true, cache);
      try {
        const startup = await host.next<Startup>();
        if (startup.error !== null || startup.stats?.cache?.loads !== 1) continue;
        const first = await host.search("grep", ROWS[0].input);
        cold.set(runtime, { ready: startup.buildMs!, first: first.ms });
      } finally {
        await host.close();
      }
    }
    console.log(
      `\n### Restart from the cache (warm page cache; ${builds} loads each, alternating; ` +
        `cache file ${mib(size)} on disk, written by a Node host's build of ` +
        `${((built.buildMs ?? 0) / 1000).toFixed(2)} s)\n`,
    );
    console.log(
      "| host | load to ready s (median (each)) | target | first rare-identifier search ms " +
        "(median (each)) | target | stats().memory | RSS growth over the load (median) | " +
        "RSS growth / stats().memory | RSS growth / stats().memory, search workers already " +
        "running (median) | cold page cache: load to ready s, first search ms |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const runtime of runtimes) {
      const list = loads.get(runtime) ?? [];
      if (list.length === 0) continue;
      const each = (pick: (v: { ready: number; first: number }) => number, digits: number) =>
        list.map((v) => pick(v).toFixed(digits)).join(", ");
      const growth = median(list.map((v) => v.growth));
      const index = memory.get(runtime)!;
      const warmList = warmGrowth.get(runtime) ?? [];
      const warm = warmList.length === 0
        ? "not measured"
        : `${(median(warmList) / index).toFixed(2)}x (${mib(median(warmList))})`;
      console.log(
        `| openwork-tools (${runtime}) | ${(median(list.map((v) => v.ready)) / 1000).toFixed(2)} (${
          each((v) => v.ready / 1000, 2)
        }) | ≤ 1.5 | ${median(list.map((v) => v.first)).toFixed(1)} (${
          each((v) => v.first, 1)
        }) | ≤ 50 | ${mib(index)} | ${mib(growth)} | ${(growth / index).toFixed(2)}x | ${warm} | ${
          coldCell(cold.get(runtime))
        } |`,
      );
    }
  }
  return true;
}

/**
 * Drops the page cache (the tree and the cache file then come from disk);
 * `false` where that is refused (not root, or a container that forbids it).
 */
async function dropPageCache(): Promise<boolean> {
  return (await sh("sync && echo 3 > /proc/sys/vm/drop_caches")).code === 0;
}

function coldCell(cold: { ready: number; first: number } | undefined): string {
  if (cold === undefined) return "not measured (the page cache cannot be dropped here)";
  return `${(cold.ready / 1000).toFixed(2)} s, ${cold.first.toFixed(1)} ms`;
}

interface Visible {
  /** From just before the write until the host answered with the change seen. */
  readonly ms: number;
  /** The grep call alone, inside the host. */
  readonly callMs: number;
  readonly indexed: boolean;
}

/** External writes: from this process's write until the host's grep for a fresh token sees it. */
async function freshness(tree: string, host: Host, existing: string, original: string) {
  const folder = join(tree, FRESH);
  const grep = (token: string) =>
    host.search("grep", { pattern: token, mode: "files_with_matches" });
  const check = (answer: Answer, path: string, present: boolean, what: string) => {
    const seen = (answer.results ?? []).includes(path);
    if (seen !== present) {
      throw new Error(
        `${host.name}: ${what}: ${path} ${present ? "not found" : "still found"} ` +
          `(answered ${JSON.stringify(answer.results)}, from the index: ${answer.indexed})`,
      );
    }
  };
  const created: Visible[] = [];
  const modified: Visible[] = [];
  const deleted: Visible[] = [];
  for (let round = 0; round < rounds; round++) {
    const token = () => `owtfresh${crypto.randomUUID().replaceAll("-", "")}`;

    const fresh = token();
    const name = `new_${fresh}.c`;
    let started = performance.now();
    await Deno.writeTextFile(join(folder, name), `int ${fresh}(void);\n`);
    let answer = await grep(fresh);
    created.push({ ms: performance.now() - started, callMs: answer.ms, indexed: answer.indexed });
    check(answer, `${FRESH}/${name}`, true, "new file");

    const changed = token();
    started = performance.now();
    await Deno.writeTextFile(existing, `${original}\nint ${changed}(void);\n`);
    answer = await grep(changed);
    modified.push({ ms: performance.now() - started, callMs: answer.ms, indexed: answer.indexed });
    check(answer, `${FRESH}/existing.c`, true, "changed file");

    const doomed = token();
    const doomedName = `doomed_${doomed}.c`;
    await Deno.writeTextFile(join(folder, doomedName), `int ${doomed}(void);\n`);
    check(await grep(doomed), `${FRESH}/${doomedName}`, true, "file to delete");
    started = performance.now();
    await Deno.remove(join(folder, doomedName));
    answer = await grep(doomed);
    deleted.push({ ms: performance.now() - started, callMs: answer.ms, indexed: answer.indexed });
    check(answer, `${FRESH}/${doomedName}`, false, "deleted file");
  }
  await Deno.writeTextFile(existing, original);
  return { created, modified, deleted };
}

async function main(): Promise<void> {
  await ensureTools([["rg", "ripgrep"], ["fdfind", "fd-find"]]);
  const tree = await kernelTree();
  const folder = join(tree, FRESH);
  await Deno.remove(folder, { recursive: true }).catch(() => {});
  await Deno.mkdir(folder);
  // A real source file, indexed with the tree, to be changed from outside.
  const existing = join(folder, "existing.c");
  await Deno.copyFile(join(tree, "kernel", "sched", "core.c"), existing);
  const original = await Deno.readTextFile(existing);
  const hosts: Host[] = [];
  try {
    console.log(`## Search index, Linux 6.1 source tree: ${tree}`);
    console.log(
      `\n(rare identifier: \`${RARE}\`; this run's files and writes go to \`${FRESH}/\` ` +
        `in the tree, a copy of kernel/sched/core.c among them; ${navigator.hardwareConcurrency} ` +
        `cores, load average ${await load()} at the start)`,
    );

    // One build at a time: the two cores are the build's alone.
    const startups = new Map<Host, Startup & { readonly peakRss: number }>();
    const runs: [HostRuntime, boolean][] = [
      ["node", true],
      ["deno -A", true],
      ["deno narrow", true],
      ["node", false],
      ["deno -A", false],
      ["deno narrow", false],
    ];
    for (const [runtime, indexed] of runs) {
      // The page cache right before each build: this machine evicts what sat idle for a minute.
      if (indexed) await warmCache(tree);
      const host = await startHost(runtime, tree, indexed);
      hosts.push(host);
      const startup = await host.next<Startup>();
      startups.set(host, { ...startup, peakRss: await peakRss(host.pid) });
      // An indexed host watches the tree: it is closed once built, so that no watcher but the
      // measured host's own is there while the others build, load and search.
      if (indexed) await host.close();
      if (indexed && !startup.index) {
        problems.push(`${host.name}: this build has no search index (session.searchIndex absent)`);
      }
      if (startup.error !== null) problems.push(`${host.name}: index not built: ${startup.error}`);
    }
    // More builds, alternating between the runtimes as the first, each in a host closed after it:
    // one build each would compare moments of a shared machine as much as the runtimes.
    const buildTimes = new Map<string, number[]>();
    for (const host of hosts.filter((h) => h.indexed)) {
      const ms = startups.get(host)!.buildMs;
      buildTimes.set(host.name, ms === null ? [] : [ms]);
    }
    for (let round = 1; round < builds; round++) {
      for (const [runtime, indexed] of runs.filter(([, indexed]) => indexed)) {
        await warmCache(tree);
        const host = await startHost(runtime, tree, indexed);
        const startup = await host.next<Startup>();
        await host.close();
        if (startup.buildMs !== null && startup.error === null) {
          buildTimes.get(host.name)?.push(startup.buildMs);
        }
      }
    }

    console.log("\n### Index build and memory (warm page cache)\n");
    console.log(
      "| host | build s (createSession to ready; median (each build)) | build / Node's | state | files | directories | " +
        "indexed bytes | " +
        "stats().memory | RSS before → after build | RSS growth | peak RSS | " +
        "longest event-loop stall during the build |",
    );
    console.log("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    const buildOf = (host: Host) => {
      const times = buildTimes.get(host.name) ?? [];
      return times.length === 0 ? null : median(times);
    };
    const nodeBuild = buildOf(hosts.find((h) => h.indexed && h.name.includes("(node"))!);
    for (const host of hosts.filter((h) => h.indexed)) {
      const s = startups.get(host)!;
      const build = buildOf(host);
      const st = s.stats;
      const growth = s.rssAfter - s.rssBefore;
      console.log(
        `| ${host.name} | ${build === null ? "—" : (build / 1000).toFixed(2)} (${
          (buildTimes.get(host.name) ?? []).map((ms) => (ms / 1000).toFixed(2)).join(", ")
        }) | ${
          build === null || nodeBuild === null ? "—" : `${(build / nodeBuild).toFixed(2)}x`
        } | ${st?.state ?? "none"} | ${st?.files ?? "—"} | ${st?.directories ?? "—"} | ${
          st ? mib(st.bytes) : "—"
        } | ${st ? `${mib(st.memory)} (${percent(st.memory, st.bytes)} of bytes)` : "—"} | ${
          mib(s.rssBefore)
        } → ${mib(s.rssAfter)} | ${mib(growth)}${
          st ? ` (${percent(growth, st.bytes)} of bytes)` : ""
        } | ${mib(s.peakRss)} | ${s.stallMs.toFixed(0)} ms (${s.stalls} over 50 ms) |`,
      );
    }

    const cache = await Deno.makeTempDir({ prefix: "owt-bench-cache-" });
    try {
      const loaded = await restarts(tree, cache);
      await searchRows(
        tree,
        hosts.filter((h) => !h.indexed),
        loaded ? cache : null,
        existing,
        original,
      );
    } finally {
      await Deno.remove(cache, { recursive: true }).catch(() => {});
    }
    console.log(`\n(load average ${await load()} at the end)`);
  } finally {
    for (const host of hosts) await host.close();
    await Deno.remove(folder, { recursive: true }).catch(() => {});
  }
  if (problems.length > 0) {
    console.log("\n### Problems\n");
    for (const problem of problems) console.log(`- ${problem}`);
    Deno.exitCode = 1;
  }
}

await main();
