// One search as a whole process, for bench/search.ts: the project's grep or
// glob on a tree, with the result cap lifted so that the whole tree is
// searched, as the reference tools do. Prints the number of results.
//
// Prints the number of results and, as "call N", the milliseconds the call took
// (after start-up and module loading).
//
// Usage: run_search.mjs MODULE ROOT grep PATTERN MODE | glob PATTERN
const [moduleUrl, root, tool, pattern, mode] = process.argv.slice(2);
const { createSession, grepTool, globTool } = await import(moduleUrl);
const session = await createSession({ workingDirectory: root });
const call = { callId: "bench", signal: new AbortController().signal };
const unlimited = Number.MAX_SAFE_INTEGER;
const started = performance.now();
const took = () => `call ${(performance.now() - started).toFixed(1)}`;
if (tool === "grep") {
  const { data } = await grepTool.execute({ pattern, mode, max_results: unlimited }, session, call);
  const found = mode === "count"
    ? data.counts.reduce((sum, c) => sum + c.count, 0)
    : data.files.length;
  console.log(`${found} (skipped ${JSON.stringify(data.skipped)}) ${took()}`);
} else {
  const { data } = await globTool.execute({ pattern, max_results: unlimited }, session, call);
  console.log(`${data.paths.length} ${took()}`);
}
