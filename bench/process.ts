/**
 * The bash tool's process costs, per runtime (Deno backend under Deno, Node
 * backend from the npm build under Node), in one run:
 *
 * - peak memory of the whole process while `yes` runs for 10 s, against the
 *   same process idle for 10 s (target: less than 32 MiB above idle);
 * - drain throughput of `head -c 2G /dev/zero` through the tool against
 *   `head -c 2G /dev/zero | cat > /dev/null`, alternating (target: ≥ 0.5x);
 * - time from abort to result for `sleep 1000` (target: < 50 ms) and for a
 *   loop that ignores SIGTERM (target: < grace + 50 ms; grace is 1000 ms).
 *
 * Run: deno task bench:process [--rounds N]
 */
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("..", import.meta.url));
const at = Deno.args.indexOf("--rounds");
const rounds = at === -1 ? 5 : Number(Deno.args[at + 1]);
const dir = await Deno.makeTempDir({ prefix: "owt-bench-process-" });

async function sh(script: string): Promise<string> {
  const { code, stdout, stderr } = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd: repo,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  if (code !== 0) throw new Error(`${script}: ${new TextDecoder().decode(stderr)}`);
  return new TextDecoder().decode(stdout);
}

if (!(await sh("test -f npm/mod.js && echo yes || true")).includes("yes")) {
  await sh("deno task build:npm --no-checks");
}

const runtimes = {
  deno: (scenario: string) =>
    `deno run --quiet --allow-read --allow-env --allow-run=bash bench/run_process.mjs file://${repo}mod.ts ${dir} ${scenario}`,
  node: (scenario: string) => `node bench/run_process.mjs ${repo}npm/mod.js ${dir} ${scenario}`,
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
const run = async (command: string) => JSON.parse((await sh(command)).trim().split("\n").pop()!);

console.log("| measure | runtime | value | reference | ratio / margin | target |");
console.log("|---|---|---:|---:|---:|---|");
for (const [name, command] of Object.entries(runtimes)) {
  const idle = (await run(command("idle"))).peakMiB;
  const yes = (await run(command("yes"))).peakMiB;
  console.log(
    `| peak RSS, yes for 10 s | ${name} | ${yes.toFixed(1)} MiB | idle ${idle.toFixed(1)} MiB | ${
      yes >= idle ? "+" : "−"
    }${Math.abs(yes - idle).toFixed(1)} MiB | < +32 MiB |`,
  );

  const ours: number[] = [];
  const reference: number[] = [];
  for (let round = 0; round < Math.max(3, Math.min(rounds, 5)); round++) {
    const tool = await run(command("drain"));
    ours.push(tool.bytes / tool.seconds);
    const started = performance.now();
    await sh("head -c 2G /dev/zero | cat > /dev/null");
    reference.push(2 ** 31 / ((performance.now() - started) / 1000));
  }
  const gib = (v: number) => `${(v / 2 ** 30).toFixed(2)} GiB/s`;
  console.log(
    `| drain head -c 2G /dev/zero | ${name} | ${gib(median(ours))} | ${gib(median(reference))} | ${
      (median(ours) / median(reference)).toFixed(2)
    }x | ≥ 0.5x |`,
  );

  for (const [scenario, target] of [["abort-sleep", "< 50 ms"], ["abort-trap", "< 1050 ms"]]) {
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) times.push((await run(command(scenario))).ms);
    console.log(
      `| abort → result, ${
        scenario === "abort-sleep" ? "sleep 1000" : "trap '' TERM loop"
      } | ${name} | ${median(times).toFixed(1)} ms (median of ${rounds}) | | max ${
        Math.max(...times).toFixed(1)
      } ms | ${target} |`,
    );
  }
}
await Deno.remove(dir, { recursive: true });
