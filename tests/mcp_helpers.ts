/**
 * Starting the CLI's MCP server from a test: under Deno as `deno run cli.ts`,
 * against the npm build as `node cli.js`.
 */
import process from "node:process";
import { fileURLToPath } from "node:url";
import { underDeno } from "./helpers.ts";

/** How to start the CLI: `deno run cli.ts` under Deno, `node cli.js` against the npm build. */
export function cliCommand(): { command: string; args: string[] } {
  const source = import.meta.url.endsWith(".ts");
  const cli = fileURLToPath(new URL(source ? "../cli.ts" : "../cli.js", import.meta.url));
  if (underDeno) {
    // By name, as `--allow-run=deno` grants it.
    return {
      command: "deno",
      args: [
        "run",
        "--quiet",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-run=bash",
        cli,
      ],
    };
  }
  return { command: process.execPath, args: [cli] };
}

// The host's environment: the child runtime needs its package cache and certificate settings.
export const ENV: Record<string, string> = Object.fromEntries(
  Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
);
