/**
 * What long model-supplied strings cost before a tool runs, on a session in
 * a fresh temporary directory (the Deno backends), each case the median of
 * a few rounds:
 *
 * - `prepare` of `bash` with the 2 MB command `ls f0 … f249999`
 *   (invalid_input: bash cannot be started with it), the 94 KB command
 *   `ls f0 … f14999` (it asks), and the costliest command inside the bounds
 *   (operands up to the lookup budget);
 * - `grep` with a 1 MiB pattern (invalid_input), and compiling the costliest
 *   patterns inside the bounds (long literals, counted repetitions, Unicode
 *   and case-folded classes);
 * - `glob` and `grep --glob` with globs that backtrack on every name under
 *   a backtracking engine (`*?*?…x`, `+(a*)b`), over a tree of eight files;
 * - `read` of a missing path 2000 segments deep.
 *
 * Run: deno task bench:bounds [--rounds N]
 */
import { createSession, finalizeToolset, MAX_CLASSIFIER_LOOKUPS, type ToolResult } from "../mod.ts";
import { compileMatcher } from "../src/search/matcher.ts";
import {
  MAX_PATTERN_LENGTH,
  MAX_PATTERN_PROGRAM,
  programSize,
} from "../src/search/pattern_bounds.ts";

const at = Deno.args.indexOf("--rounds");
const rounds = at === -1 ? 5 : Number(Deno.args[at + 1]);
const dir = await Deno.makeTempDir({ prefix: "owt-bench-bounds-" });
await Deno.mkdir(`${dir}/src`);
for (const name of ["component_name_file.tsx.map", "a".repeat(60), "index.ts", "README.md"]) {
  await Deno.writeTextFile(`${dir}/${name}`, "hello\n");
  await Deno.writeTextFile(`${dir}/src/${name}`, "hello\n");
}
const session = await createSession({ workingDirectory: dir });
const toolset = finalizeToolset({ session });

/** The median time of `rounds` runs of `run`, in milliseconds. */
async function median(run: () => Promise<unknown> | unknown): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

function ls(operands: number): string {
  const words = ["ls"];
  for (let i = 0; i < operands; i++) words.push(`f${i}`);
  return words.join(" ");
}

function report(what: string, ms: number, note = ""): void {
  console.log(`${what.padEnd(64)} ${ms.toFixed(2).padStart(9)} ms  ${note}`);
}

function expect(result: ToolResult, ok: boolean, what: string): void {
  if (result.ok !== ok) throw new Error(`${what}: ${result.output.slice(0, 200)}`);
}

const twoMb = ls(250_000);
report(
  `bash prepare, ${twoMb.length} bytes (ls f0 … f249999, invalid_input)`,
  await median(() => toolset.prepare("bash", { command: twoMb })),
);
const long = ls(15_000);
report(
  `bash prepare, ${long.length} bytes (ls f0 … f14999, asks)`,
  await median(() => toolset.prepare("bash", { command: long })),
);
// Each missing operand costs three lookups: this one spends the whole budget.
const atBudget = ls(Math.floor(MAX_CLASSIFIER_LOOKUPS / 4));
report(
  `bash prepare, ${atBudget.length} bytes (${
    Math.floor(MAX_CLASSIFIER_LOOKUPS / 4)
  } missing operands)`,
  await median(() => toolset.prepare("bash", { command: atBudget })),
);

const huge = "a".repeat(1024 * 1024);
report(
  "grep call, 1 MiB pattern (invalid_input)",
  await median(async () =>
    expect(
      await toolset.call({ name: "grep", input: { pattern: huge }, callId: "g" }),
      false,
      "1 MiB",
    )
  ),
);

/** The longest repetition of `unit` inside both bounds. */
function fill(unit: string, caseInsensitive = false): string {
  let copies = 1;
  for (;;) {
    const next = unit.repeat(copies + 1);
    if (next.length > MAX_PATTERN_LENGTH) break;
    if (programSize(next, caseInsensitive) > MAX_PATTERN_PROGRAM) break;
    copies++;
  }
  return unit.repeat(copies);
}
const patterns: [string, string, boolean][] = [
  ["literal", fill("a"), false],
  ["alternation", fill("w1234|"), false],
  ["\\pL", fill("\\pL"), false],
  ["\\PL, case-folded", fill("\\PL", true), true],
  ["a{1000}", fill("(?:a{1000})"), false],
  ["a{0,1000}", fill("a{0,1000}"), false],
  [".{1000}", fill(".{1000}"), false],
  ["[0-9a-f]{64}", fill("[0-9a-f]{64}"), false],
  ["[a-zé]{1000}, case-folded", fill("[a-zé]{1000}", true), true],
  ["[\\x{100}-\\x{1E900}], case-folded", fill("[\\x{100}-\\x{1E900}]", true), true],
  ["[\\x{100}-\\x{200}], case-folded", fill("[\\x{100}-\\x{200}]", true), true],
];
let worst = 0;
let worstName = "";
for (const [name, pattern, caseInsensitive] of patterns) {
  const ms = await median(() => {
    const matcher = compileMatcher(pattern, { caseInsensitive });
    matcher.matchesLine("hello world");
    matcher.mayMatch("hello\nworld");
  });
  if (ms > worst) [worst, worstName] = [ms, name];
}
report(
  `grep compile, costliest pattern inside the bounds (${worstName})`,
  worst,
  `of ${patterns.length} shapes`,
);

for (const glob of ["*?".repeat(14) + "x", "+(a*)b"]) {
  report(
    `glob call, ${glob}`,
    await median(async () =>
      expect(
        await toolset.call({ name: "glob", input: { pattern: glob }, callId: "g" }),
        true,
        glob,
      )
    ),
  );
  report(
    `grep call, --glob ${glob}`,
    await median(async () =>
      expect(
        await toolset.call({ name: "grep", input: { pattern: "hello", glob }, callId: "g" }),
        true,
        glob,
      )
    ),
  );
}

const deep = Array(2000).fill("a").join("/");
report(
  "read call, missing path 2000 segments deep",
  await median(async () =>
    expect(await toolset.call({ name: "read", input: { path: deep }, callId: "r" }), false, "deep")
  ),
);

await session.processes.shutdown();
await Deno.remove(dir, { recursive: true });
