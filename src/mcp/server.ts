/**
 * The MCP server: a finalized toolset served over the Model Context Protocol.
 * {@link serveStdio} serves both protocol eras with the official server
 * package (the 2025 revisions in `legacy_sdk.ts`, 2026-07-28 in `modern.ts`)
 * behind the package's own stdio transport and checks.
 * {@link createMcpServer} makes a server on the package's embeddable protocol
 * engine ({@link McpServer}), for hosts that connect it to a transport of
 * their own and register handlers of their own on it. In both, `tools/list`
 * comes from the toolset's definitions and `tools/call` goes through the
 * toolset's one approval flow (`call`), with MCP elicitation as the approver.
 *
 * @module
 */
import process from "node:process";
import * as v from "valibot";
import { serverRoots } from "./roots.ts";
import type { ApprovalRequest, FinalizedToolset } from "../contract/toolset.ts";
import type { ToolProgress } from "../contract/result.ts";
import { McpServer } from "./protocol.ts";
import type { McpServerOptions } from "./options.ts";
import { StdioTransport } from "./stdio_transport.ts";
import { carriesEnvelope, type Era, EraChannel, eraChosenBy } from "./eras.ts";
import { RequestChecks } from "./request_checks.ts";
import type { JsonRpcMessage } from "./jsonrpc.ts";
import type { ModernConnection } from "./modern_stdio.ts";
import { answer, structuredTools, toolList } from "./tool_answer.ts";
import { APPROVAL_FORM, decideByElicitation } from "./elicit_approval.ts";

export { ARTIFACTS_META_KEY } from "./tool_answer.ts";

const Elicited = v.looseObject({
  action: v.picklist(["accept", "decline", "cancel"]),
  content: v.optional(v.record(v.string(), v.unknown())),
});

export { APPROVAL_MODES } from "./options.ts";
export type { ApprovalMode, McpServerOptions } from "./options.ts";

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
  const roots = serverRoots(toolset, options.toolsetForRoot, {
    declaresRoots: () => server.getClientCapabilities()?.roots !== undefined,
    listRoots: (timeoutMs) => server.request("roots/list", undefined, { timeoutMs }),
    warn: (data) => server.sendLoggingMessage({ level: "warning", logger: "openwork-tools", data }),
  });
  server.oninitialized = () => roots.refresh();
  server.setNotificationHandler("notifications/roots/list_changed", () => roots.refresh());

  server.setRequestHandler("tools/list", () => ({ tools: toolList(toolset) }));
  const structured = structuredTools(toolset);

  const approval = options.approval ?? "elicit";

  /** Decides a call the policy asks about; the question goes with the request `related`. */
  const approver = (related: string | number) => (request: ApprovalRequest) =>
    decideByElicitation(approval, {
      canAsk: () => server.getClientCapabilities()?.elicitation !== undefined,
      ask: async (message, signal) =>
        v.parse(
          Elicited,
          await server.request("elicitation/create", { ...APPROVAL_FORM, message }, {
            signal,
            // Over HTTP, on that request's stream.
            relatedRequestId: related,
          }),
        ),
    }, request);

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
    return answer(result, structured, options.fullArtifacts === true);
  });

  return Object.assign(server, { toolsets: () => roots.all() });
}

/**
 * Serves a toolset over stdio until the client disconnects, then ends every
 * process group the session's backend still owns. Both protocol eras are
 * served by the official server package, loaded here; in front of it, the
 * transport answers every line and refuses a message nested deeper than
 * `MAX_JSON_DEPTH` levels, and the 2025-era requests get the checks of
 * {@link RequestChecks}.
 */
export async function serveStdio(
  toolset: FinalizedToolset,
  options: McpServerOptions = {},
): Promise<void> {
  const wire = new StdioTransport();
  let connection: ModernConnection | undefined = undefined;
  const report = (error: Error) => {
    // Bounded: the message may quote what the client sent (up to a whole line).
    const message = error.message.length > 500 ? `${error.message.slice(0, 500)}…` : error.message;
    process.stderr.write(`openwork-tools mcp: ${message}\n`);
    connection?.warn(message);
  };
  // Both eras are served by the official server package, loaded here (not by `createMcpServer`).
  const [{ serveModernStdio }, { packageSchemaProblem }] = await Promise.all([
    import("./modern_stdio.ts"),
    import("./legacy_sdk.ts"),
  ]);
  // The 2025-era checks of createMcpServer's engine, kept in front of the server package.
  const checks = new RequestChecks(packageSchemaProblem);
  let era: Era | undefined;
  /** The request that chose 2026-07-28, until the server package made that revision's engine. */
  let chooser: { id: unknown } | null = null;
  const channel = new EraChannel(wire, (message) => {
    checks.sent(message);
    // A request that chose 2026-07-28 and was refused before the server package made that
    // revision's engine (an envelope it does not accept) chose nothing: the revision is still
    // open, and the transport's gate closed, as after a failed initialize.
    if (chooser === null || !("error" in message) || message.id !== chooser.id) return;
    chooser = null;
    if (connection?.era() === "modern") return;
    era = undefined;
    wire.forgetEra();
  });
  wire.onmessage = (message) => {
    if (era === undefined && typeof message.method === "string" && "id" in message) {
      era = eraChosenBy(message);
      if (era === "modern") chooser = { id: message.id };
      // Both eras answer a ping: one before the first request that chooses the revision is
      // answered here, so that the server package does not take it for a 2025-era opening.
      if (era === undefined && message.method === "ping") {
        const pong = { jsonrpc: "2.0" as const, id: message.id, result: {} };
        void wire.send(pong).catch((error) => report(error));
        return;
      }
    }
    // A notification before any request is about nothing yet; passed on, it would make the
    // server package take the connection for a 2025-era one.
    if (era === undefined && typeof message.method === "string" && !("id" in message)) {
      if (!carriesEnvelope(message)) {
        report(new Error(`ignored input: ${message.method} before the first request`));
        return;
      }
    }
    // The 2026-07-28 requests are the server package's to check.
    if (era === "modern") return channel.deliver(message);
    const admitted = checks.admit(message);
    if ("reply" in admitted) {
      void wire.send(admitted.reply as unknown as JsonRpcMessage).catch((error) => report(error));
      return;
    }
    if ("drop" in admitted) return report(new Error(admitted.drop));
    checks.cancelled(message);
    channel.deliver(admitted.message);
  };
  wire.onerror = (error) => channel.onerror?.(error);
  const closed = new Promise<void>((resolve) =>
    wire.onclose = () => {
      channel.onclose?.();
      resolve();
    }
  );
  connection = serveModernStdio(toolset, options, channel, report, checks);
  await wire.start();
  await closed;
  await connection.close().catch(() => {});
  await Promise.all(
    [...new Set(connection.toolsets())].map((made) => made.session.processes.shutdown()),
  );
}
