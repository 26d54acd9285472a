/**
 * What both protocol eras answer alike: the tool list, a tool result as an
 * MCP `tools/call` result, and the refusal text of a call nobody approved.
 * The servers of the 2025 revisions (`legacy_sdk.ts`, `createMcpServer`)
 * and of 2026-07-28 (`modern.ts`) share them, so the eras cannot drift apart.
 *
 * @module
 */
import type { FinalizedToolset } from "../contract/toolset.ts";
import type { ToolResult } from "../contract/result.ts";
import { boundArtifacts } from "./artifacts_meta.ts";

/**
 * The `_meta` key under which results carry their file-change artifacts. By
 * default a result's prior contents there total at most 64 KiB
 * (`META_PRIOR_CONTENT_BYTES`); past it an artifact has no `priorContent`
 * but `priorContentOmitted: true` and `priorContentBytes`. The option
 * `fullArtifacts` (CLI: `--full-artifacts`) sends them whole.
 */
export const ARTIFACTS_META_KEY = "openwork/artifacts";

/** What an MCP `tools/call` answers. */
export interface CallToolAnswer {
  [key: string]: unknown;
  /** The tool's text for the model. */
  content: { type: "text"; text: string }[];
  /** The tool's data, for a tool with an output schema that succeeded. */
  structuredContent?: Record<string, unknown>;
  /** Whether the call failed. */
  isError: boolean;
  /** The tool id, the duration and the artifacts. */
  _meta?: Record<string, unknown>;
}

/** The `tools/list` entries of a toolset. */
export function toolList(toolset: FinalizedToolset): Record<string, unknown>[] {
  return toolset.definitions.map((d) => ({
    name: d.name,
    title: d.title,
    description: d.description,
    inputSchema: d.inputSchema,
    ...(d.outputSchema === undefined ? {} : { outputSchema: d.outputSchema }),
    annotations: d.annotations,
  }));
}

/** The names of the tools whose results carry `structuredContent`. */
export function structuredTools(toolset: FinalizedToolset): ReadonlySet<string> {
  return new Set(
    toolset.definitions.filter((d) => d.outputSchema !== undefined).map((d) => d.name),
  );
}

/** A tool result as an MCP `tools/call` result. */
export function answer(
  result: ToolResult,
  structured: ReadonlySet<string>,
  fullArtifacts: boolean,
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
      [ARTIFACTS_META_KEY]: boundArtifacts(result.artifacts, fullArtifacts),
    },
  };
}

/** Why a call that needed approval did not run, in words for the model. */
export function refusal(
  what: string,
  source: string,
  how: string,
): { approved: false; reason: string } {
  return {
    approved: false,
    reason: `${what} needs the person's approval (${source}); ${how}. ` +
      "Prefer read-only commands, or ask the person to allow it.",
  };
}

/** The refusal's `how` for `--approval policy`. */
export const POLICY_ONLY: string =
  "the server runs with --approval policy, which runs only what the policy allows, so it " +
  "was not run";

/** The refusal's `how` for a client that cannot ask the person. */
export const NO_ELICITATION: string =
  "this MCP client cannot ask the person (no elicitation support), so it was not run; a " +
  "client that confirms each tool call itself can start the server with --approval client";
