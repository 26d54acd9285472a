// The search that bench/run_search.mjs and bench/run_search_deno.mjs run as a
// whole process: the project's grep or glob on a tree, with the result cap
// lifted so that the whole tree is searched, as the reference tools do.
//
// Prints the number of results and, as "call N", the milliseconds the call
// took after start-up and module loading. With "again" after the arguments
// the search runs twice and "call" is the second run: a host that searches
// again, with its workers started and its code compiled.
//
// Arguments: ROOT grep PATTERN MODE [again] | ROOT glob PATTERN [again]

/** Runs the search the arguments name with `tools` (the package's exports). */
export async function runSearch(tools, args) {
  const { createSession, grepTool, globTool } = tools;
  const [root, tool, pattern] = args;
  const mode = tool === "grep" ? args[3] : undefined;
  const again = args.includes("again");
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

  if (again) await search();
  const started = performance.now();
  const found = await search();
  console.log(`${found} call ${(performance.now() - started).toFixed(1)}`);
}
