import * as tools from "../mod.ts";
const [root, tool, pattern, mode, wait] = Deno.args;
const session = await tools.createSession({ workingDirectory: root });
if (wait !== "0") { session.filesystem.prepareSearch?.(); await new Promise((r) => setTimeout(r, Number(wait))); }
const call = { callId: "b", signal: new AbortController().signal };
const t = performance.now();
const r = tool === "grep" ? await tools.grepTool.execute({ pattern, mode, max_results: 1e15 } as never, session, call) : await tools.globTool.execute({ pattern, max_results: 1e15 } as never, session, call);
console.log(`call ${(performance.now() - t).toFixed(1)}`);
