/**
 * The MCP server against the official MCP Inspector in its command-line
 * mode, as a person checking the server would run it. The Inspector comes
 * from npm through `npx` (0.15.0: later versions need Node 22).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { sh, tempDir } from "./helpers.ts";
import { cliCommand } from "./mcp_helpers.ts";

const INSPECTOR = "@modelcontextprotocol/inspector@0.15.0";

/** Runs the Inspector CLI against the server with `method` and its flags; resolves its JSON output. */
async function inspect(root: string, ...method: string[]): Promise<Record<string, unknown>> {
  const { command, args } = cliCommand();
  const out = await sh(
    'npx -y --loglevel=error "$@"',
    INSPECTOR,
    "--cli",
    command,
    ...args,
    "mcp",
    "--root",
    root,
    ...method,
  );
  return JSON.parse(out) as Record<string, unknown>;
}

test("MCP: the official Inspector CLI lists the seven tools and calls one", async () => {
  const dir = await tempDir();
  try {
    await writeFile(`${dir.path}/a.txt`, "hello inspector\n");
    const listed = await inspect(dir.path, "--method", "tools/list");
    const tools = listed.tools as { name: string; inputSchema: { type: string } }[];
    assert.deepEqual(
      tools.map((t) => t.name),
      ["read", "write", "edit", "grep", "glob", "list", "bash"],
    );
    for (const tool of tools) assert.equal(tool.inputSchema.type, "object");
    const called = await inspect(
      dir.path,
      "--method",
      "tools/call",
      "--tool-name",
      "read",
      "--tool-arg",
      "path=a.txt",
    );
    assert.equal(called.isError, false);
    const content = called.content as { type: string; text: string }[];
    assert.match(content[0].text, /1\thello inspector/);
    const refused = await inspect(
      dir.path,
      "--method",
      "tools/call",
      "--tool-name",
      "read",
      "--tool-arg",
      "path=/etc/hostname",
    );
    assert.equal(refused.isError, true);
    assert.match((refused.content as { text: string }[])[0].text, /path_outside_root/);
  } finally {
    await dir.cleanup();
  }
});
