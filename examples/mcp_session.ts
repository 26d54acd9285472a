/**
 * A recorded MCP session: the official SDK client launches `cli.ts mcp` over
 * stdio and makes the calls the MCP test makes; every JSON-RPC message is
 * printed, one line each, long texts shortened.
 *
 * Run: deno task mcp:session
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const root = await Deno.makeTempDir({ prefix: "owt-mcp-" });
await Deno.writeTextFile(`${root}/a.txt`, "alpha\nbeta\n");
const cli = new URL("../cli.ts", import.meta.url).pathname;
const transport = new StdioClientTransport({
  command: "deno",
  args: [
    "run",
    "--quiet",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-run=bash",
    "--allow-sys=uid",
    "--no-prompt",
    cli,
    "mcp",
    "--root",
    root,
  ],
  env: Deno.env.toObject(),
});

const shorten = (value: unknown): unknown => {
  if (typeof value === "string") return value.length > 90 ? `${value.slice(0, 87)}…` : value;
  if (Array.isArray(value)) {
    return value.length > 7 ? [...value.slice(0, 7).map(shorten), "…"] : value.map(shorten);
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map((
        [k, v],
      ) => [k, k === "inputSchema" || k === "hunks" ? "…" : shorten(v)]),
    );
  }
  return value;
};
const send = transport.send.bind(transport);
transport.send = (message: JSONRPCMessage, options?: Parameters<typeof send>[1]) => {
  console.log(`→ ${JSON.stringify(shorten(message))}`);
  return send(message, options);
};
const client = new Client({ name: "transcript", version: "1.0.0" }, {
  capabilities: { elicitation: {} },
});
client.setRequestHandler(
  ElicitRequestSchema,
  () => Promise.resolve({ action: "accept", content: { approve: true } }),
);
const onmessage = () => {
  const inner = transport.onmessage!;
  transport.onmessage = (message: JSONRPCMessage, extra?: Parameters<typeof inner>[1]) => {
    console.log(`← ${JSON.stringify(shorten(message))}`);
    inner(message, extra);
  };
};
await client.connect(transport);
onmessage();

await client.listTools();
await client.callTool({ name: "read", arguments: { path: "a.txt" } });
await client.callTool({
  name: "edit",
  arguments: { path: "a.txt", old_text: "beta", new_text: "gamma" },
});
await client.callTool({ name: "grep", arguments: { pattern: "gam+a", mode: "content" } });
await client.callTool(
  { name: "bash", arguments: { command: "for i in 1 2; do echo tick $i; sleep 0.05; done" } },
  undefined,
  { onprogress: () => {} },
);
const cancel = new AbortController();
const long = client.callTool({ name: "bash", arguments: { command: "sleep 300" } }, undefined, {
  signal: cancel.signal,
});
setTimeout(() => cancel.abort(), 300);
await long.catch((error: Error) => console.log(`   (client: ${error.message})`));
await client.callTool({ name: "read", arguments: { path: "/etc/passwd" } });
await client.close();
await Deno.remove(root, { recursive: true });
