/**
 * The command-line interface: `tools`, `call` and `mcp`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { createInterface } from "node:readline/promises";
import process from "node:process";
import { createSession } from "../session.ts";
import { finalizeToolset } from "../finalize.ts";
import { toAnthropicTools, toOpenAITools } from "../contract/converters.ts";
import type { FinalizedToolset } from "../contract/toolset.ts";
import type { PermissionMode } from "../contract/context.ts";
import { describeEffects } from "../contract/effects.ts";
import type { McpServerOptions } from "../mcp/server.ts";

const VERSION = "0.1.0";

const USAGE = `openwork-tools — the read/write/edit/grep/glob/list/bash tool runtime

Usage:
  openwork-tools tools [--format json|openai|anthropic]   print the tool definitions
  openwork-tools call NAME JSON [--json]                  run one call, print the model text
  openwork-tools mcp                                      serve the tools over MCP (stdio)
  openwork-tools mcp --http [HOST:]PORT                   serve them over MCP (Streamable HTTP)

Options (every command):
  --root DIR          working directory (default: the current directory)
  --skill-root DIR    read-only skill root (e.g. ~/.agents/skills)
  --mode MODE         default | acceptEdits | plan (default: default)
  -h, --help          this help; 'openwork-tools COMMAND --help' for one command

Exit codes: 0 ok, 1 the tool result is not ok, 2 usage error.`;

const HELP: Record<string, string> = {
  tools: `Usage: openwork-tools tools [--format json|openai|anthropic] [--mode MODE]

Prints the tool definitions the model sees, as JSON: the toolset's own form
(json, the default) or the OpenAI / Anthropic tool formats.`,
  call: `Usage: openwork-tools call NAME JSON [--json] [--root DIR] [--mode MODE] [--skill-root DIR]

Runs one tool call in the working directory and prints the text the model
would see (--json: the whole ToolResult). bash output streams to stderr while
it runs. Where the policy says ask, asks on the terminal (y/N); without a
terminal the call is refused. Exits 1 when the result is not ok.

Example: openwork-tools call grep '{"pattern":"TODO","mode":"content"}'`,
  mcp: `Usage: openwork-tools mcp [--http [HOST:]PORT [--token TOKEN]] [--root DIR] [--mode MODE]
                          [--skill-root DIR] [--approval HOW] [--full-artifacts]

Serves the toolset over MCP on stdin/stdout until the client disconnects.
Without --root, the working directory is the client's first file:// root
when the client declares roots (and moves when they change), else the
current directory.

--approval HOW   who decides a call the policy asks about:
  elicit   the person, through MCP elicitation where the client supports it;
           otherwise the call is refused with a readable reason (default)
  client   the client's own confirmation of each tool call (the tools'
           annotations tell it which are risky): the call runs
  policy   nobody: only what the policy allows runs

--full-artifacts  send file-change artifacts in _meta whole; by default a
                  result carries at most 64 KiB of prior file contents

--http serves it over Streamable HTTP at http://HOST:PORT/mcp instead (HOST
defaults to 127.0.0.1; PORT 0 picks a free one), until SIGTERM or SIGINT,
with the root fixed (--root, or the current directory). Each MCP session
gets its own toolset session; it ends on DELETE or after 30 minutes idle,
and its processes with it. Every request needs 'Authorization: Bearer
TOKEN': the token is --token, else OPENWORK_MCP_TOKEN, else a random one
printed to stderr once.`,
};

class UsageError extends Error {}

const MODES: readonly PermissionMode[] = ["default", "acceptEdits", "plan"];

async function toolsetFor(
  values: { root?: string; "skill-root"?: string; mode?: string },
): Promise<FinalizedToolset> {
  const mode = (values.mode ?? "default") as PermissionMode;
  if (!MODES.includes(mode)) {
    throw new UsageError(`--mode must be one of ${MODES.join(", ")}, not ${values.mode}`);
  }
  const root = values.root ?? process.cwd();
  const absolute = root.startsWith("/") ? root : `${process.cwd()}/${root}`;
  try {
    const session = await createSession({
      workingDirectory: absolute,
      permissions: { mode },
      skillRoot: values["skill-root"] ?? null,
    });
    return finalizeToolset({ session });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/^createSession: /, ""));
  }
}

async function askOnTerminal(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(`${question} [y/N] `)).trim());
  } finally {
    prompt.close();
  }
}

async function runCall(
  positionals: string[],
  values: Record<string, string | boolean | undefined>,
): Promise<number> {
  const [name, json, ...extra] = positionals;
  if (name === undefined || json === undefined || extra.length > 0) {
    throw new UsageError("call takes a tool name and one JSON argument");
  }
  let input: unknown;
  try {
    input = JSON.parse(json);
  } catch (error) {
    throw new UsageError(`the JSON argument does not parse: ${(error as Error).message}`);
  }
  const toolset = await toolsetFor(values as Record<string, string>);
  const turn = new AbortController();
  const interrupt = () => turn.abort();
  process.once("SIGINT", interrupt);
  try {
    // The toolset's one approval flow, with the terminal as the approver.
    const result = await toolset.call({
      name,
      input,
      callId: "cli-1",
      signal: turn.signal,
      approve: async ({ prepared, verdict }) => {
        const what = describeEffects(prepared.name, prepared.effects);
        if (!process.stdin.isTTY) {
          return {
            approved: false,
            reason: `${what} needs approval (${verdict.source}) and there is no terminal to ask; ` +
              "run it in a terminal, or choose --mode acceptEdits for file edits",
          };
        }
        return await askOnTerminal(`Allow ${what}? (${verdict.source})`) ||
          { approved: false, reason: `${what} was declined` };
      },
      progress: (event) => {
        if (event.kind !== "message") process.stderr.write(event.chunk);
      },
    });
    if (result.error?.code === "denied") {
      process.stderr.write(`openwork-tools: ${result.output}\n`);
      return 1;
    }
    process.stdout.write((values.json ? JSON.stringify(result, null, 2) : result.output) + "\n");
    return result.ok ? 0 : 1;
  } finally {
    process.off("SIGINT", interrupt);
    await toolset.session.processes.shutdown();
  }
}

/** `mcp --http`: one toolset per MCP session, made as `toolset` was; serves until SIGTERM or SIGINT. */
async function runHttp(
  address: string,
  token: string | undefined,
  toolset: FinalizedToolset,
  values: { root?: string; "skill-root"?: string; mode?: string },
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
  // The toolset made to check the options goes to the first session.
  let first: FinalizedToolset | undefined = toolset;
  const served = await serveHttp(async () => {
    const made = first ?? await toolsetFor(values);
    first = undefined;
    return made;
  }, {
    ...listen,
    ...decided,
    token: given,
    name: "openwork-tools",
    version: VERSION,
  });
  process.stderr.write(`openwork-tools: MCP over HTTP at ${served.url}\n`);
  if (given === undefined) {
    process.stderr.write(`openwork-tools: bearer token ${served.token}\n`);
  }
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await served.close();
  await first?.session.processes.shutdown();
  return 0;
}

/**
 * Runs the CLI with `args` (without the program name) and resolves the exit
 * code. Usage errors print one line to stderr and give 2.
 */
export async function main(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  try {
    if (command === undefined || command === "-h" || command === "--help" || command === "help") {
      process.stdout.write(USAGE + "\n");
      return command === undefined ? 2 : 0;
    }
    if (command === "--version") {
      process.stdout.write(`${VERSION}\n`);
      return 0;
    }
    if (!(command in HELP)) {
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
          approval: { type: "string" },
          "full-artifacts": { type: "boolean" },
          http: { type: "string" },
          token: { type: "string" },
        },
      });
    } catch (error) {
      throw new UsageError((error as Error).message.split(". ")[0]);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      process.stdout.write(HELP[command] + "\n");
      return 0;
    }
    if (command !== "call" && values.json) throw new UsageError("--json is an option of call");
    if (command !== "mcp" && values.approval !== undefined) {
      throw new UsageError("--approval is an option of mcp");
    }
    if (command !== "tools" && values.format !== undefined) {
      throw new UsageError("--format is an option of tools");
    }
    if (command !== "mcp" && values.http !== undefined) {
      throw new UsageError("--http is an option of mcp");
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
    await serveStdio(toolset, {
      name: "openwork-tools",
      version: VERSION,
      ...decided,
      // A root given on the command line wins over the client's roots.
      ...(values.root === undefined
        ? { toolsetForRoot: (root: string) => toolsetFor({ ...values, root }) }
        : {}),
    });
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`openwork-tools: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
