/**
 * The MCP server of openwork-tools, for hosts that embed it: a finalized
 * toolset served over the Model Context Protocol, on stdio (with a transport
 * that answers every malformed or oversized line and keeps serving) or over
 * Streamable HTTP. Both transports, and the checks in front of the protocol
 * (a message nested deeper than {@link MAX_JSON_DEPTH} levels is refused),
 * are the package's own; {@link serveStdio} and {@link serveHttp} serve the
 * 2025 revisions and revision 2026-07-28 with the official server package,
 * `@modelcontextprotocol/server`, loaded when they start serving.
 * {@link createMcpServer} returns an {@link McpServer}, the package's
 * embeddable protocol engine of the 2025 revisions (not the SDK's `Server`),
 * with `connect(transport)`, `close()`, `toolsets()`,
 * `getClientCapabilities()`, `sendLoggingMessage()` and `onclose`/`onerror`;
 * any object with the {@link McpTransport} members can be connected,
 * the SDK's server transports included.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { createMcpServer, StdioTransport } from "@openwork/tools/mcp";
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * await createMcpServer(toolset).connect(new StdioTransport());
 * ```
 *
 * @module
 */
export {
  APPROVAL_MODES,
  ARTIFACTS_META_KEY,
  createMcpServer,
  serveStdio,
} from "./src/mcp/server.ts";
export type { ApprovalMode, McpServerOptions, ToolsetServer } from "./src/mcp/server.ts";
export {
  DEFAULT_REQUEST_TIMEOUT_MS,
  LATEST_PROTOCOL_VERSION,
  McpError,
  McpServer,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./src/mcp/protocol.ts";
export type {
  ClientCapabilities,
  Implementation,
  LoggingMessage,
  McpServerInit,
  McpTransport,
  NotificationHandler,
  RequestContext,
  RequestHandler,
  RequestId,
  RequestOptions,
  SendOptions,
} from "./src/mcp/protocol.ts";
export { LOGGING_LEVELS } from "./src/mcp/requests.ts";
export type { LoggingLevel } from "./src/mcp/requests.ts";
export type { JsonRpcMessage } from "./src/mcp/jsonrpc.ts";
export { MAX_JSON_DEPTH } from "./src/mcp/json_depth.ts";
export { MAX_LINE_BYTES, StdioTransport } from "./src/mcp/stdio_transport.ts";
export type {
  ByteSink,
  ByteSource,
  StdioTransportOptions,
  TransportMessage,
} from "./src/mcp/stdio_transport.ts";
// The server's signatures name the toolset and everything it names; a host
// importing only ./mcp finds those types here (types only: no second copy of code).
export type * from "./mod.ts";
export { boundArtifacts, META_PRIOR_CONTENT_BYTES } from "./src/mcp/artifacts_meta.ts";
export type { MetaArtifact, PriorContentOmitted } from "./src/mcp/artifacts_meta.ts";
export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_SESSIONS,
  MCP_HTTP_PATH,
  serveHttp,
} from "./src/mcp/http.ts";
export type { HttpMcpServer, HttpMcpServerOptions, ToolsetFactory } from "./src/mcp/http.ts";
