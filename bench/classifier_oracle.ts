/**
 * The read-only classifier against bash at scale: generates N adversarial
 * command lines from a seed, runs those the classifier calls read-only in
 * bash with recording stubs (tests/shell_oracle.ts), and prints how many were
 * generated, called read-only and executed, the number of differences and
 * the first 20 of them. It first prints the classifier's latency on a typical
 * command: the first call in the process and the median of warm calls.
 *
 * Run: deno task bench:classifier [LINES=100000] [SEED=today's UTC date] [LC_ALL=C]
 *
 * A seed reproduces its lines as long as the whitelist tables in
 * src/permissions/programs.ts are unchanged (the generator draws options from them).
 */
import { fileURLToPath } from "node:url";
import { classifyCommand, createSession } from "../mod.ts";
import { dailySeed, formatDifference, generateLines, runOracle } from "../tests/shell_oracle.ts";

const count = Number(Deno.args[0] ?? 100_000);
const seed = Number(Deno.args[1] ?? dailySeed());
const locale = Deno.args[2] ?? "C";
if (!Number.isInteger(count) || count < 1 || !Number.isInteger(seed)) {
  console.error("usage: bench/classifier_oracle.ts [LINES] [SEED] [LC_ALL]");
  Deno.exit(2);
}

// Latency first, while the process is fresh: the first call includes whatever the
// classifier sets up lazily. The session is this repository, so `src` exists.
const repo = fileURLToPath(new URL("..", import.meta.url));
const session = await createSession({
  workingDirectory: repo,
  environment: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: repo, LC_ALL: "C" },
});
const typical = "grep -rn TODO src | head -20";
let started = performance.now();
const first = await classifyCommand(typical, session);
const firstMs = performance.now() - started;
const warm: number[] = [];
for (let i = 0; i < 2000; i++) {
  started = performance.now();
  await classifyCommand(typical, session);
  warm.push(performance.now() - started);
}
warm.sort((a, b) => a - b);
console.log(`classification of ${JSON.stringify(typical)} (read-only: ${first.readOnly}):`);
console.log(
  `  first call ${firstMs.toFixed(3)} ms; warm calls (2000): median ${
    warm[warm.length >> 1].toFixed(3)
  } ms, p99 ${warm[Math.floor(warm.length * 0.99)].toFixed(3)} ms`,
);

console.log(`generating ${count} lines from seed ${seed}; bash runs with LC_ALL=${locale}`);
const lines = generateLines(seed, count);
const step = Math.max(1000, Math.floor(count / 20));
const report = await runOracle(lines, {
  locale,
  onProgress: (done) => {
    if (done % step === 0) console.error(`  ${done}/${count} lines`);
  },
});
console.log(`lines generated:         ${report.lines}`);
console.log(`classified read-only:    ${report.readOnly}`);
console.log(`executed (bash runs):    ${report.executed} (${report.runs})`);
console.log(`differences:             ${report.differences.length}`);
console.log(`elapsed:                 ${(report.elapsedMs / 1000).toFixed(1)} s`);
for (const difference of report.differences.slice(0, 20)) {
  console.log(`\n${formatDifference(difference)}`);
}
