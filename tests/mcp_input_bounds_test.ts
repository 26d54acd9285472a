/**
 * Long input over MCP, against the official client: a 94 KB `bash` command
 * gets its answer without its operands being classified, a 2 MB one is
 * invalid_input in a short answer, and a client's
 * cancel stops a classification under way, so the server does no more of
 * its work and keeps serving.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  type CallRequest,
  type FinalizedToolset,
  finalizeToolset,
  MAX_COMMAND_BYTES,
  type ToolResult,
} from "../mod.ts";
import { createMcpServer, type McpTransport } from "../mcp.ts";
import { countedSession, LONG_COMMAND, Lookups, lsCommand, TWO_MB } from "./lookups_fixture.ts";

/** The calls a toolset was asked to make: their requests and, once ended, their results. */
interface Watched {
  readonly toolset: FinalizedToolset;
  readonly calls: { request: CallRequest; result: Promise<ToolResult> }[];
}

/** `toolset`, recording every call the server makes through it. */
function watched(toolset: FinalizedToolset): Watched {
  const calls: Watched["calls"] = [];
  const call = (request: CallRequest) => {
    const result = toolset.call(request);
    calls.push({ request, result });
    return result;
  };
  return { toolset: { ...toolset, call } as FinalizedToolset, calls };
}

/** A connected client of a server in this process over `toolset`, with the server's approval mode. */
async function connected(toolset: FinalizedToolset): Promise<Client> {
  const server = createMcpServer(toolset, { approval: "policy" });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  // The SDK's in-memory transport carries the SDK's message type; the server takes any JSON-RPC.
  await server.connect(serverSide as unknown as McpTransport);
  const client = new Client({ name: "openwork-test", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

function text(result: object): string {
  return (result as { content: { text: string }[] }).content.map((c) => c.text).join("\n");
}

/** Resolves once `signal` has aborted. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

test("MCP: a 94 KB bash command gets an answer (it needs approval) without its operands being classified", async () => {
  const lookups = new Lookups();
  const { toolset, calls } = watched(finalizeToolset({ session: await countedSession(lookups) }));
  const client = await connected(toolset);
  try {
    const answer = await client.callTool({ name: "bash", arguments: { command: LONG_COMMAND } });
    assert.equal(answer.isError, true);
    const said = text(answer);
    assert.ok(said.startsWith("[denied] bash: run `ls f0 f1 "), said.slice(0, 100));
    assert.ok(said.includes("needs the person's approval"), said.slice(-300));
    assert.equal((await calls[0].result).error?.code, "denied");
    assert.equal(lookups.count, 0);
  } finally {
    await client.close();
  }
});

test("MCP: a 2 MB bash command is invalid_input naming the bound, in a short answer", async () => {
  const lookups = new Lookups();
  const { toolset, calls } = watched(finalizeToolset({ session: await countedSession(lookups) }));
  const client = await connected(toolset);
  try {
    const answer = await client.callTool({ name: "bash", arguments: { command: TWO_MB } });
    assert.equal(answer.isError, true);
    const said = text(answer);
    assert.match(said, new RegExp(`at most ${MAX_COMMAND_BYTES} characters`));
    assert.ok(said.length < 1000, `${said.length} characters`);
    assert.equal((await calls[0].result).error?.code, "invalid_input");
    assert.equal(lookups.count, 0);
  } finally {
    await client.close();
  }
});

test("MCP: a client's cancel stops the classification under way, and the server keeps serving", async () => {
  const lookups = new Lookups();
  const { toolset, calls } = watched(finalizeToolset({ session: await countedSession(lookups) }));
  const client = await connected(toolset);
  try {
    const cancel = new AbortController();
    let atCancel = 0;
    // Each operand is one lookup: the client cancels while f2 is looked up, and the lookup
    // ends only once the server has taken the cancel.
    lookups.onLookup = async (path) => {
      if (path !== "/repo/f2") return;
      cancel.abort();
      await aborted(calls[0].request.signal!);
      atCancel = lookups.count;
    };
    const call = client.callTool(
      { name: "bash", arguments: { command: lsCommand(10) } },
      undefined,
      { signal: cancel.signal },
    );
    await assert.rejects(call);
    const result = await calls[0].result;
    assert.equal(result.error?.code, "cancelled", result.output);
    assert.equal(lookups.last, "/repo/f2");
    assert.equal(lookups.count, atCancel, "no lookup after the cancel");

    lookups.onLookup = () => {};
    const read = await client.callTool({ name: "read", arguments: { path: "f0" } });
    assert.equal(read.isError, false, text(read));
    assert.match(text(read), /1\t0/);
  } finally {
    await client.close();
  }
});
