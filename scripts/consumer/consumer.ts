// Type-checked with tsc --noEmit (moduleResolution nodenext) against the shipped .d.ts.
import {
  type BashOutput,
  createSession,
  type FinalizedToolset,
  finalizeToolset,
  type ToolResult,
  toOpenAITools,
} from "@openwork/tools";
import { createNodeFileSystem } from "@openwork/tools/node";

export async function useIt(directory: string): Promise<number | null> {
  const session = await createSession({
    workingDirectory: directory,
    filesystem: createNodeFileSystem(),
    permissions: { mode: "plan" },
  });
  const toolset: FinalizedToolset = finalizeToolset({ session, select: ["bash", "read"] });
  const tools = toOpenAITools(toolset.definitions);
  const result: ToolResult = await toolset.call({
    name: tools[0].function.name,
    input: { command: "pwd" },
    callId: "1",
  });
  return (result.data as BashOutput).exit_code;
}
