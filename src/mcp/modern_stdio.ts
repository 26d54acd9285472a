/**
 * A stdio connection of protocol revision 2026-07-28, served by the
 * official server package's stdio entry over the package's own transport
 * (through the connection's {@link EraChannel}). Loaded only when a
 * connection's first request is of that revision.
 *
 * @module
 */
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { FinalizedToolset } from "../contract/toolset.ts";
import type { EraChannel } from "./eras.ts";
import { createModernEngine } from "./modern.ts";
import type { McpServerOptions } from "./options.ts";

/** A served 2026-07-28 connection. */
export interface ModernConnection {
  /** Every toolset its engine has made or was given. */
  toolsets(): FinalizedToolset[];
  /** Ends it. */
  close(): Promise<void>;
}

/** Serves the 2026-07-28 requests that arrive on `channel`; `report` hears what goes wrong. */
export function serveModernStdio(
  toolset: FinalizedToolset,
  options: McpServerOptions,
  channel: EraChannel,
  report: (error: Error) => void,
): ModernConnection {
  const engine = createModernEngine(toolset, options);
  // One instance for the connection: the first request chose the revision.
  const served = serveStdio(() => engine.server(), {
    transport: channel,
    legacy: "reject",
    onerror: report,
  });
  return { toolsets: () => engine.toolsets(), close: () => served.close() };
}
