/**
 * The MCP server against the official MCP client over stdio, and the CLI
 * spawned as a user would.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { builtinRegistry, type FileChangeArtifact, type ToolRisk } from "../mod.ts";
import { boundArtifacts, META_PRIOR_CONTENT_BYTES } from "../mcp.ts";
import { ALL_TOOLS, sh, tempDir } from "./helpers.ts";
import { cliCommand, ENV } from "./mcp_helpers.ts";
import { startHttpServer } from "./mcp_clients.ts";

async function connect(
  root: string,
  mode: string,
  elicitation: boolean,
  extra: readonly string[] = [],
): Promise<Client> {
  const { command, args } = cliCommand();
  const transport = new StdioClientTransport({
    command,
    args: [...args, "mcp", "--root", root, "--mode", mode, ...extra],
    env: ENV,
    stderr: "ignore",
  });
  const client = new Client({ name: "openwork-test", version: "1.0.0" }, {
    capabilities: elicitation ? { elicitation: {} } : {},
  });
  if (elicitation) {
    client.setRequestHandler(
      ElicitRequestSchema,
      () => Promise.resolve({ action: "accept" as const, content: { approve: true } }),
    );
  }
  await client.connect(transport);
  return client;
}

function text(result: object): string {
  return (result as { content: { text: string }[] }).content.map((c) => c.text).join("\n");
}

async function alive(pid: number): Promise<boolean> {
  const out = await sh('ps -o stat= -p "$1" || true', String(pid));
  return out.trim() !== "" && !out.trim().startsWith("Z");
}

test("MCP: an edit's file_change artifact goes in _meta, not the content; input of the wrong type is invalid_input", async () => {
  const dir = await tempDir();
  const client = await connect(dir.path, "acceptEdits", true);
  try {
    await writeFile(`${dir.path}/a.txt`, "alpha\nbeta\n");
    const { tools } = await client.listTools();
    assert.equal(tools[0].inputSchema.additionalProperties, false);
    const edit = await client.callTool({
      name: "edit",
      arguments: { path: "a.txt", old_text: "beta", new_text: "gamma" },
    });
    assert.equal(edit.isError, false, text(edit));
    const artifacts = edit._meta?.["openwork/artifacts"] as {
      kind: string;
      added: number;
      removed: number;
    }[];
    assert.equal(artifacts[0].kind, "file_change");
    assert.deepEqual([artifacts[0].added, artifacts[0].removed], [1, 1]);
    assert.doesNotMatch(text(edit), /file_change|sha256|@@/, "artifacts stay out of the content");
    assert.equal(await readFile(`${dir.path}/a.txt`, "utf8"), "alpha\ngamma\n");
    const outside = await client.callTool({ name: "read", arguments: { path: "/etc/passwd" } });
    assert.equal(outside.isError, true);
    assert.match(text(outside), /\[path_outside_root\]/);
    const bad = await client.callTool({ name: "read", arguments: { path: 3 } });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /\[invalid_input\].*path: expected string/s);
  } finally {
    await client.close();
    await dir.cleanup();
  }
});

test("MCP: where the policy says ask and the client cannot elicit, the call is refused with a readable reason", async () => {
  const dir = await tempDir();
  const plain = await connect(dir.path, "default", false);
  try {
    const write = await plain.callTool({
      name: "write",
      arguments: { path: "x.txt", content: "x" },
    });
    assert.equal(write.isError, true);
    assert.match(
      text(write),
      /\[denied\] write: write x\.txt needs the person's approval .*no elicitation/,
    );
    const readOnly = await plain.callTool({ name: "bash", arguments: { command: "ls -a" } });
    assert.equal(readOnly.isError, false, "read-only commands run without asking");
  } finally {
    await plain.close();
  }
  await dir.cleanup();
  const planned = await connect("/tmp", "plan", true);
  try {
    const { tools } = await planned.listTools();
    assert.deepEqual(tools.map((t: { name: string }) => t.name), [
      "read",
      "grep",
      "glob",
      "list",
      "bash",
    ]);
    const bash = await planned.callTool({
      name: "bash",
      arguments: { command: "touch /tmp/nope" },
    });
    assert.match(text(bash), /\[denied\]/);
  } finally {
    await planned.close();
  }
});

/** The hints each risk class must advertise: the acceptance list for the server's one table. */
const HINTS_BY_RISK: Record<string, Record<string, boolean>> = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  write: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  execute: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  },
};

test("MCP: every tool is listed with a title, annotations consistent with its risk, and an output schema", async () => {
  const dir = await tempDir();
  const client = await connect(dir.path, "default", false);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t: { name: string }) => t.name), ALL_TOOLS);
    const risks = new Map<string, ToolRisk>(builtinRegistry().tools.map((t) => [t.name, t.risk]));
    const titles = new Set<string>();
    for (const tool of tools) {
      assert.equal(typeof tool.title, "string", tool.name);
      assert.ok(tool.title!.length > 0 && tool.title !== tool.name, tool.name);
      titles.add(tool.title!);
      const { title, ...hints } = tool.annotations ?? {};
      assert.equal(title, tool.title, tool.name);
      assert.deepEqual(hints, HINTS_BY_RISK[risks.get(tool.name)!], tool.name);
      const schema = tool.outputSchema as Record<string, unknown> | undefined;
      assert.equal(schema?.type, "object", tool.name);
      assert.equal(schema?.additionalProperties, false, tool.name);
      assert.equal("$schema" in (schema ?? {}), false, tool.name);
      // The schema compiles, and rejects what is not the tool's output.
      const validate = new AjvJsonSchemaValidator().getValidator(schema!);
      assert.equal(validate({ surely_not_a_field: 1 }).valid, false, tool.name);
    }
    assert.equal(titles.size, tools.length, "titles are distinct");
  } finally {
    await client.close();
    await dir.cleanup();
  }
});

test("MCP: every tool's structuredContent is its data and validates against its outputSchema; errors carry none", async () => {
  const dir = await tempDir();
  const client = await connect(dir.path, "acceptEdits", true);
  try {
    await writeFile(`${dir.path}/a.txt`, "alpha\nbeta\ngamma\n");
    const { tools } = await client.listTools();
    const validators = new Map<
      string,
      (value: unknown) => { valid: boolean; errorMessage?: string }
    >(
      tools.map((t: { name: string; outputSchema?: Record<string, unknown> }) => [
        t.name,
        new AjvJsonSchemaValidator().getValidator(t.outputSchema ?? {}),
      ]),
    );
    const calls: [string, Record<string, unknown>][] = [
      ["read", { path: "a.txt", limit: 2 }],
      ["write", { path: "sub/b.txt", content: "one\ntwo\n" }],
      ["write", { path: "sub/b.txt", content: "one\ntwo\n" }],
      ["edit", { path: "a.txt", old_text: "beta", new_text: "BETA" }],
      ["edit", { path: "new.txt", old_text: "", new_text: "fresh\n" }],
      ["grep", { pattern: "a" }],
      ["grep", { pattern: "BETA", mode: "content", context: 1 }],
      ["grep", { pattern: "o", mode: "count", max_results: 1 }],
      ["glob", { pattern: "**/*.txt" }],
      ["list", { path: "sub" }],
      ["bash", { command: "echo out; echo err >&2; exit 3" }],
    ];
    const called = new Set<string>();
    for (const [name, args] of calls) {
      const result = await client.callTool({ name, arguments: args });
      assert.equal(result.isError, false, `${name}: ${text(result)}`);
      const structured = result.structuredContent;
      assert.ok(structured !== undefined, `${name} returns structuredContent`);
      const verdict = validators.get(name)!(structured);
      assert.ok(verdict.valid, `${name}: ${verdict.errorMessage}`);
      called.add(name);
    }
    assert.deepEqual([...called].sort(), [...ALL_TOOLS].sort());
    const read = await client.callTool({ name: "read", arguments: { path: "a.txt", limit: 2 } });
    assert.deepEqual(read.structuredContent, {
      path: "a.txt",
      offset: 0,
      lines: ["alpha", "BETA"],
      nextOffset: 2,
      stoppedBy: "limit",
      totalLines: null,
    });
    const failed = await client.callTool({ name: "read", arguments: { path: "missing.txt" } });
    assert.equal(failed.isError, true);
    assert.equal(
      failed.structuredContent,
      undefined,
      "an error result carries no structuredContent",
    );
    const timedOut = await client.callTool({
      name: "bash",
      arguments: { command: "sleep 5", timeout_ms: 50 },
    });
    assert.equal(timedOut.isError, true);
    assert.equal(timedOut.structuredContent, undefined);
  } finally {
    await client.close();
    await dir.cleanup();
  }
});

test("MCP: an edit of a large file keeps _meta under the prior-content cap; --full-artifacts restores it", async () => {
  const dir = await tempDir();
  const line = "x".repeat(99) + "\n";
  const original = `first\n${line.repeat(9250)}last\n`; // about 925 KB
  try {
    for (const full of [false, true]) {
      await writeFile(`${dir.path}/big.txt`, original);
      const client = await connect(
        dir.path,
        "acceptEdits",
        false,
        full ? ["--full-artifacts"] : [],
      );
      try {
        const edit = await client.callTool({
          name: "edit",
          arguments: { path: "big.txt", old_text: "first", new_text: "FIRST" },
        });
        assert.equal(edit.isError, false, text(edit));
        const meta = JSON.stringify(edit._meta);
        const [artifact] = edit._meta?.["openwork/artifacts"] as Record<string, unknown>[];
        assert.deepEqual([artifact.kind, artifact.added, artifact.removed], ["file_change", 1, 1]);
        if (full) {
          assert.equal(artifact.priorContent, original);
          assert.equal("priorContentOmitted" in artifact, false);
        } else {
          assert.ok(meta.length < 64 * 1024, `_meta is ${meta.length} bytes`);
          assert.equal("priorContent" in artifact, false);
          assert.equal(artifact.priorContentOmitted, true);
          assert.equal(artifact.priorContentBytes, new TextEncoder().encode(original).byteLength);
          assert.equal(typeof artifact.sha256Before, "string");
        }
      } finally {
        await client.close();
      }
    }
  } finally {
    await dir.cleanup();
  }
});

test("MCP: _meta keeps prior contents up to 64 KiB per result, in order, and marks those left out", () => {
  const artifact = (path: string, priorContent: string | null): FileChangeArtifact => ({
    kind: "file_change",
    changeId: path,
    path,
    change: priorContent === null ? "created" : "modified",
    added: 1,
    removed: 1,
    hunks: [],
    sha256Before: priorContent === null ? null : "0".repeat(64),
    sha256After: "1".repeat(64),
    priorContent,
    undone: false,
  });
  assert.equal(META_PRIOR_CONTENT_BYTES, 64 * 1024);
  const half = "é".repeat(16 * 1024); // 32 KiB in UTF-8
  const all = [
    artifact("a", half),
    artifact("b", null),
    artifact("c", half + "x"),
    artifact("d", half.slice(1)),
  ];
  const bounded = boundArtifacts(all, false) as unknown as readonly Record<string, unknown>[];
  assert.equal(bounded[0].priorContent, half);
  assert.equal(bounded[1].priorContent, null);
  assert.equal("priorContent" in bounded[2], false);
  assert.deepEqual([bounded[2].priorContentOmitted, bounded[2].priorContentBytes], [
    true,
    32 * 1024 + 1,
  ]);
  assert.equal(bounded[3].priorContent, half.slice(1), "a later one that fits is kept");
  assert.equal(bounded[2].sha256Before, "0".repeat(64), "the rest of an artifact is kept");
  assert.equal(boundArtifacts(all, true), all);
});

function runCli(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { command, args: base } = cliCommand();
  return new Promise((resolve) => {
    const child = spawn(command, [...base, ...args], {
      cwd,
      env: ENV,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

test("CLI: tools, call, help, and one-line errors with exit code 2", async () => {
  const dir = await tempDir();
  try {
    await writeFile(`${dir.path}/notes.md`, "# Notes\nTODO: ship\n");
    const tools = await runCli(["tools", "--format", "anthropic"], dir.path);
    assert.equal(tools.code, 0, tools.stderr);
    assert.deepEqual(JSON.parse(tools.stdout).map((t: { name: string }) => t.name), ALL_TOOLS);
    const grep = await runCli(["call", "grep", '{"pattern":"TODO","mode":"content"}'], dir.path);
    assert.deepEqual([grep.code, grep.stdout], [0, "notes.md:2:TODO: ship\n"]);
    const json = await runCli(["call", "read", '{"path":"notes.md"}', "--json"], dir.path);
    assert.equal(JSON.parse(json.stdout).ok, true);
    const missing = await runCli(["call", "read", '{"path":"nope.md"}', "--root", dir.path], "/");
    assert.equal(missing.code, 1);
    assert.deepEqual([missing.stdout, /not_found/.test(missing.stderr)], ["", true]);
    const edit = await runCli([
      "call",
      "edit",
      '{"path":"notes.md","old_text":"ship","new_text":"done"}',
      "--mode",
      "acceptEdits",
    ], dir.path);
    assert.equal(edit.code, 0, edit.stderr);
    const asks = await runCli(["call", "write", '{"path":"x","content":"x"}'], dir.path);
    assert.equal(asks.code, 1);
    assert.match(asks.stderr, /needs approval .* no terminal to ask/);
    const live = await runCli([
      "call",
      "bash",
      '{"command":"echo streamed; pwd"}',
      "--mode",
      "plan",
    ], dir.path);
    assert.equal(live.code, 0, live.stderr);
    assert.equal(live.stdout, `streamed\n${dir.path}\n`, "bash output is shown once, on stdout");
    assert.equal(live.stderr, "");
    for (
      const [args, pattern] of [
        [["tools", "--bogus"], /Unknown option '--bogus'/],
        [["call", "read", "{bad"], /JSON argument does not parse/],
        [["frobnicate"], /unknown command "frobnicate"/],
        [["call", "read"], /takes a tool name and one JSON argument/],
        [["call", "read", "{}", "extra"], /takes a tool name and one JSON argument/],
        [["tools", "--mode", "yolo"], /--mode must be one of/],
      ] as [string[], RegExp][]
    ) {
      const result = await runCli(args, dir.path);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.stderr, pattern);
      assert.equal(result.stderr.trim().split("\n").length, 1, "one line");
    }
    for (const command of ["tools", "call", "mcp"]) {
      const help = await runCli([command, "--help"], dir.path);
      assert.equal(help.code, 0);
      assert.match(help.stdout, new RegExp(`Usage: openwork-tools ${command}`));
    }
  } finally {
    await dir.cleanup();
  }
});

test("MCP: mcp --search-index answers greps and globs as the walk does, sees an outside write, and ends with the client", async () => {
  const dir = await tempDir();
  // The index's cache goes here, not into the user's cache directory.
  const cacheHome = await tempDir();
  const { command, args } = cliCommand();
  const transport = new StdioClientTransport({
    command,
    args: [...args, "mcp", "--root", dir.path, "--mode", "acceptEdits", "--search-index"],
    env: { ...ENV, XDG_CACHE_HOME: cacheHome.path },
    stderr: "ignore",
  });
  const client = new Client({ name: "openwork-test", version: "1.0.0" });
  try {
    await writeFile(`${dir.path}/a.txt`, "alpha needle\n");
    await client.connect(transport);
    const pid = transport.pid!;
    const grep = async () =>
      text(await client.callTool({ name: "grep", arguments: { pattern: "needle" } }));
    assert.equal(await grep(), "a.txt");
    await writeFile(`${dir.path}/b.txt`, "another needle\n");
    assert.equal(await grep(), "a.txt\nb.txt");
    const edit = await client.callTool({
      name: "edit",
      arguments: { path: "a.txt", old_text: "needle", new_text: "pin" },
    });
    assert.equal(edit.isError, false, text(edit));
    assert.equal(await grep(), "b.txt");
    const glob = await client.callTool({ name: "glob", arguments: { pattern: "*.txt" } });
    assert.equal(text(glob), "a.txt\nb.txt");
    await client.close();
    let gone = false;
    for (let i = 0; i < 250 && !gone; i++) {
      gone = !await alive(pid);
      if (!gone) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(gone, "the server ends when its client closes, its index and watcher with it");
  } finally {
    await client.close();
    await dir.cleanup();
    await cacheHome.cleanup();
  }
});

/** How many inotify instances process `pid` holds (an index's watcher holds one). */
async function inotifyInstances(pid: number): Promise<number> {
  // Through bash: Deno reads another process's descriptors only with every permission.
  const out = await sh(
    'ls -l "/proc/$1/fd" 2>/dev/null | grep -c "anon_inode:inotify" || true',
    String(pid),
  );
  return Number(out.trim());
}

for (const indexed of [true, false]) {
  const flags = indexed ? [] : ["--no-search-index"];
  test(
    `MCP: the stdio server ${
      indexed
        ? "keeps a search index by default: once a search ran, its watcher holds an inotify instance"
        : "with --no-search-index keeps none: no inotify instance after searches"
    }`,
    async () => {
      const dir = await tempDir();
      await writeFile(`${dir.path}/a.txt`, "alpha needle\n");
      const { command, args } = cliCommand();
      const transport = new StdioClientTransport({
        command,
        args: [...args, "mcp", "--root", dir.path, ...flags],
        env: ENV,
        stderr: "ignore",
      });
      const client = new Client({ name: "openwork-test", version: "1.0.0" });
      try {
        await client.connect(transport);
        const pid = transport.pid!;
        assert.equal(await inotifyInstances(pid), 0, "no watcher before the first search");
        const grep = await client.callTool({ name: "grep", arguments: { pattern: "needle" } });
        assert.equal(text(grep), "a.txt");
        const glob = await client.callTool({ name: "glob", arguments: { pattern: "*.txt" } });
        assert.equal(text(glob), "a.txt");
        if (indexed) {
          // The build, and its watcher, start in the background with the first search.
          let instances = 0;
          for (let i = 0; i < 500 && instances === 0; i++) {
            instances = await inotifyInstances(pid);
            if (instances === 0) await new Promise((r) => setTimeout(r, 20));
          }
          assert.equal(instances, 1);
        } else {
          assert.equal(await inotifyInstances(pid), 0);
        }
      } finally {
        await client.close();
        await dir.cleanup();
      }
    },
  );
}

test("MCP: the HTTP server keeps one search index of its root, which every MCP session shares", async () => {
  const dir = await tempDir();
  await writeFile(`${dir.path}/a.txt`, "alpha needle\n");
  const server = await startHttpServer(["--root", dir.path, "--mode", "acceptEdits"]);
  const headers = { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } };
  const clients = [0, 1].map(() => new Client({ name: "openwork-test", version: "1.0.0" }));
  try {
    for (const client of clients) {
      await client.connect(new StreamableHTTPClientTransport(server.url, headers));
    }
    const grep = async (client: Client) =>
      text(await client.callTool({ name: "grep", arguments: { pattern: "needle" } }));
    const pid = server.child.pid!;
    assert.equal(await grep(clients[0]), "a.txt");
    let instances = 0;
    for (let i = 0; i < 500 && instances === 0; i++) {
      instances = await inotifyInstances(pid);
      if (instances === 0) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(instances, 1, "the first session's search started the index");
    // The second session's writes and searches go through the same index.
    const write = await clients[1].callTool({
      name: "write",
      arguments: { path: "b.txt", content: "another needle\n" },
    });
    assert.equal(write.isError, false, text(write));
    assert.equal(await grep(clients[1]), "a.txt\nb.txt");
    assert.equal(await grep(clients[0]), "a.txt\nb.txt");
    assert.equal(await inotifyInstances(pid), 1, "a session of its own would have its own watcher");
  } finally {
    for (const client of clients) await client.close();
    await server.stop();
    await dir.cleanup();
  }
});

test("MCP: mcp --sandbox runs each bash call in the sandbox and says so in the bash tool's description", async (t) => {
  const probe = await sh(
    "command -v bwrap >/dev/null && bwrap --ro-bind / / true && echo ok || true",
  );
  if (probe.trim() !== "ok") {
    t.skip("bubblewrap cannot run here");
    return;
  }
  const dir = await tempDir();
  const outside = await tempDir();
  const client = await connect(dir.path, "default", true, ["--sandbox"]);
  try {
    const { tools } = await client.listTools();
    const bash = tools.find((tool: { name: string }) => tool.name === "bash")!;
    assert.match(bash.description ?? "", /OS sandbox \(bubblewrap\)/);
    const inside = await client.callTool({
      name: "bash",
      arguments: { command: `echo kept > inside.txt; echo pwned > ${outside.path}/outside.txt` },
    });
    // The sandbox's /tmp is its own: the host's directory there is not reached.
    assert.match(text(inside), /outside\.txt: No such file or directory/);
    assert.equal(await readFile(`${dir.path}/inside.txt`, "utf8"), "kept\n");
    await assert.rejects(readFile(`${outside.path}/outside.txt`, "utf8"));
  } finally {
    await client.close();
    await dir.cleanup();
    await outside.cleanup();
  }
});
