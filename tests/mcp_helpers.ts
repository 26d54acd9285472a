/**
 * Starting the CLI (and its MCP server) from a test: under Deno as `deno
 * task cli` runs it, against the npm build as `node cli.js`.
 */
import process from "node:process";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO_DIR, underDeno } from "./helpers.ts";

/**
 * The permission flags of `deno task cli`, read from `deno.json`: the tests
 * run the command as the task does.
 */
export function cliTaskFlags(): string[] {
  const config = JSON.parse(readFileSync(new URL("../deno.json", import.meta.url), "utf8")) as {
    tasks: Record<string, string>;
  };
  const words = config.tasks.cli.split(/\s+/);
  assert.deepEqual([words[0], words[1], words.at(-1)], ["deno", "run", "cli.ts"]);
  return words.slice(2, -1);
}

/** The CLI's entry file: `cli.ts` in the sources, `cli.js` in the npm build. */
export function cliPath(): string {
  const source = import.meta.url.endsWith(".ts");
  return fileURLToPath(new URL(source ? "../cli.ts" : "../cli.js", import.meta.url));
}

/**
 * How to start the CLI: `deno run` with the flags of `deno task cli` under
 * Deno, `node cli.js` against the npm build.
 */
export function cliCommand(): { command: string; args: string[] } {
  const cli = cliPath();
  if (underDeno) {
    // By name, as `--allow-run=deno` grants it.
    return { command: "deno", args: ["run", "--quiet", ...cliTaskFlags(), cli] };
  }
  return { command: process.execPath, args: [cli] };
}

// The host's environment: the child runtime needs its package cache and certificate settings.
export const ENV: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] =>
      entry[1] !== undefined
    ),
  ),
  // The servers keep a search index by default, and its cache between processes: in a directory
  // of the test run's own, not the user's, removed when the run ends.
  XDG_CACHE_HOME: testCache(),
  DENO_DIR,
};

/** A new directory for the caches of the servers the tests start, removed at exit. */
function testCache(): string {
  const directory = mkdtempSync(join(tmpdir(), "openwork-test-cache-"));
  process.once("exit", () => rmSync(directory, { recursive: true, force: true }));
  return directory;
}
