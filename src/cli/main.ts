/**
 * The command-line interface: `call`, `tools`, `mcp`, `help` and `version`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { createSession } from "../session.ts";
import { finalizeToolset } from "../finalize.ts";
import { toAnthropicTools, toOpenAITools } from "../contract/converters.ts";
import type { FinalizedToolset } from "../contract/toolset.ts";
import type { PermissionMode } from "../contract/context.ts";
import type { McpServerOptions } from "../mcp/server.ts";
import { EXIT, runCallCommand } from "./call.ts";
import { refusalLine } from "./refusal.ts";
import { HELP, USAGE } from "./help.ts";
import { VERSION } from "./version.ts";

class UsageError extends Error {}

const MODES: readonly PermissionMode[] = ["default", "acceptEdits", "plan"];

async function toolsetFor(
  values: {
    root?: string;
    "skill-root"?: string;
    mode?: string;
    "search-index"?: boolean;
    sandbox?: boolean;
  },
  shared?: FinalizedToolset["session"]["filesystem"],
): Promise<FinalizedToolset> {
  const mode = (values.mode ?? "default") as PermissionMode;
  if (!MODES.includes(mode)) {
    throw new UsageError(`--mode must be one of ${MODES.join(", ")}, not ${values.mode}`);
  }
  if (values.root === "") throw new UsageError("--root must not be empty");
  const root = values.root ?? process.cwd();
  const absolute = root.startsWith("/") ? root : `${process.cwd()}/${root}`;
  try {
    const session = await createSession({
      workingDirectory: absolute,
      permissions: { mode },
      skillRoot: values["skill-root"] ?? null,
      // A file system shared with another session brings that session's index, if it has one.
      searchIndex: shared === undefined && values["search-index"] === true,
      ...(shared === undefined ? {} : { filesystem: shared }),
      ...(values.sandbox === true ? { sandbox: true } : {}),
    });
    return finalizeToolset({ session });
  } catch (error) {
    if (refusalLine(error) !== null) throw error;
    throw new UsageError((error as Error).message.replace(/^createSession: /, ""));
  }
}

/**
 * Reads standard input to its end as UTF-8; bytes that are not UTF-8 are a
 * usage error, not replaced (a command or path would change unseen).
 */
async function readStdin(): Promise<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let text = "";
  try {
    for await (const chunk of process.stdin) {
      text += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    }
    return text + decoder.decode();
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError("standard input is not valid UTF-8");
    throw error;
  }
}

/** `call NAME JSON|-`: parses the input, then runs the call. */
async function runCall(
  positionals: string[],
  values: {
    root?: string;
    "skill-root"?: string;
    mode?: string;
    json?: boolean;
    yes?: boolean;
    sandbox?: boolean;
  },
): Promise<number> {
  const [name, json, ...extra] = positionals;
  if (name === undefined || json === undefined || extra.length > 0) {
    throw new UsageError(
      "call takes a tool name and one JSON argument (or - to read it from stdin)",
    );
  }
  const fromStdin = json === "-";
  const text = fromStdin ? await readStdin() : json;
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (error) {
    const what = fromStdin ? "the JSON from stdin" : "the JSON argument";
    throw new UsageError(`${what} does not parse: ${(error as Error).message}`);
  }
  const toolset = await toolsetFor(values);
  return await runCallCommand(toolset, name, input, {
    json: values.json === true,
    yes: values.yes === true,
    inputFromStdin: fromStdin,
  });
}

/** `mcp --http`: one toolset per MCP session, made as `toolset` was; serves until SIGTERM or SIGINT. */
async function runHttp(
  address: string,
  token: string | undefined,
  toolset: FinalizedToolset,
  values: Parameters<typeof toolsetFor>[0],
  decided: Pick<McpServerOptions, "approval" | "fullArtifacts">,
): Promise<number> {
  const { parseListenAddress, serveHttp } = await import("../mcp/http.ts");
  let listen;
  try {
    listen = parseListenAddress(address);
  } catch (error) {
    throw new UsageError(`--http: ${(error as Error).message}`);
  }
  const given = token ?? (process.env.OPENWORK_MCP_TOKEN || undefined);
  if (given === "") throw new UsageError("--token must not be empty");
  // The toolset made to check the options goes to the first session; every session shares its
  // file system, and so its search index: one index of the root, whatever the sessions.
  let first: FinalizedToolset | undefined = toolset;
  const shared = toolset.session.filesystem;
  // Listened for before the address is announced: whoever reads it may stop the server at once.
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  try {
    const served = await serveHttp(async () => {
      const made = first ?? await toolsetFor(values, shared);
      first = undefined;
      return made;
    }, {
      ...listen,
      ...decided,
      token: given,
      name: "openwork-tools",
      version: VERSION,
      // No toolsetForRoot: over HTTP every request, 2026-07-28 or a 2025 session, runs in the
      // server's own directory; a request that names another (_meta["openwork/root"]) is served
      // in this one. Anyone holding the token could otherwise pick any directory, `/` included.
    });
    process.stderr.write(`openwork-tools: MCP over HTTP at ${served.url}\n`);
    if (given === undefined) {
      process.stderr.write(`openwork-tools: bearer token ${served.token}\n`);
    }
    await stopped;
    await served.close();
  } finally {
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  }
  await first?.session.processes.shutdown();
  await toolset.session.searchIndex?.close();
  return 0;
}

/**
 * Runs the CLI with `args` (without the program name) and resolves the exit
 * code. Usage errors, and permissions the runtime refuses (see
 * `refusal.ts`), print one line to stderr and give 2.
 */
export async function main(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  try {
    if (command === undefined) {
      process.stderr.write(USAGE + "\n");
      return EXIT.usage;
    }
    if (command === "-h" || command === "--help") {
      process.stdout.write(USAGE + "\n");
      return EXIT.ok;
    }
    if (command === "--version" || command === "-V") {
      process.stdout.write(`${VERSION}\n`);
      return EXIT.ok;
    }
    if (!Object.hasOwn(HELP, command)) {
      throw new UsageError(`unknown command ${JSON.stringify(command)}; try --help`);
    }
    let parsed;
    try {
      parsed = parseArgs({
        args: [...rest],
        allowPositionals: true,
        strict: true,
        options: {
          help: { type: "boolean", short: "h" },
          root: { type: "string" },
          "skill-root": { type: "string" },
          mode: { type: "string" },
          format: { type: "string" },
          json: { type: "boolean" },
          yes: { type: "boolean", short: "y" },
          approval: { type: "string" },
          "full-artifacts": { type: "boolean" },
          http: { type: "string" },
          token: { type: "string" },
          "search-index": { type: "boolean" },
          "no-search-index": { type: "boolean" },
          sandbox: { type: "boolean" },
        },
      });
    } catch (error) {
      throw new UsageError((error as Error).message.split(". ")[0]);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      process.stdout.write(HELP[command] + "\n");
      return EXIT.ok;
    }
    if (command === "help") {
      const [topic, ...more] = positionals;
      if (topic !== undefined && (!Object.hasOwn(HELP, topic) || more.length > 0)) {
        throw new UsageError(`help takes one command: ${Object.keys(HELP).join(", ")}`);
      }
      process.stdout.write((topic === undefined ? USAGE : HELP[topic]) + "\n");
      return EXIT.ok;
    }
    if (command === "version") {
      if (positionals.length > 0) throw new UsageError("version takes no arguments");
      process.stdout.write(`${VERSION}\n`);
      return EXIT.ok;
    }
    if (command !== "call" && values.json) throw new UsageError("--json is an option of call");
    if (command !== "call" && values.yes) throw new UsageError("--yes is an option of call");
    if (command !== "mcp" && values.approval !== undefined) {
      throw new UsageError("--approval is an option of mcp");
    }
    if (command !== "tools" && values.format !== undefined) {
      throw new UsageError("--format is an option of tools");
    }
    if (command !== "mcp" && values.http !== undefined) {
      throw new UsageError("--http is an option of mcp");
    }
    for (const flag of ["search-index", "no-search-index"] as const) {
      if (values[flag] && command !== "mcp") throw new UsageError(`--${flag} is an option of mcp`);
    }
    if (values["search-index"] && values["no-search-index"]) {
      throw new UsageError("--search-index and --no-search-index exclude each other");
    }
    if (values.http === undefined && values.token !== undefined) {
      throw new UsageError("--token goes with mcp --http");
    }
    if (command !== "call" && positionals.length > 0) {
      throw new UsageError(`${command} takes no arguments, got ${JSON.stringify(positionals[0])}`);
    }
    if (command === "tools") {
      const toolset = await toolsetFor(values);
      const format = values.format ?? "json";
      const definitions = format === "json"
        ? toolset.definitions
        : format === "openai"
        ? toOpenAITools(toolset.definitions)
        : format === "anthropic"
        ? toAnthropicTools(toolset.definitions)
        : null;
      if (definitions === null) {
        throw new UsageError(`--format must be json, openai or anthropic, not ${format}`);
      }
      process.stdout.write(JSON.stringify(definitions, null, 2) + "\n");
      return 0;
    }
    if (command === "call") return await runCall(positionals, values);
    // A server answers many searches of one tree: its index is on unless turned off.
    values["search-index"] = values["no-search-index"] !== true;
    // An unknown mode fails here, in toolsetFor, before the server starts.
    const toolset = await toolsetFor(values);
    // A server runs long: its search workers start now, so the first grep or glob needs no wait.
    toolset.session.filesystem.prepareSearch?.();
    // Loaded here: the other commands never pay for the MCP server.
    const { APPROVAL_MODES, serveStdio } = await import("../mcp/server.ts");
    const approval = (values.approval ?? "elicit") as (typeof APPROVAL_MODES)[number];
    if (!APPROVAL_MODES.includes(approval)) {
      throw new UsageError(
        `--approval must be one of ${APPROVAL_MODES.join(", ")}, not ${values.approval}`,
      );
    }
    const decided = { approval, fullArtifacts: values["full-artifacts"] === true };
    if (values.http !== undefined) {
      return await runHttp(values.http, values.token, toolset, values, decided);
    }
    // Every toolset made, the ones for the client's roots included; an index is built only
    // once a search needs it, and all of them are closed when the server ends.
    const made = [toolset];
    await serveStdio(toolset, {
      name: "openwork-tools",
      version: VERSION,
      ...decided,
      // A root given on the command line wins over the client's roots.
      ...(values.root === undefined
        ? {
          toolsetForRoot: async (root: string) => {
            const next = await toolsetFor({ ...values, root });
            made.push(next);
            return next;
          },
        }
        : {}),
    });
    await Promise.all(made.map((each) => each.session.searchIndex?.close()));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`openwork-tools: ${error.message}\n`);
      return EXIT.usage;
    }
    const refused = refusalLine(error);
    if (refused !== null) {
      process.stderr.write(`${refused}\n`);
      return EXIT.usage;
    }
    throw error;
  }
}
