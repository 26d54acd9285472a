/**
 * The MCP server: a finalized toolset served over the Model Context Protocol
 * by the package's own protocol engine ({@link McpServer}). `tools/list`
 * comes from the toolset's definitions; `tools/call` goes through the
 * toolset's one approval flow (`call`), with MCP elicitation as the approver.
 *
 * @module
 */
import process from "node:process";
import * as v from "valibot";
import { ClientRoots } from "./roots.ts";
import type { ApprovalRequest, FinalizedToolset } from "../contract/toolset.ts";
import type { ToolProgress, ToolResult } from "../contract/result.ts";
import type { ApprovalAnswer } from "../contract/policy.ts";
import { describeEffects } from "../contract/effects.ts";
import { McpServer } from "./protocol.ts";
import { StdioTransport } from "./stdio_transport.ts";
import { boundArtifacts } from "./artifacts_meta.ts";

/**
 * The `_meta` key under which results carry their file-change artifacts. By
 * default a result's prior contents there total at most 64 KiB
 * (`META_PRIOR_CONTENT_BYTES`); past it an artifact has no `priorContent`
 * but `priorContentOmitted: true` and `priorContentBytes`. The option
 * `fullArtifacts` (CLI: `--full-artifacts`) sends them whole.
 */
export const ARTIFACTS_META_KEY = "openwork/artifacts";

const Roots = v.object({
  roots: v.array(v.looseObject({ uri: v.string(), name: v.optional(v.string()) })),
});

const Elicited = v.looseObject({
  action: v.picklist(["accept", "decline", "cancel"]),
  content: v.optional(v.record(v.string(), v.unknown())),
});

/** What an MCP `tools/call` answers. */
interface CallToolAnswer {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
  _meta?: Record<string, unknown>;
}

/**
 * Who decides a call the policy says to ask about:
 * - `elicit`: the person, asked through MCP elicitation where the client
 *   supports it; otherwise the call is refused, with a text that says how
 *   to change the mode.
 * - `client`: the client's own confirmation of each tool call is the gate,
 *   so the call runs (the tools' annotations tell the client which are risky).
 * - `policy`: nobody; only what the policy allows runs.
 */
export type ApprovalMode = "elicit" | "client" | "policy";

/** The approval modes, in the order the CLI names them. */
export const APPROVAL_MODES: readonly ApprovalMode[] = ["elicit", "client", "policy"];

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** The server's name in `initialize` (default `openwork-tools`). */
  readonly name?: string;
  /** The server's version in `initialize`. */
  readonly version?: string;
  /** Who decides calls the policy asks about (default `elicit`). */
  readonly approval?: ApprovalMode;
  /**
   * Makes a toolset whose working directory is `root`. When given, and the
   * client declares `roots`, the working directory of new calls is the
   * client's first `file://` root, read again on
   * `notifications/roots/list_changed`; the toolset given to the server is
   * used until then. A host that fixes the root (the CLI's `--root`) leaves
   * it out.
   */
  readonly toolsetForRoot?: (root: string) => Promise<FinalizedToolset>;
  /**
   * Send every artifact whole in `_meta`, prior contents of any size
   * included (default `false`: at most 64 KiB of them per result).
   */
  readonly fullArtifacts?: boolean;
}

function answer(
  result: ToolResult,
  structured: ReadonlySet<string>,
  options: McpServerOptions,
): CallToolAnswer {
  // The code leads a failure's text once (the result's own text opens with it too).
  const text = result.ok
    ? result.output
    : `[${result.error.code}] ${result.output.replace(/^Error \([a-z_]+\): /, "")}`;
  // A tool with an output schema gives its data as structuredContent on success only: the
  // schema describes successful results (MCP spec), and an error's data (a timed-out
  // command's output) is in its text. The model's text stays the tool's own, not the JSON.
  const data = result.ok && structured.has(result.name) ? result.data : undefined;
  return {
    content: [{ type: "text", text }],
    ...(data === undefined ? {} : { structuredContent: data as Record<string, unknown> }),
    isError: !result.ok,
    _meta: {
      "openwork/toolId": result.toolId,
      "openwork/durationMs": result.durationMs,
      [ARTIFACTS_META_KEY]: boundArtifacts(result.artifacts, options.fullArtifacts === true),
    },
  };
}

/** The MCP server {@link createMcpServer} makes: an {@link McpServer} that also names its toolsets. */
export type ToolsetServer = McpServer & {
  /** Every toolset the server has made or was given (their processes end with the server). */
  toolsets(): FinalizedToolset[];
};

/**
 * Makes an MCP server for a toolset. Where the reference policy says ask,
 * the server asks the person through MCP elicitation when the client
 * supports it; otherwise the call is refused with a text the model can read.
 * It serves over any {@link McpTransport}: {@link StdioTransport}, a
 * Streamable HTTP session of {@link serveHttp}, or a transport of the MCP SDK.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { createMcpServer, StdioTransport } from "@openwork/tools/mcp";
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * await createMcpServer(toolset).connect(new StdioTransport());
 * ```
 */
export function createMcpServer(
  toolset: FinalizedToolset,
  options: McpServerOptions = {},
): ToolsetServer {
  const server = new McpServer({
    info: { name: options.name ?? "openwork-tools", version: options.version ?? "0.0.0" },
    capabilities: { tools: {}, logging: {} },
  });
  const make = options.toolsetForRoot;
  const roots = new ClientRoots(
    {
      declared: () => make !== undefined && server.getClientCapabilities()?.roots !== undefined,
      list: async () => v.parse(Roots, await server.request("roots/list", undefined)),
    },
    toolset,
    make ?? (() => Promise.resolve(toolset)),
    (message) => {
      // A root that cannot be used is a server-side warning: on stderr, and to the client.
      process.stderr.write(`openwork-tools: ${message}\n`);
      void server.sendLoggingMessage({ level: "warning", logger: "openwork-tools", data: message })
        .catch(() => {});
    },
  );
  server.oninitialized = () => roots.refresh();
  server.setNotificationHandler("notifications/roots/list_changed", () => roots.refresh());

  server.setRequestHandler("tools/list", () => ({
    tools: toolset.definitions.map((d) => ({
      name: d.name,
      title: d.title,
      description: d.description,
      inputSchema: d.inputSchema,
      ...(d.outputSchema === undefined ? {} : { outputSchema: d.outputSchema }),
      annotations: d.annotations,
    })),
  }));
  const structured = new Set(
    toolset.definitions.filter((d) => d.outputSchema !== undefined).map((d) => d.name),
  );

  const approval = options.approval ?? "elicit";

  /**
   * Decides a call the policy asks about, by the approval mode; a refusal
   * says why, in words for the model. The question goes with the request
   * `related` (over HTTP, on that request's stream).
   */
  const approver =
    (related: string | number) =>
    async ({ prepared, verdict, signal, question }: ApprovalRequest): Promise<ApprovalAnswer> => {
      const what = describeEffects(prepared.name, prepared.effects);
      const refused = (how: string) => ({
        approved: false,
        reason: `${what} needs the person's approval (${verdict.source}); ${how}. ` +
          "Prefer read-only commands, or ask the person to allow it.",
      });
      if (approval === "client") return true;
      if (approval === "policy") {
        return refused(
          "the server runs with --approval policy, which runs only what the policy allows, so it " +
            "was not run",
        );
      }
      if (server.getClientCapabilities()?.elicitation === undefined) {
        return refused(
          "this MCP client cannot ask the person (no elicitation support), so it was not run; a " +
            "client that confirms each tool call itself can start the server with --approval client",
        );
      }
      try {
        const reply = v.parse(
          Elicited,
          await server.request("elicitation/create", {
            mode: "form",
            // Escaped: the client shows the message as text, and the card must be what runs.
            message: question,
            requestedSchema: {
              type: "object",
              properties: {
                approve: { type: "boolean", title: "Allow this call", description: "Run it once." },
              },
              required: ["approve"],
            },
          }, { signal, relatedRequestId: related }),
        );
        if (reply.action === "accept" && reply.content?.approve === true) return true;
      } catch (error) {
        // A failed question is a refusal, named as such: nobody declined it.
        const why = error instanceof Error ? error.message : String(error);
        return refused(
          `the person could not be asked or did not answer (${why}), so it was not run`,
        );
      }
      return refused("the person declined it");
    };

  server.setRequestHandler("tools/call", async (params, context) => {
    const meta = params._meta as { progressToken?: string | number } | undefined;
    const token = meta?.progressToken;
    let sent = 0;
    // The sink resolves once the transport has taken the event: a slow client makes the
    // tool's relay hold events back (and past its budget drop them) instead of piling them up.
    const progress = token === undefined
      ? undefined
      : (event: ToolProgress) =>
        context.notify("notifications/progress", {
          progressToken: token,
          progress: ++sent,
          message: event.kind === "message" ? event.message : event.chunk,
        });
    const signal = context.signal;
    const result = await (await roots.current()).call({
      name: params.name as string,
      // Arguments that are not an object are the toolset's to refuse, as a tool result.
      input: "arguments" in params ? params.arguments : {},
      callId: `mcp-${String(context.requestId)}`,
      signal,
      approve: approver(context.requestId),
      ...(progress === undefined ? {} : { progress }),
    });
    return answer(result, structured, options);
  });

  return Object.assign(server, { toolsets: () => roots.all() });
}

/**
 * Serves a toolset over stdio until the client disconnects, then ends every
 * process group the session's backend still owns.
 */
export async function serveStdio(
  toolset: FinalizedToolset,
  options: McpServerOptions = {},
): Promise<void> {
  const server = createMcpServer(toolset, options);
  const closed = new Promise<void>((resolve) => (server.onclose = () => resolve()));
  server.onerror = (error: Error) => {
    // Bounded: the message may quote what the client sent (up to a whole line).
    const message = error.message.length > 500 ? `${error.message.slice(0, 500)}…` : error.message;
    process.stderr.write(`openwork-tools mcp: ${message}\n`);
    if (server.getClientVersion() === undefined) return;
    void server.sendLoggingMessage({
      level: "warning",
      logger: "openwork-tools",
      data: message,
    })
      .catch(() => {});
  };
  await server.connect(new StdioTransport());
  await closed;
  await Promise.all(
    server.toolsets().map((made: FinalizedToolset) => made.session.processes.shutdown()),
  );
}
