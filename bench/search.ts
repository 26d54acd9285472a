/**
 * grep and glob against ripgrep, GNU grep and fd, in one run, alternating,
 * whole processes: medians, ratios to the reference tool, peak memory.
 *
 * Run: deno task bench:search [--kernel DIR] [--rounds N] [--generated-only | --kernel-only]
 *
 * The project's rows run on Node (the npm build), on Deno with `-A`, and on
 * Deno under exactly the flags `denoPermissionFlags` returns for the tree (the
 * user's configuration); the floors (bench/floor_search.mjs) on Node and on
 * Deno under those same flags (plus reading the floor's own module, which its
 * workers run). Each Deno row is also given as a ratio to the Deno floor's
 * call and to the same row's call on Node. A last row runs the Deno floor
 * with the least the tools' path boundary adds (`verified`: each directory,
 * and each file grep reads, opened, asked where it is, and read through its
 * descriptor): its ratio to the floor is what the boundary costs there.
 *
 * Corpora: the Linux kernel source tree from Debian's linux-source-6.1
 * (installed and unpacked to a temporary folder when --kernel is not given),
 * and a generated tree that needs no package.
 */
import { join } from "node:path";
import { ensureTools, kernelTree, option, repo, sh } from "./setup.ts";

const rounds = Number(option("--rounds") ?? 5);

async function generatedTree(): Promise<string> {
  const root = join(Deno.env.get("TMPDIR") ?? "/tmp", "owt-bench-generated");
  if ((await sh(`test -f ${root}/.done`)).code === 0) return root;
  console.error("generating a tree of 20,000 files …");
  const line = "static int value = compute(alpha, beta); /* plain filler text for the search */\n";
  for (let d = 0; d < 200; d++) {
    const dir = join(root, `pkg${d % 20}`, `mod${d}`);
    await Deno.mkdir(dir, { recursive: true });
    for (let f = 0; f < 100; f++) {
      let body = line.repeat(40 + (f % 60));
      if ((d * 100 + f) % 9 === 0) {
        body += "EXPORT_SYMBOL_GPL(thing);\nspin_lock_irqsave(&lock, flags);\n";
      }
      await Deno.writeTextFile(join(dir, `file${f}.${f % 3 === 0 ? "h" : "c"}`), body);
    }
  }
  await Deno.writeTextFile(join(root, ".done"), "");
  return root;
}

/** How a row of ours or a floor runs: which runtime, and under which flags. */
type Host = "node" | "deno -A" | "deno narrow";

interface Runner {
  readonly name: string;
  /** The command, given the tree's root (the narrow flags name it). */
  readonly command: (root: string) => Promise<string>;
  /** The process runs the search twice: its whole-process time is not comparable. */
  readonly repeat?: boolean;
  /**
   * Ours (the project's grep or glob) or a floor, and on which host;
   * `verified`: the floor that also does the path boundary's least (see
   * bench/floor_search.mjs), a reference row, not the floor.
   */
  readonly kind?: { readonly of: "ours" | "floor"; readonly host: Host; readonly verified?: true };
}

/**
 * The flags `denoPermissionFlags` returns for a session on `root`: the
 * user's configuration (README, "Under Deno's permission flags").
 */
async function narrowFlags(root: string): Promise<string[]> {
  const { denoPermissionFlags } = await import("../deno.ts");
  return denoPermissionFlags({ workingDirectory: root });
}

/** Deno's flags for a host: everything, or the narrow flags, plus reading `extra`. */
async function denoFlags(host: Host, root: string, extra: string[] = []): Promise<string> {
  if (host === "deno -A") return "-A";
  const flags = await narrowFlags(root);
  const quoted = flags.map((flag) =>
    flag.startsWith("--allow-read=") && extra.length > 0 ? `${flag},${extra.join(",")}` : flag
  );
  return quoted.map((flag) => `'${flag}'`).join(" ");
}

const ours = (host: Host, tail: string, repeat = false): Runner => ({
  name: `openwork-tools (${host}${repeat ? ", again" : ""})`,
  command: async (root) =>
    host === "node"
      ? `node ${repo}bench/run_search.mjs ${repo}npm/mod.js "$PWD" ${tail}${repeat ? " again" : ""}`
      : `deno run --quiet ${await denoFlags(
        host,
        root,
      )} ${repo}bench/run_search_deno.ts "$PWD" ${tail}${repeat ? " again" : ""}`,
  repeat,
  kind: { of: "ours", host },
});

const floor = (host: Host, tail: string, verified = false): Runner => ({
  name: `${host} floor${verified ? ", verified" : ""} (bench/floor_search.mjs)`,
  // The floor's workers run its own module: the narrow flags grant reading it besides.
  command: async (root) =>
    host === "node"
      ? `node ${repo}bench/floor_search.mjs "$PWD" ${tail}${verified ? " verified" : ""}`
      : `deno run --quiet ${await denoFlags(host, root, [
        `${repo}bench/floor_search.mjs`,
      ])} ${repo}bench/floor_search.mjs "$PWD" ${tail}${verified ? " verified" : ""}`,
  kind: verified ? { of: "floor", host, verified } : { of: "floor", host },
});

const plain = (name: string, command: string): Runner => ({
  name,
  command: () => Promise.resolve(command),
});

/** Ours on every host, first call and again, and the floors, for one case. */
function rows(tail: string, floorTail: string): Runner[] {
  const hosts: Host[] = ["node", "deno -A", "deno narrow"];
  return [
    ...hosts.flatMap((host) => [ours(host, tail), ours(host, tail, true)]),
    floor("node", floorTail),
    floor("deno narrow", floorTail),
    floor("deno narrow", floorTail, true),
  ];
}

interface Case {
  readonly name: string;
  readonly reference: Runner;
  readonly others: Runner[];
}

const CASES: Case[] = [
  {
    name: "grep files_with_matches EXPORT_SYMBOL_GPL",
    reference: plain(
      "rg -l --no-ignore --hidden",
      "rg -l --no-ignore --hidden EXPORT_SYMBOL_GPL | wc -l",
    ),
    others: [
      ...rows("grep EXPORT_SYMBOL_GPL files_with_matches", "grep EXPORT_SYMBOL_GPL"),
      plain("grep -rl", "grep -rl EXPORT_SYMBOL_GPL . | wc -l"),
    ],
  },
  {
    // The floor looks for the pattern's literal only: it reads every file as the search must.
    name: "grep count spin_lock_irq(save|restore)\\(",
    reference: plain(
      "rg -c --no-ignore --hidden",
      "rg -c --no-ignore --hidden 'spin_lock_irq(save|restore)\\(' | awk -F: '{s+=$NF} END {print s}'",
    ),
    others: rows("grep 'spin_lock_irq(save|restore)\\(' count", "grep spin_lock_irq"),
  },
  {
    name: "glob **/*.c",
    reference: plain("fdfind -g '*.c' --no-ignore -H", "fdfind -g '*.c' --no-ignore -H | wc -l"),
    others: rows("glob '**/*.c'", "glob .c"),
  },
];

interface Sample {
  seconds: number;
  /** The call alone, after start-up, where the runner reports it. */
  callSeconds: number | null;
  peakKiB: number;
  output: string;
}

async function measure(runner: Runner, cwd: string): Promise<Sample> {
  const started = performance.now();
  const { code, out } = await sh(
    // The command travels in the environment: no second layer of shell quoting.
    `/usr/bin/time -f '__peak %M' bash -c "$BENCH_COMMAND"`,
    cwd,
    { BENCH_COMMAND: await runner.command(cwd) },
  );
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${runner.name} failed: ${out}`);
  const peakKiB = Number(/__peak (\d+)/.exec(out)?.[1] ?? 0);
  const call = /\s*call ([\d.]+)/.exec(out);
  return {
    seconds,
    callSeconds: call === null ? null : Number(call[1]) / 1000,
    peakKiB,
    output: out.replace(/__peak \d+\s*/, "").replace(/\s*call [\d.]+/, "").trim().split("\n")
      .pop() ?? "",
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function runCorpus(label: string, root: string): Promise<void> {
  console.log(`\n## ${label}: ${root}`);
  console.log(
    `(warm cache, ${rounds} rounds, alternating; "whole" is the whole process including ` +
      `start-up, "call" the search alone inside an already started process, as a host runs it ` +
      `("again": the same search a second time in that process, its workers started and its ` +
      `code compiled); "ratio" and "call ratio" are to the reference tool's whole process; ` +
      `"call / Deno floor's" is a Deno row's call over the Deno floor's call under the narrow ` +
      `flags; "Deno / Node" a Deno row's call over the same row's call on Node)\n`,
  );
  console.log(
    "| case | tool | whole s | ratio | call s | call ratio | call / Deno floor's | " +
      "Deno / Node (call) | peak RSS MiB | result |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
  for (const c of CASES) {
    const runners = [c.reference, ...c.others];
    await measure(c.reference, root); // warm the page cache
    const samples = new Map<Runner, Sample[]>(runners.map((r) => [r, []]));
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? runners : [...runners].reverse();
      for (const runner of order) samples.get(runner)!.push(await measure(runner, root));
    }
    const reference = median(samples.get(c.reference)!.map((s) => s.seconds));
    const callOf = (runner: Runner | undefined) => {
      const calls = runner === undefined
        ? []
        : samples.get(runner)!.flatMap((s) => s.callSeconds === null ? [] : [s.callSeconds]);
      return calls.length === 0 ? null : median(calls);
    };
    const find = (of: "ours" | "floor", host: Host, repeat: boolean) =>
      c.others.find((r) =>
        r.kind?.of === of && r.kind.host === host && !!r.repeat === repeat && !r.kind.verified
      );
    const denoFloor = callOf(find("floor", "deno narrow", false));
    const ratio = (a: number | null, b: number | null) =>
      a === null || b === null ? "" : `${(a / b).toFixed(2)}x`;
    for (const runner of runners) {
      const list = samples.get(runner)!;
      const seconds = median(list.map((s) => s.seconds));
      const peak = Math.max(...list.map((s) => s.peakKiB)) / 1024;
      const call = callOf(runner);
      const kind = runner.kind;
      const deno = kind !== undefined && kind.host !== "node";
      // A Deno row against the same row on Node: ours, first call or again, or the floor.
      const node = deno && !kind.verified ? callOf(find(kind.of, "node", !!runner.repeat)) : null;
      console.log(
        `| ${c.name} | ${runner.name} | ${runner.repeat ? "—" : seconds.toFixed(3)} | ${
          runner.repeat ? "—" : `${(seconds / reference).toFixed(2)}x`
        } | ${call === null ? "" : call.toFixed(3)} | ${
          call === null ? "" : `${(call / reference).toFixed(2)}x`
        } | ${deno ? ratio(call, denoFloor) : ""} | ${deno ? ratio(call, node) : ""} | ${
          peak.toFixed(0)
        } | ${list[0].output} |`,
      );
    }
  }
}

await ensureTools([["rg", "ripgrep"], ["fdfind", "fd-find"], ["/usr/bin/time", "time"]]);
if (!Deno.args.includes("--kernel-only")) {
  await runCorpus("generated tree (20,000 files)", await generatedTree());
}
if (!Deno.args.includes("--generated-only")) {
  await runCorpus("Linux 6.1 source tree", await kernelTree());
}
