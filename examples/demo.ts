/**
 * A short host: a session on the current directory, the seven tools, and a
 * few calls printed as the model would see them.
 *
 * Run: deno task demo
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
