/**
 * A stdio connection served by the official server package's stdio entry
 * over the package's own transport (through the connection's
 * {@link EraChannel}): its first request that chooses a revision makes the
 * server instance, of 2026-07-28 (`modern.ts`) or of the 2025 revisions
 * (`legacy_sdk.ts`).
 *
 * @module
 */
import { isJSONRPCRequest } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { FinalizedToolset } from "../contract/toolset.ts";
import type { Era, EraChannel } from "./eras.ts";
import { errorReply, JSONRPC_ERROR, type JsonRpcMessage } from "./jsonrpc.ts";
import type { RequestChecks } from "./request_checks.ts";
import { createModernEngine, type ModernEngine } from "./modern.ts";
import { createLegacyInstance, type LegacyInstance } from "./legacy_sdk.ts";
import type { McpServerOptions } from "./options.ts";
import type { McpTransport, SendOptions } from "./protocol.ts";

/** A served stdio connection. */
export interface ModernConnection {
  /** Every toolset its server instance has made or was given. */
  toolsets(): FinalizedToolset[];
  /** Ends it. */
  close(): Promise<void>;
  /** The revision the server package serves the connection in, once it made an engine for it. */
  era(): Era | undefined;
  /** Sends a warning to a 2025-era client that has initialized (2026-07-28 has no logging). */
  warn(message: string): void;
}

type Receive = (message: JsonRpcMessage, extra?: unknown) => void;

/**
 * The channel as the server package sees it. A request that the package's
 * JSON-RPC schema refuses (a `_meta` that is not an object, a
 * `_meta.progressToken` that is neither a string nor a number, `params`
 * that is an array) would be dropped there without
 * an answer, leaving the client waiting: it is answered here, with -32600
 * and its id, as over HTTP.
 */
function answeringChannel(channel: EraChannel, report: (error: Error) => void): McpTransport {
  return {
    start: () => channel.start(),
    send: (message: JsonRpcMessage, options?: SendOptions) => channel.send(message, options),
    close: () => channel.close(),
    get onmessage(): Receive | undefined {
      return channel.onmessage;
    },
    set onmessage(receive: Receive | undefined) {
      channel.onmessage = receive === undefined ? undefined : (message, extra) => {
        const id = message.id;
        const request = typeof message.method === "string" &&
          (typeof id === "string" || typeof id === "number");
        if (!request || isJSONRPCRequest(message)) return receive(message, extra);
        const refusal = `Invalid Request: ${message.method} does not fit the JSON-RPC request ` +
          "of protocol revision 2026-07-28 (params and its _meta must be objects, " +
          "_meta.progressToken a string or a number).";
        report(new Error(`refused input: ${refusal}`));
        channel.send(errorReply(id, JSONRPC_ERROR.invalidRequest, refusal) as never)
          .catch(report);
      };
    },
    get onerror() {
      return channel.onerror;
    },
    set onerror(hear: ((error: Error) => void) | undefined) {
      channel.onerror = hear;
    },
    get onclose() {
      return channel.onclose;
    },
    set onclose(hear: (() => void) | undefined) {
      channel.onclose = hear;
    },
  };
}

/**
 * Serves the requests that arrive on `channel`, of either era; `report`
 * hears what goes wrong, `checks` keeps the arguments of 2025-era calls it
 * set aside.
 */
export function serveModernStdio(
  toolset: FinalizedToolset,
  options: McpServerOptions,
  channel: EraChannel,
  report: (error: Error) => void,
  checks: RequestChecks,
): ModernConnection {
  let modern: ModernEngine | undefined;
  let legacy: LegacyInstance | undefined;
  /** Every 2025-era instance made (the package makes one a connection; all are ended). */
  const legacies: LegacyInstance[] = [];
  // One instance for the connection: its first request chose the revision.
  const served = serveStdio(({ era }) => {
    if (era === "modern") {
      modern ??= createModernEngine(toolset, options);
      return modern.server();
    }
    legacy = createLegacyInstance(toolset, options, (id) => checks.takeArguments(id));
    legacies.push(legacy);
    return legacy.server;
  }, {
    transport: answeringChannel(channel, report),
    legacy: "serve",
    onerror: report,
  });
  return {
    era: () => (modern !== undefined ? "modern" : legacies.length > 0 ? "legacy" : undefined),
    toolsets: () => [...(modern?.toolsets() ?? []), ...legacies.flatMap((made) => made.toolsets())],
    close: () => served.close(),
    warn(message) {
      if (legacy?.server.getClientVersion() === undefined) return;
      void legacy.server.sendLoggingMessage({
        level: "warning",
        logger: "openwork-tools",
        data: message,
      }).catch(() => {});
    },
  };
}
