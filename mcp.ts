/**
 * The MCP server of openwork-tools, for hosts that embed it: a finalized
 * toolset served over the Model Context Protocol with the official SDK.
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
export {
  APPROVAL_MODES,
  ARTIFACTS_META_KEY,
  createMcpServer,
  serveStdio,
} from "./src/mcp/server.ts";
export type { ApprovalMode, McpServerOptions } from "./src/mcp/server.ts";
export { boundArtifacts, META_PRIOR_CONTENT_BYTES } from "./src/mcp/artifacts_meta.ts";
export type { MetaArtifact, PriorContentOmitted } from "./src/mcp/artifacts_meta.ts";
