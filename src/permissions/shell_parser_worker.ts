/**
 * The worker that parses command lines for the read-only classifier under
 * Node (see `parseLiteralCommands`).
 *
 * @module
 */
import { parentPort } from "node:worker_threads";
import { parseHere } from "./shell_parser.ts";

parentPort?.on("message", async ({ id, line }: { id: number; line: string }) => {
  parentPort!.postMessage({ id, parsed: await parseHere(line) });
});
