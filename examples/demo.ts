/**
 * A short host: a session on the current directory, the seven tools, and a
 * few calls printed as the model would see them.
 *
 * Run: deno task demo. Its flags are narrower than the ones
 * `denoPermissionFlags` gives this directory: read of the repository (its
 * sources too, for the search workers) and of the descriptor link, write of
 * the link only (the demo writes nothing and builds no index), and the whole
 * environment (a task cannot name `HOST_VARIABLES` without a copy of it).
 */
import { createSession, finalizeToolset } from "../mod.ts";

const session = await createSession({ workingDirectory: Deno.cwd() });
const toolset = finalizeToolset({ session });
console.log("tools:", toolset.definitions.map((d) => d.name).join(", "));

const turn = new AbortController();
const calls = [
  { name: "list", input: {} },
  { name: "grep", input: { pattern: "export function", mode: "count", max_results: 5 } },
  { name: "bash", input: { command: "git log --oneline -3 || true" } },
];
for (const [i, { name, input }] of calls.entries()) {
  const prepared = await toolset.prepare(name, input);
  const result = await toolset.execute(prepared, { callId: `demo-${i}`, signal: turn.signal });
  console.log(`\n$ ${name} ${JSON.stringify(input)}  (${result.ok ? "ok" : result.error.code})`);
  console.log(result.output);
}
