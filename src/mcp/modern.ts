/**
 * The MCP server for protocol revision 2026-07-28, on the official server
 * package: stateless (no `initialize`, no session), every request carrying
 * its protocol version and the client's capabilities in `_meta`. It serves
 * `server/discover`, `tools/list` and `tools/call` from the same toolset and
 * the same answers as the 2025 revisions (`legacy_sdk.ts`).
 *
 * Approval: a call the policy asks about is answered with `input_required`,
 * an elicitation for the person and a signed request state
 * ({@link ApprovalStates}); the call runs only when the client retries it
 * with that state and the person's acceptance, and only if the retried call
 * is the one asked about. The three approval modes are those of the 2025
 * engine.
 *
 * The working directory: `--root` (a toolset given without
 * `toolsetForRoot`) is every call's. Otherwise a request may name its own in
 * `_meta["openwork/root"]`, a `file://` URI; without it the call runs in the
 * server's starting directory. A request's root is its own: it never moves
 * the root of another request, running or to come.
 *
 * @module
 */
import { APPROVAL_FORM } from "./elicit_approval.ts";
import { fileURLToPath } from "node:url";
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { ApprovalRequest, FinalizedToolset } from "../contract/toolset.ts";
import type { ApprovalAnswer } from "../contract/policy.ts";
import type { ToolProgress } from "../contract/result.ts";
import { describeEffects } from "../contract/effects.ts";
import { type ApprovalState, ApprovalStates, digest } from "./approval_state.ts";
import { knownPace } from "./http_pace.ts";
import {
  answer,
  NO_ELICITATION,
  POLICY_ONLY,
  refusal,
  structuredTools,
  toolList,
} from "./tool_answer.ts";
import { MAX_ROOTS, type McpServerOptions } from "./options.ts";

/** The revision this engine serves. */
export const MODERN_PROTOCOL_VERSION = "2026-07-28";

/** The `_meta` key by which a request names its working directory (a `file://` URI). */
export const ROOT_META_KEY = "openwork/root";

/** The key under which the approval question travels in `inputRequests`. */
const APPROVE = "approve";

/** The 2026-07-28 engine of one toolset: a factory of per-request SDK servers. */
export interface ModernEngine {
  /** A fresh server for one request (HTTP) or one connection (stdio). */
  server(): Server;
  /** Every toolset the engine has made or was given (their processes end with the server). */
  toolsets(): FinalizedToolset[];
}

/** The refusal's `how` for a client whose elicitation takes URLs only. */
const URL_ELICITATION_ONLY = "this MCP client cannot ask the person with a form (its " +
  "elicitation takes URLs only), so it was not run; a client that confirms each tool call " +
  "itself can start the server with --approval client";

/**
 * Whether a client's `elicitation` capability takes forms: one that names
 * `form`, or names no mode at all (forms, as before URL elicitation).
 */
function answersForms(elicitation: unknown): boolean {
  if (typeof elicitation !== "object" || elicitation === null) return true;
  const modes = elicitation as Record<string, unknown>;
  return modes.form !== undefined || modes.url === undefined;
}

function invalidParams(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

/** Makes the 2026-07-28 engine for `toolset`, with the options of `createMcpServer`. */
export function createModernEngine(
  toolset: FinalizedToolset,
  options: McpServerOptions = {},
): ModernEngine {
  const approval = options.approval ?? "elicit";
  const states = new ApprovalStates();
  const structured = structuredTools(toolset);
  const made = new Map<string, Promise<FinalizedToolset>>();
  const settled = new Set<FinalizedToolset>([toolset]);

  /** The toolset of the request's working directory. */
  async function toolsetOf(meta: Record<string, unknown> | undefined): Promise<FinalizedToolset> {
    const make = options.toolsetForRoot;
    const uri = meta?.[ROOT_META_KEY];
    // --root wins: a server given a fixed root runs every call there.
    if (uri === undefined || make === undefined) return toolset;
    if (typeof uri !== "string" || !uri.startsWith("file://")) {
      throw invalidParams(`_meta["${ROOT_META_KEY}"] must be a file:// URI`);
    }
    let given: string;
    try {
      given = fileURLToPath(uri);
    } catch (error) {
      throw invalidParams(`_meta["${ROOT_META_KEY}"]: ${(error as Error).message}`);
    }
    const cannot = (error: unknown) =>
      invalidParams(
        `the working directory ${given} cannot be used: ${(error as Error)?.message ?? error}`,
      );
    // Known by the directory it names, not by its spelling: `/repo`, `/repo/` and a link to it
    // are one working directory, so they neither make a toolset each nor use up the cap.
    let path: string;
    try {
      path = await toolset.session.filesystem.realPath(given);
    } catch (error) {
      throw cannot(error);
    }
    if (path === toolset.session.workingDirectory) return toolset;
    const known = made.get(path);
    if (known !== undefined) return await known;
    // The server's own directory is one of them, as a 2025 session's fallback is.
    if (made.size + 1 >= MAX_ROOTS) {
      throw invalidParams(
        `this server serves at most ${MAX_ROOTS} working directories; ${path} is one more`,
      );
    }
    // A directory that cannot be used is the request's error, and is tried again next time.
    const making = make(path).then(async (next) => {
      // Replaced by a link meanwhile: the toolset would serve another directory under this name.
      if (next.session.workingDirectory === path) return next;
      await next.session.processes.shutdown();
      throw new Error(`it is now ${next.session.workingDirectory}`);
    }).catch((error) => {
      throw cannot(error);
    });
    made.set(path, making);
    making.then((next) => settled.add(next), () => made.delete(path));
    return await making;
  }

  async function call(
    params: { name: string; arguments?: unknown; _meta?: Record<string, unknown> },
    ctx: ServerContext,
  ): Promise<Record<string, unknown>> {
    const request = ctx.mcpReq;
    const meta = request._meta as Record<string, unknown> | undefined;
    const session = await toolsetOf(meta);
    const root = session.session.workingDirectory;
    const input = params.arguments === undefined ? {} : params.arguments;
    const call = { name: params.name, input: digest(input), root };
    // What the client echoed: a state this server signed (the SDK checked the signature, the
    // binding and the expiry before this handler runs) for this very call, used once.
    const state = request.requestState<ApprovalState>();
    const echoed = state !== undefined && state.name === call.name &&
      state.input === call.input && state.root === root && states.consume(state.nonce);
    const reply = inputResponse(request.inputResponses, APPROVE);
    const capabilities = (request.envelope as Record<string, unknown> | undefined)
      ?.[CLIENT_CAPABILITIES_META_KEY] as Record<string, unknown> | undefined;

    let asked: string | undefined;
    // Decided at once, from the request alone: this revision has no question mid-call.
    const decide = (
      { prepared, verdict, question }: ApprovalRequest,
    ): ApprovalAnswer => {
      const refused = (how: string) =>
        refusal(describeEffects(prepared.name, prepared.effects), verdict.source, how);
      if (approval === "client") return true;
      if (approval === "policy") return refused(POLICY_ONLY);
      // A retry that carries the state but no answer is asked again, with a fresh state.
      if (state !== undefined && reply.kind !== "missing") {
        if (!echoed || state.question !== digest(question)) {
          return refused(
            "the approval the client sent back does not belong to this call, or was used " +
              "already, so it was not run",
          );
        }
        if (
          reply.kind === "elicit" && reply.action === "accept" && reply.content?.approve === true
        ) {
          return true;
        }
        return refused("the person declined it");
      }
      if (capabilities?.elicitation === undefined) return refused(NO_ELICITATION);
      // The question is a form: a client that takes URL elicitations only cannot answer it.
      if (!answersForms(capabilities.elicitation)) return refused(URL_ELICITATION_ONLY);
      asked = question;
      return { approved: false, reason: "asked" };
    };
    const approve = (request: ApprovalRequest) => Promise.resolve(decide(request));

    const token = meta?.progressToken as string | number | undefined;
    let sent = 0;
    // Over HTTP, the sink waits while the client is behind in reading: the tool's relay then
    // holds events back, and past its budget drops them, rather than piling them up.
    const pace = knownPace(ctx.http?.req);
    const progress = token === undefined ? undefined : async (event: ToolProgress) => {
      await pace?.ready();
      await request.notify({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: ++sent,
          message: event.kind === "message" ? event.message : event.chunk,
        },
      });
    };
    const result = await session.call({
      name: params.name,
      input,
      callId: `mcp-${String(request.id)}`,
      signal: request.signal,
      approve,
      ...(progress === undefined ? {} : { progress }),
    });
    if (asked !== undefined) {
      // Nothing ran: the call stopped at its approval. The client asks the person and retries.
      return inputRequired({
        inputRequests: {
          [APPROVE]: inputRequired.elicit({ ...APPROVAL_FORM, message: asked }),
        },
        requestState: await states.mint({ ...call, question: digest(asked) }, ctx),
      }) as unknown as Record<string, unknown>;
    }
    return answer(result, structured, options.fullArtifacts === true);
  }

  return {
    server() {
      const server = new Server(
        { name: options.name ?? "openwork-tools", version: options.version ?? "0.0.0" },
        {
          capabilities: { tools: {} },
          requestState: { verify: (state, ctx) => states.verify(state, ctx) },
        },
      );
      server.setRequestHandler("tools/list", () => ({ tools: toolList(toolset) }) as never);
      server.setRequestHandler(
        "tools/call",
        (request, ctx) => call(request.params as never, ctx) as never,
      );
      return server;
    },
    toolsets: () => [...settled],
  };
}
