// One search as a whole process on a built module (Node on npm/mod.js), for
// bench/search.ts: see bench/search_call.mjs.
//
// Usage: run_search.mjs MODULE ROOT grep PATTERN MODE [again] | MODULE ROOT glob PATTERN [again]
import { runSearch } from "./search_call.mjs";

const [moduleUrl, ...args] = process.argv.slice(2);
await runSearch(await import(moduleUrl), args);
