/**
 * What the PID namespace and the sandbox cost a bash call: the tool's wall
 * time for `true` and for `git status` (in this repository) in three
 * sessions, alternating them call by call: `plain` (`processNamespace:
 * false`, the marker sweep alone), `namespaced` (the default: each call in
 * a PID namespace of its own) and `sandboxed` (`sandbox: true`); median and
 * p90 of each.
 *
 * Run: deno task bench:sandbox [--runs N]
 */
import { fileURLToPath } from "node:url";
import { createSession, finalizeToolset } from "../mod.ts";
import type { FinalizedToolset } from "../mod.ts";

const repo = fileURLToPath(new URL("..", import.meta.url));
const at = Deno.args.indexOf("--runs");
const runs = at === -1 ? 50 : Number(Deno.args[at + 1]);

const toolsets: Record<string, FinalizedToolset> = {
  plain: finalizeToolset({
    session: await createSession({ workingDirectory: repo, processNamespace: false }),
  }),
  namespaced: finalizeToolset({ session: await createSession({ workingDirectory: repo }) }),
  sandboxed: finalizeToolset({
    session: await createSession({ workingDirectory: repo, sandbox: true }),
  }),
};

async function once(toolset: FinalizedToolset, command: string): Promise<number> {
  const started = performance.now();
  const result = await toolset.call({
    name: "bash",
    input: { command },
    callId: "bench",
    signal: new AbortController().signal,
    approve: () => Promise.resolve(true),
  });
  const took = performance.now() - started;
  if (!result.ok) throw new Error(`${command}: ${JSON.stringify(result.error)}`);
  return took;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

for (const command of ["true", "git status"]) {
  const times: Record<string, number[]> = Object.fromEntries(
    Object.keys(toolsets).map((name) => [name, []]),
  );
  for (const name of Object.keys(toolsets)) await once(toolsets[name], command); // warm-up
  for (let i = 0; i < runs; i++) {
    for (const name of Object.keys(toolsets)) times[name].push(await once(toolsets[name], command));
  }
  for (const [name, list] of Object.entries(times)) {
    list.sort((a, b) => a - b);
    console.log(
      `${command.padEnd(10)} ${name.padEnd(10)} median ${quantile(list, 0.5).toFixed(1)} ms, ` +
        `p90 ${quantile(list, 0.9).toFixed(1)} ms (${runs} runs)`,
    );
  }
}
if (toolsets.namespaced.session.processEnding !== "pid-namespace") {
  console.log("(no PID namespace could be had here: namespaced ran by the marker sweep)");
}
for (const toolset of Object.values(toolsets)) await toolset.session.processes.shutdown();
