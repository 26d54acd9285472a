/**
 * The 2025 revisions on the official server package: one server instance
 * per stdio connection opened with `initialize` and per HTTP session, with
 * the lifecycle, logging, cancellation and progress of the package, the
 * toolset's approval asked through elicitation, and the working directory
 * read from the client's roots (over stdio), as `createMcpServer` does.
 *
 * @module
 */
import { Server, type ServerContext, specTypeSchemas } from "@modelcontextprotocol/server";
import type { ApprovalRequest, FinalizedToolset } from "../contract/toolset.ts";
import type { ToolProgress } from "../contract/result.ts";
import { serverRoots } from "./roots.ts";
import { answer, structuredTools, toolList } from "./tool_answer.ts";
import { APPROVAL_FORM, decideByElicitation } from "./elicit_approval.ts";
import type { McpServerOptions } from "./options.ts";

type Issue = {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[];
  readonly errors?: readonly (readonly { expected?: unknown }[])[];
};

/** One line per issue: the field's path, then what is wrong with it. */
function describeIssues(issues: readonly Issue[]): string {
  return issues.map((issue) => {
    const path = (issue.path ?? []).map((part) =>
      typeof part === "object" && part !== null ? String(part.key) : String(part)
    );
    // A union's own message says only "Invalid input": what it would have taken says more.
    const expected = (issue.errors ?? []).flat().map((sub) => sub.expected)
      .filter((kind) => typeof kind === "string");
    const message = expected.length === 0
      ? issue.message
      : `${issue.message}: expected ${expected.join(" or ")}`;
    return `${path.length === 0 ? "(request)" : path.join(".")}: ${message}`;
  }).join("\n");
}

/**
 * Field by field, why a 2025-era request does not fit the server package's
 * schema of a JSON-RPC request (a `_meta.progressToken` that is neither a
 * string nor an integer) or of `initialize` (its client's capabilities), or
 * `undefined` when it fits. The package drops the first without an answer
 * and answers the second -32603, as if the server had failed, so such a
 * request is answered -32602 with the fields at fault before it gets there.
 */
export function packageSchemaProblem(
  method: string,
  request: Readonly<Record<string, unknown>>,
): string | undefined {
  const candidates = method === "initialize"
    ? [specTypeSchemas.JSONRPCRequest, specTypeSchemas.InitializeRequest]
    : [specTypeSchemas.JSONRPCRequest];
  for (const schema of candidates) {
    const checked = schema["~standard"].validate(request);
    if (checked instanceof Promise || checked.issues === undefined) continue;
    return describeIssues(checked.issues as readonly Issue[]);
  }
  return undefined;
}

/** A 2025-era server instance and the toolsets it made. */
export interface LegacyInstance {
  /** The server. */
  readonly server: Server;
  /** Every toolset it made or was given. */
  toolsets(): FinalizedToolset[];
}

/**
 * Makes the server instance of one 2025-era connection for `toolset`;
 * `setAside` gives the arguments of a call that were not an object, which
 * the connection's checks set aside.
 */
export function createLegacyInstance(
  toolset: FinalizedToolset,
  options: McpServerOptions,
  setAside: (id: string | number) => { value: unknown } | undefined,
): LegacyInstance {
  const server = new Server(
    { name: options.name ?? "openwork-tools", version: options.version ?? "0.0.0" },
    { capabilities: { tools: {}, logging: {} } },
  );
  const roots = serverRoots(toolset, options.toolsetForRoot, {
    declaresRoots: () => server.getClientCapabilities()?.roots !== undefined,
    listRoots: (timeout) => server.listRoots(undefined, { timeout }),
    warn: (data) => server.sendLoggingMessage({ level: "warning", logger: "openwork-tools", data }),
  });
  server.oninitialized = () => roots.refresh();
  server.setNotificationHandler("notifications/roots/list_changed", () => roots.refresh());
  server.setRequestHandler("tools/list", () => ({ tools: toolList(toolset) }) as never);
  const structured = structuredTools(toolset);
  const approval = options.approval ?? "elicit";

  // Over HTTP the question goes on the stream of the call it is about.
  const approver = (ctx: ServerContext) => (request: ApprovalRequest) =>
    decideByElicitation(approval, {
      canAsk: () => server.getClientCapabilities()?.elicitation !== undefined,
      ask: (message, signal) =>
        ctx.mcpReq.elicitInput({ ...APPROVAL_FORM, message }, {
          signal,
          relatedRequestId: ctx.mcpReq.id,
        }),
    }, request);

  server.setRequestHandler("tools/call", async (request, ctx) => {
    const params = request.params as { name: string; arguments?: unknown };
    const token = ctx.mcpReq._meta?.progressToken;
    let sent = 0;
    const progress = token === undefined ? undefined : (event: ToolProgress) =>
      ctx.mcpReq.notify({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: ++sent,
          message: event.kind === "message" ? event.message : event.chunk,
        },
      });
    // Arguments that are not an object are the toolset's to refuse, as a tool result.
    const kept = setAside(ctx.mcpReq.id);
    const result = await (await roots.current()).call({
      name: params.name,
      input: kept !== undefined ? kept.value : params.arguments ?? {},
      callId: `mcp-${String(ctx.mcpReq.id)}`,
      signal: ctx.mcpReq.signal,
      approve: approver(ctx),
      ...(progress === undefined ? {} : { progress }),
    });
    return answer(result, structured, options.fullArtifacts === true) as never;
  });
  return { server, toolsets: () => roots.all() };
}
