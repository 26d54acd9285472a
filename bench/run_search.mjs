// One search as a whole process, for bench/search.ts: the project's grep or
// glob on a tree, with the result cap lifted so that the whole tree is
// searched, as the reference tools do.
//
// Prints the number of results and, as "call N", the milliseconds the call
// took after start-up and module loading. With REPEAT=1 in the environment
// the search runs twice and "call" is the second run: a host that searches
// again, with its workers started and its code compiled.
//
// Usage: run_search.mjs MODULE ROOT grep PATTERN MODE | glob PATTERN
const [moduleUrl, root, tool, pattern, mode] = process.argv.slice(2);
const { createSession, grepTool, globTool } = await import(moduleUrl);
const session = await createSession({ workingDirectory: root });
const call = { callId: "bench", signal: new AbortController().signal };
const unlimited = Number.MAX_SAFE_INTEGER;

async function search() {
  if (tool === "grep") {
    const { data } = await grepTool.execute(
      { pattern, mode, max_results: unlimited },
      session,
      call,
    );
    const found = mode === "count"
      ? data.counts.reduce((sum, c) => sum + c.count, 0)
      : data.files.length;
    return `${found} (skipped ${JSON.stringify(data.skipped)})`;
  }
  const { data } = await globTool.execute({ pattern, max_results: unlimited }, session, call);
  return `${data.paths.length}`;
}

if (process.env.REPEAT === "1") await search();
const started = performance.now();
const found = await search();
console.log(`${found} call ${(performance.now() - started).toFixed(1)}`);
