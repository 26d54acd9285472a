// A long-running host for bench/search_index.ts: one session on a tree, with
// the search index on (or off with --no-index), answering searches read from
// standard input, as an agent's host keeps one session for many calls.
//
// Usage: index_host.mjs MODULE ROOT [--no-index] [--cache=DIR] [--warm]
//
// With --cache=DIR the index is cached in DIR (a session that finds a cache
// there loads it); without, it is built from the tree and kept in memory.
// With --warm a walk search runs first, so that the search workers are
// running before the resident memory before createSession is taken.
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
import { serveIndexHost } from "./index_serve.mjs";

const [moduleUrl, ...args] = process.argv.slice(2);
await serveIndexHost(await import(moduleUrl), args);
