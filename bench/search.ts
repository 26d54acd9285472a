/**
 * grep and glob against ripgrep, GNU grep and fd, in one run, alternating,
 * whole processes: medians, ratios to the reference tool, peak memory.
 *
 * Run: deno task bench:search [--kernel DIR] [--rounds N] [--generated-only]
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

interface Runner {
  readonly name: string;
  readonly command: string;
  /** The process runs the search twice: its whole-process time is not comparable. */
  readonly repeat?: boolean;
}

const ours = (runtime: "node" | "deno", tail: string, repeat = false): Runner => ({
  name: `openwork-tools (${runtime}${repeat ? ", again" : ""})`,
  command: (repeat ? "REPEAT=1 " : "") +
    (runtime === "node"
      ? `node ${repo}bench/run_search.mjs ${repo}npm/mod.js "$PWD" ${tail}`
      : `deno run --quiet --allow-read --allow-env ${repo}bench/run_search.mjs file://${repo}mod.ts "$PWD" ${tail}`),
  repeat,
});

const floor = (runtime: "node" | "deno", tail: string): Runner => ({
  name: `${runtime} floor (bench/floor_search.mjs)`,
  command: runtime === "node"
    ? `node ${repo}bench/floor_search.mjs "$PWD" ${tail}`
    : `deno run --quiet --allow-read ${repo}bench/floor_search.mjs "$PWD" ${tail}`,
});

interface Case {
  readonly name: string;
  readonly reference: Runner;
  readonly others: Runner[];
}

const CASES: Case[] = [
  {
    name: "grep files_with_matches EXPORT_SYMBOL_GPL",
    reference: {
      name: "rg -l --no-ignore --hidden",
      command: "rg -l --no-ignore --hidden EXPORT_SYMBOL_GPL | wc -l",
    },
    others: [
      ours("node", "grep EXPORT_SYMBOL_GPL files_with_matches"),
      ours("node", "grep EXPORT_SYMBOL_GPL files_with_matches", true),
      ours("deno", "grep EXPORT_SYMBOL_GPL files_with_matches"),
      ours("deno", "grep EXPORT_SYMBOL_GPL files_with_matches", true),
      floor("node", "grep EXPORT_SYMBOL_GPL"),
      floor("deno", "grep EXPORT_SYMBOL_GPL"),
      { name: "grep -rl", command: "grep -rl EXPORT_SYMBOL_GPL . | wc -l" },
    ],
  },
  {
    name: "grep count spin_lock_irq(save|restore)\\(",
    reference: {
      name: "rg -c --no-ignore --hidden",
      command:
        "rg -c --no-ignore --hidden 'spin_lock_irq(save|restore)\\(' | awk -F: '{s+=$NF} END {print s}'",
    },
    others: [
      ours("node", "grep 'spin_lock_irq(save|restore)\\(' count"),
      ours("node", "grep 'spin_lock_irq(save|restore)\\(' count", true),
      ours("deno", "grep 'spin_lock_irq(save|restore)\\(' count"),
      ours("deno", "grep 'spin_lock_irq(save|restore)\\(' count", true),
    ],
  },
  {
    name: "glob **/*.c",
    reference: {
      name: "fdfind -g '*.c' --no-ignore -H",
      command: "fdfind -g '*.c' --no-ignore -H | wc -l",
    },
    others: [
      ours("node", "glob '**/*.c'"),
      ours("node", "glob '**/*.c'", true),
      ours("deno", "glob '**/*.c'"),
      ours("deno", "glob '**/*.c'", true),
      floor("node", "glob .c"),
      floor("deno", "glob .c"),
    ],
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
    { BENCH_COMMAND: runner.command },
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
      `code compiled); both ratios are to the reference tool's whole process)\n`,
  );
  console.log(
    "| case | tool | whole s | ratio | call s | call ratio | peak RSS MiB | result |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---|");
  for (const c of CASES) {
    const runners = [c.reference, ...c.others];
    await measure(c.reference, root); // warm the page cache
    const samples = new Map<Runner, Sample[]>(runners.map((r) => [r, []]));
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? runners : [...runners].reverse();
      for (const runner of order) samples.get(runner)!.push(await measure(runner, root));
    }
    const reference = median(samples.get(c.reference)!.map((s) => s.seconds));
    for (const runner of runners) {
      const list = samples.get(runner)!;
      const seconds = median(list.map((s) => s.seconds));
      const peak = Math.max(...list.map((s) => s.peakKiB)) / 1024;
      const calls = list.flatMap((s) => s.callSeconds === null ? [] : [s.callSeconds]);
      const call = calls.length === 0 ? null : median(calls);
      console.log(
        `| ${c.name} | ${runner.name} | ${runner.repeat ? "—" : seconds.toFixed(3)} | ${
          runner.repeat ? "—" : `${(seconds / reference).toFixed(2)}x`
        } | ${call === null ? "" : call.toFixed(3)} | ${
          call === null ? "" : `${(call / reference).toFixed(2)}x`
        } | ${peak.toFixed(0)} | ${list[0].output} |`,
      );
    }
  }
}

await ensureTools([["rg", "ripgrep"], ["fdfind", "fd-find"], ["/usr/bin/time", "time"]]);
await runCorpus("generated tree (20,000 files)", await generatedTree());
if (!Deno.args.includes("--generated-only")) {
  await runCorpus("Linux 6.1 source tree", await kernelTree());
}
