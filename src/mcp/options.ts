/**
 * The options of the MCP server, the same for both protocol eras: its name,
 * the approval mode, how a working directory gets its toolset, and how whole
 * the artifacts in `_meta` are.
 *
 * @module
 */
import type { FinalizedToolset } from "../contract/toolset.ts";

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

/** Options of the MCP server: `createMcpServer`, `serveStdio` and `serveHttp`. */
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
   * used until then. Under revision 2026-07-28 it makes the toolset of the
   * working directory a request names (`_meta["openwork/root"]`). A host
   * that fixes the root (the CLI's `--root`) leaves it out.
   */
  readonly toolsetForRoot?: (root: string) => Promise<FinalizedToolset>;
  /**
   * Send every artifact whole in `_meta`, prior contents of any size
   * included (default `false`: at most 64 KiB of them per result).
   */
  readonly fullArtifacts?: boolean;
}

/**
 * The most working directories a server makes toolsets for: a client's roots
 * (2025 revisions) or the directories its requests name (2026-07-28).
 */
export const MAX_ROOTS = 64;
