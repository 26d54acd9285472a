/**
 * The npm build's rule on the MCP server SDK: only the MCP entry and what it
 * imports load it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { dynamicImports, reachable, sdkBoundaryProblems, staticImports } from "./sdk_boundary.ts";

const PACKAGE = new Map([
  ["mod.js", 'export { a } from "./src/a.js";\nimport "./src/side.js";'],
  ["mcp.js", 'export { serve } from "./src/mcp/server.js";'],
  ["cli.js", 'const { serve } = await import("./src/mcp/server.js");'],
  ["src/a.js", "export const a = 1;"],
  ["src/side.js", ""],
  [
    "src/mcp/server.js",
    'import { Server } from "@modelcontextprotocol/server";\nimport { a } from "../a.js";\n' +
    'const later = () => import("./modern.js");',
  ],
  ["src/mcp/modern.js", 'import { Server } from "@modelcontextprotocol/server";'],
]);

test("build: the static imports of a built file, and the files an entry reaches", () => {
  assert.deepEqual(staticImports(PACKAGE.get("mod.js")!), ["./src/a.js", "./src/side.js"]);
  assert.deepEqual(staticImports(PACKAGE.get("cli.js")!), []);
  assert.deepEqual(dynamicImports(PACKAGE.get("cli.js")!), ["./src/mcp/server.js"]);
  assert.deepEqual([...reachable("cli.js", PACKAGE)], ["cli.js"]);
  assert.deepEqual([...reachable("mcp.js", PACKAGE, true)].sort(), [
    "mcp.js",
    "src/a.js",
    "src/mcp/modern.js",
    "src/mcp/server.js",
  ]);
  assert.deepEqual([...reachable("mcp.js", PACKAGE)].sort(), [
    "mcp.js",
    "src/a.js",
    "src/mcp/server.js",
  ]);
});

test("build: the MCP entry may load the server SDK, statically or dynamically, and the CLI only dynamically", () => {
  assert.deepEqual(sdkBoundaryProblems(PACKAGE, ["mod.js", "mcp.js", "cli.js"], "mcp.js"), []);
});

test("build: another entry that reaches the SDK, a file outside the MCP entry, or the client SDK is refused", () => {
  const leaky = new Map(PACKAGE);
  leaky.set("mod.js", 'export { serve } from "./src/mcp/server.js";');
  assert.deepEqual(sdkBoundaryProblems(leaky, ["mod.js", "mcp.js"], "mcp.js"), [
    "mod.js loads the MCP SDK (through src/mcp/server.js)",
  ]);
  const stray = new Map(PACKAGE);
  stray.set("src/a.js", 'import { Server } from "@modelcontextprotocol/server";');
  assert.deepEqual(sdkBoundaryProblems(stray, ["mod.js", "mcp.js"], "mcp.js"), [
    "mod.js loads the MCP SDK (through src/a.js)",
  ]);
  const orphan = new Map(PACKAGE);
  orphan.set("src/orphan.js", 'import { Client } from "@modelcontextprotocol/client";');
  assert.deepEqual(sdkBoundaryProblems(orphan, ["mod.js", "mcp.js"], "mcp.js"), [
    "src/orphan.js imports @modelcontextprotocol/client, which the package does not depend on",
    "src/orphan.js imports the MCP SDK but mcp.js does not import it",
  ]);
});
