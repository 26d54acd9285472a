#!/usr/bin/env node
/**
 * The `openwork-tools` command. Under Deno: `deno task cli …`; in the npm
 * package this file is the `openwork-tools` bin.
 *
 * @module
 */
import process from "node:process";
import { main } from "./src/cli/main.ts";
import { exitOnRefusal } from "./src/cli/refusal.ts";

// A permission the runtime refuses where no command can catch it is one line too, not a crash.
process.on("uncaughtExceptionMonitor", exitOnRefusal);
process.exitCode = await main(process.argv.slice(2));
