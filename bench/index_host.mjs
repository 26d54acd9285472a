// A long-running host for bench/search_index.ts: one session on a tree, with
// the search index on (or off with --no-index), answering searches read from
// standard input, as an agent's host keeps one session for many calls.
//
// Usage: index_host.mjs MODULE ROOT [--no-index]
//
// First line out: the start-up report, as JSON — whether the session has an
// index, the milliseconds from createSession to the index being ready, its
// stats(), the process's resident memory before createSession and after the
// build, and the longest the event loop was held up during the build (how
// late a 10 ms timer fired: a build that blocked calls would show here).
//
// Then one JSON command a line in, one JSON reply a line out:
//   {"tool":"grep"|"glob","input":{…},"list":true?}  runs the tool (result cap
//     lifted unless the input sets one); replies with the call's milliseconds,
//     the number of results, the skipped counts, whether the index answered,
//     and the results themselves when "list" is set or there are at most 50
//   {"tool":"stats"}  the index's stats() and the process's resident memory now
//   {"tool":"close"}  closes the index and ends the process
import process from "node:process";
import { createInterface } from "node:readline";

const [moduleUrl, root, flag] = process.argv.slice(2);
const { createSession, grepTool, globTool } = await import(moduleUrl);
const unlimited = Number.MAX_SAFE_INTEGER;

const reply = (value) => process.stdout.write(JSON.stringify(value) + "\n");

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
const session = await createSession({ workingDirectory: root, searchIndex: flag !== "--no-index" });
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
