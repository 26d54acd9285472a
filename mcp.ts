/**
 * The MCP server of openwork-tools, for hosts that embed it: a finalized
 * toolset served over the Model Context Protocol with the official SDK, on
 * stdio or over Streamable HTTP.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset } from "@openwork/tools";
 * import { createMcpServer } from "@openwork/tools/mcp";
 * import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
 * const toolset = finalizeToolset({ session: await createSession({ workingDirectory: Deno.cwd() }) });
 * await createMcpServer(toolset).connect(new StdioServerTransport());
 * ```
 *
 * @module
 */
export { ARTIFACTS_META_KEY, createMcpServer, serveStdio } from "./src/mcp/server.ts";
export type { McpServerOptions } from "./src/mcp/server.ts";
export { DEFAULT_IDLE_TIMEOUT_MS, MCP_HTTP_PATH, serveHttp } from "./src/mcp/http.ts";
export type { HttpMcpServer, HttpMcpServerOptions, ToolsetFactory } from "./src/mcp/http.ts";
