/**
 * What the framework adapter tests share: a disk session in a temporary
 * directory, and waiting on a command's pid file and on its process's end.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  createSession,
  type FinalizedToolset,
  finalizeToolset,
  type PermissionMode,
  type ToolSessionContext,
} from "../mod.ts";
import {
  type Model,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
  Usage,
} from "@openai/agents";
import { MockLanguageModelV4 } from "ai/test";
import { sh, tempDir } from "./helpers.ts";

/** A session on a fresh temporary directory holding `files`, and its toolset. */
export async function diskToolset(
  files: Record<string, string> = {},
  mode: PermissionMode = "default",
): Promise<{
  root: string;
  session: ToolSessionContext;
  toolset: FinalizedToolset;
  cleanup(): Promise<void>;
}> {
  const dir = await tempDir();
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir.path, name), text);
  const session = await createSession({ workingDirectory: dir.path, permissions: { mode } });
  return { root: dir.path, session, toolset: finalizeToolset({ session }), cleanup: dir.cleanup };
}

import { until } from "./helpers.ts";
export { until };

/** A duration no other process sleeps: how a test finds the `sleep` a call started. */
export function uniqueNap(): string {
  return (300 + Math.random()).toFixed(6);
}

/**
 * Whether a `sleep <nap>` is running, found by its arguments (in a PID
 * namespace of its own the command sees other pids than the host's); a
 * zombie left to an init that does not reap is not running.
 */
export async function sleeping(nap: string): Promise<boolean> {
  const out = await sh(
    "ps -eo stat=,args= | awk '$1 !~ /^Z/ { $1 = \"\"; print substr($0, 2) }' | " +
      'grep -cxF "sleep $1" || true',
    nap,
  );
  return Number(out.trim()) > 0;
}

/** A bash command that starts `sleep <nap>` in the background and waits. */
export function sleeperCommand(nap: string): string {
  return `sleep ${nap} & wait`;
}

/** A tool call an Agents SDK model makes. */
export interface ScriptedCall {
  readonly name: string;
  readonly args: unknown;
  readonly callId?: string;
}

/** An Agents SDK model whose first response makes `calls`, and every later one answers in text. */
export class CallsOnceModel implements Model {
  #turn = 0;
  constructor(private readonly calls: readonly ScriptedCall[]) {}
  getResponse(_request: ModelRequest): Promise<ModelResponse> {
    this.#turn++;
    return Promise.resolve({
      usage: new Usage(),
      output: this.#turn === 1
        ? this.calls.map(({ name, args, callId }) => ({
          type: "function_call" as const,
          callId: callId ?? "call-1",
          name,
          arguments: JSON.stringify(args),
          status: "completed" as const,
        }))
        : [{
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "done" }],
        }],
    });
  }
  // deno-lint-ignore require-yield
  async *getStreamedResponse(_request: ModelRequest): AsyncIterable<StreamEvent> {
    throw new Error("not streamed");
  }
}

/** The token counts a mock AI SDK model reports. */
export const MOCK_USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** An AI SDK mock model whose first response makes `calls`, and whose second answers in text. */
export function callsOnceLanguageModel(calls: readonly ScriptedCall[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: [
      {
        content: calls.map(({ name, args, callId }) => ({
          type: "tool-call" as const,
          toolCallId: callId ?? "call-1",
          toolName: name,
          input: JSON.stringify(args),
        })),
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: MOCK_USAGE,
        warnings: [],
      },
      {
        content: [{ type: "text", text: "done" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: MOCK_USAGE,
        warnings: [],
      },
    ],
  });
}
