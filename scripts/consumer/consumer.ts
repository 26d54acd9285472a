// Type-checked with tsc --noEmit (moduleResolution nodenext) against the shipped .d.ts.
import {
  type BashOutput,
  createSession,
  type FinalizedToolset,
  finalizeToolset,
  type ReadOutput,
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

// The shipped declarations keep calls typed: names, inputs, data, and the result's union.
export async function typed(directory: string): Promise<string> {
  const toolset = finalizeToolset({
    session: await createSession({ workingDirectory: directory }),
  });
  const read = await toolset.call({ name: "read", input: { path: "a.txt" }, callId: "1" });
  const lines: readonly string[] | undefined = read.data?.lines;
  const data: ReadOutput | undefined = read.data;
  // @ts-expect-error: no tool is named grepp.
  await toolset.call({ name: "grepp", input: {}, callId: "2" });
  // @ts-expect-error: read's path is a string.
  await toolset.prepare("read", { path: 1 });
  // @ts-expect-error: error is there only when ok is false.
  read.error.code;
  const fromModel: { name: string; input: unknown } = JSON.parse('{"name":"list","input":{}}');
  const raw = await toolset.call({ ...fromModel, callId: "3" });
  return read.ok
    ? `${lines?.length ?? 0} ${data?.path ?? ""}`
    : `${read.error.code} ${raw.ok ? "" : raw.error.message}`;
}
