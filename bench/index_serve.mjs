// The long-running host of bench/search_index.ts, shared by bench/index_host.mjs
// (a built module, imported by URL) and bench/index_host_deno.ts (the sources,
// imported statically, so that it runs under the flags denoPermissionFlags
// returns: Deno asks read permission for a dynamic import). What it prints and
// reads: see bench/index_host.mjs.
import process from "node:process";
import { createInterface } from "node:readline";

/**
 * Serves the host on `tools` (the package's exports) with the arguments
 * ROOT [--no-index] [--cache=DIR] [--warm]: the index's cache directory
 * (default none: the index is built from the tree, and kept in memory only);
 * with --warm, a session without an index runs one walk search first, so
 * that the process's search workers are running before the resident memory
 * is taken as the baseline (as in a host that searched before).
 */
export async function serveIndexHost(tools, args) {
  const [root, ...flags] = args;
  const indexed = !flags.includes("--no-index");
  const cache = flags.find((flag) => flag.startsWith("--cache="))?.slice("--cache=".length) ?? null;
  const { createSession, grepTool, globTool } = tools;
  const unlimited = Number.MAX_SAFE_INTEGER;

  const reply = (value) => process.stdout.write(JSON.stringify(value) + "\n");

  if (flags.includes("--warm")) {
    // One walk search, stopped at its first match: the shared search workers start, and stay.
    const plain = await createSession({ workingDirectory: root, searchIndex: false });
    await grepTool.execute(
      { pattern: "e", mode: "files_with_matches", max_results: 1 },
      plain,
      { callId: "warm", signal: new AbortController().signal },
    );
  }

  const rssBefore = process.memoryUsage().rss;
  const TICK = 10;
  let stall = 0;
  let stalls = 0;
  let tick = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    const late = now - tick - TICK;
    stall = Math.max(stall, late);
    if (late > 50) stalls++;
    tick = now;
  }, TICK);
  const started = performance.now();
  const session = await createSession({
    workingDirectory: root,
    searchIndex: indexed && { cacheDirectory: cache },
  });
  const index = session.searchIndex ?? null;
  let error = null;
  if (index !== null) {
    try {
      await index.ready;
    } catch (cause) {
      error = String(cause?.message ?? cause);
    }
  }
  const buildMs = performance.now() - started;
  clearInterval(ticker);
  reply({
    index: index !== null,
    buildMs: index === null ? null : buildMs,
    stats: index?.stats() ?? null,
    rssBefore,
    rssAfter: process.memoryUsage().rss,
    stallMs: stall,
    stalls,
    error,
  });

  const searches = () => index?.stats().searches ?? { indexed: 0, walked: 0 };

  async function run(command) {
    const call = { callId: "bench", signal: new AbortController().signal };
    const input = { max_results: unlimited, ...command.input };
    const before = searches();
    const at = performance.now();
    let results;
    let skipped = null;
    if (command.tool === "grep") {
      const { data } = await grepTool.execute(input, session, call);
      results = data.mode === "count"
        ? data.counts.map((c) => `${c.path}:${c.count}`)
        : data.mode === "files_with_matches"
        ? data.files
        : data.lines.map((l) => `${l.path}:${l.line}`);
      skipped = data.skipped;
    } else {
      const { data } = await globTool.execute(input, session, call);
      results = data.paths;
    }
    const ms = performance.now() - at;
    const after = searches();
    const found = command.tool === "grep" && input.mode === "count"
      ? results.reduce((sum, entry) => sum + Number(entry.slice(entry.lastIndexOf(":") + 1)), 0)
      : results.length;
    return {
      ms,
      found,
      files: results.length,
      skipped,
      indexed: after.indexed > before.indexed,
      walked: after.walked > before.walked,
      results: command.list || results.length <= 50 ? results : undefined,
    };
  }

  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    const command = JSON.parse(line);
    if (command.tool === "close") break;
    if (command.tool === "stats") {
      reply({ stats: index?.stats() ?? null, rss: process.memoryUsage().rss });
      continue;
    }
    try {
      reply(await run(command));
    } catch (cause) {
      reply({ error: String(cause?.stack ?? cause) });
    }
  }
  lines.close();
  await index?.close();
  process.exit(0);
}
