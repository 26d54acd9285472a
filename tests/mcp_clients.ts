/**
 * The official MCP clients, one face for all: the v1 SDK client and the v2
 * client (legacy negotiation, or pinned to a revision), over stdio or
 * Streamable HTTP, against the CLI's server started as a user starts it
 * (`mcp --root DIR`, `mcp --http 127.0.0.1:0 --token T --root DIR`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { cliCommand, ENV } from "./mcp_helpers.ts";

/** Which official client, and how it negotiates. */
export type ClientKind = "sdk v1" | "client v2 legacy" | "client v2 pinned 2026-07-28";

/** The transport between client and server. */
export type TransportKind = "stdio" | "http";

/** What a tool call gives back, as both clients type it. */
export interface CallResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** Per-call options both clients take. */
export interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: { progress: number; message?: string }) => void;
}

/** How the person answers an approval asked through elicitation. */
export type Answer = "accept" | "decline";

/** One connected client and what it needs ended. */
export interface McpSession {
  /** The names of the listed tools, in order. */
  toolNames(): Promise<string[]>;
  /** `tools/call`; `args` undefined sends no `arguments` at all. */
  call(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CallResult>;
  /** The approvals asked, by their messages. */
  readonly asked: string[];
  /** The pid of the server process (stdio: the transport's child; HTTP: the CLI). */
  serverPid(): number;
  /** Closes the client and ends the server. */
  close(): Promise<void>;
}

/** Where and how the server runs, and how the client answers approvals. */
export interface SessionOptions {
  root: string;
  /** `--mode`; acceptEdits unless given. */
  mode?: string;
  /** The answer to each approval, in order; once spent, the last answer is repeated. */
  answers?: Answer[];
}

/** The text of a result's content. */
export function text(result: CallResult): string {
  return result.content.map((c) => c.text ?? "").join("\n");
}

/**
 * The CLI serving MCP over HTTP with `flags` (in `cwd`, default this process's) until `stop`:
 * its URL and token, read from what it announces.
 */
export async function startHttpServer(
  flags: string[],
  cwd?: string,
): Promise<{ url: URL; token: string; child: ChildProcess; stop(): Promise<void> }> {
  const { command, args } = cliCommand();
  const token = randomUUID();
  const child = spawn(command, [
    ...args,
    "mcp",
    "--http",
    "127.0.0.1:0",
    "--token",
    token,
    ...flags,
  ], {
    env: ENV,
    stdio: ["ignore", "ignore", "pipe"],
    ...(cwd === undefined ? {} : { cwd }),
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<URL>((resolve, reject) => {
    let said = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      said += chunk;
      const found = /MCP over HTTP at (http:\/\/\S+)/.exec(said)?.[1];
      if (found !== undefined) resolve(new URL(found));
    });
    child.once("exit", (code) => reject(new Error(`mcp --http exited with ${code}: ${said}`)));
  });
  return {
    url,
    token,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Connects `client` over `transport` to the CLI's server on `options.root`. */
export async function openSession(
  client: ClientKind,
  transport: TransportKind,
  options: SessionOptions,
): Promise<McpSession> {
  const flags = ["--root", options.root, "--mode", options.mode ?? "acceptEdits"];
  const asked: string[] = [];
  const answers = [...(options.answers ?? ["accept"])];
  const answer = (message: string) => {
    asked.push(message);
    const next = answers.length > 1 ? answers.shift()! : answers[0];
    return next === "accept"
      ? { action: "accept" as const, content: { approve: true } }
      : { action: "decline" as const };
  };
  const server = transport === "http" ? await startHttpServer(flags) : undefined;
  const { command, args } = cliCommand();
  const stdio = { command, args: [...args, "mcp", ...flags], env: ENV, stderr: "ignore" as const };
  const headers = server === undefined
    ? undefined
    : { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } };
  const info = { name: "openwork-test", version: "1.0.0" };
  try {
    if (client === "sdk v1") {
      const made = server === undefined ? new StdioV1(stdio) : new HttpV1(server.url, headers);
      const sdk = new ClientV1(info, { capabilities: { elicitation: {} } });
      sdk.setRequestHandler(
        ElicitRequestSchema,
        (request: { params: { message: string } }) =>
          Promise.resolve(answer(request.params.message)),
      );
      await sdk.connect(made);
      return {
        asked,
        async toolNames() {
          return (await sdk.listTools()).tools.map((t: { name: string }) => t.name);
        },
        async call(name, args, options) {
          const params = args === undefined ? { name } : { name, arguments: args };
          return await sdk.callTool(params, undefined, options) as CallResult;
        },
        serverPid: () => server?.child.pid ?? (made as StdioV1).pid ?? 0,
        async close() {
          await sdk.close();
          await server?.stop();
        },
      };
    }
    const made = server === undefined ? new StdioV2(stdio) : new HttpV2(server.url, headers);
    const sdk = new ClientV2(info, {
      capabilities: { elicitation: {} },
      versionNegotiation: {
        mode: client === "client v2 legacy" ? "legacy" : { pin: "2026-07-28" },
      },
    });
    sdk.setRequestHandler(
      "elicitation/create",
      (request) => Promise.resolve(answer(request.params.message)),
    );
    await sdk.connect(made);
    return {
      asked,
      async toolNames() {
        return (await sdk.listTools()).tools.map((t) => t.name);
      },
      async call(name, args, options) {
        const params = args === undefined ? { name } : { name, arguments: args };
        return await sdk.callTool(params, options) as CallResult;
      },
      serverPid: () => server?.child.pid ?? (made as StdioV2).pid ?? 0,
      async close() {
        await sdk.close();
        await server?.stop();
      },
    };
  } catch (error) {
    await server?.stop();
    throw error;
  }
}
