/**
 * One search as a whole Deno process on the sources, for bench/search.ts:
 * see bench/search_call.mjs. The package is imported statically, so that the
 * process runs under flags that grant reading only the package's `src/`
 * (`denoPermissionFlags`): Deno asks read permission for a dynamic import.
 *
 * Usage: run_search_deno.ts ROOT grep PATTERN MODE [again] | ROOT glob PATTERN [again]
 */
import * as tools from "../mod.ts";
import { runSearch } from "./search_call.mjs";

await runSearch(tools, Deno.args);
