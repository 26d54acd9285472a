/**
 * What protocol revision 2026-07-28 adds to the MCP server, through the
 * official v2 client (`@modelcontextprotocol/client`) pinned to it, over
 * stdio (the CLI) and Streamable HTTP: an approval answer forged, replayed
 * or meant for another call (nothing runs), two concurrent requests with
 * different working directories, the three approval modes, a client that
 * reads its event stream slowly, and deeply nested JSON. What every client
 * sees alike (the seven tools, calls, approval, progress, cancellation) is
 * in tests/mcp_clients_test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { type IncomingMessage, request as httpRequest } from "node:http";
import { Buffer } from "node:buffer";
import { pathToFileURL } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createSession, finalizeToolset } from "../mod.ts";
import { serveHttp } from "../mcp.ts";
import { ALL_TOOLS, symlinkOnDisk, tempDir, until } from "./helpers.ts";
import { cliCommand, ENV } from "./mcp_helpers.ts";
import { startHttpServer } from "./mcp_clients.ts";

type Wire = "stdio" | "http";

/** What the person answers when the server asks. */
interface Person {
  answer: "accept" | "decline";
  asked: string[];
}

interface Connected {
  client: Client;
  close(): Promise<void>;
}

function makeClient(person: Person, manual = false): Client {
  const client = new Client({ name: "openwork-test", version: "1.0.0" }, {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: { pin: "2026-07-28" } },
    ...(manual ? { inputRequired: { autoFulfill: false } } : {}),
  });
  client.setRequestHandler("elicitation/create", (request) => {
    person.asked.push(String((request.params as { message?: unknown }).message));
    return Promise.resolve(
      person.answer === "accept"
        ? { action: "accept" as const, content: { approve: true } }
        : { action: "decline" as const },
    );
  });
  return client;
}

/** The CLI's MCP server over stdio in `root` (`--root` unless `roots` lets requests name theirs). */
async function overStdio(client: Client, root: string, fixedRoot = true): Promise<Connected> {
  const { command, args } = cliCommand();
  const transport = new StdioClientTransport({
    command,
    args: [...args, "mcp", "--mode", "default", ...(fixedRoot ? ["--root", root] : [])],
    env: ENV,
    cwd: root,
    stderr: "ignore",
  });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

/** The HTTP server in `root`; without `fixedRoot`, requests may name their working directory. */
async function overHttp(client: Client, root: string, fixedRoot = true): Promise<Connected> {
  const make = async (workingDirectory: string) =>
    finalizeToolset({
      session: await createSession({ workingDirectory, permissions: { mode: "default" } }),
    });
  const served = await serveHttp(() => make(root), {
    port: 0,
    name: "openwork-tools",
    version: "test",
    ...(fixedRoot ? {} : { toolsetForRoot: make }),
  });
  const transport = new StreamableHTTPClientTransport(new URL(served.url), {
    requestInit: { headers: { Authorization: `Bearer ${served.token}` } },
  });
  await client.connect(transport);
  return {
    client,
    close: async () => {
      await client.close();
      await served.close();
    },
  };
}

function connect(wire: Wire, client: Client, root: string, fixedRoot = true): Promise<Connected> {
  return wire === "stdio" ? overStdio(client, root, fixedRoot) : overHttp(client, root, fixedRoot);
}

function text(result: unknown): string {
  return (result as { content: { text: string }[] }).content.map((c) => c.text).join("\n");
}

async function exists(path: string): Promise<boolean> {
  return await stat(path).then(() => true, () => false);
}

for (const wire of ["stdio", "http"] as const) {
  test(`MCP 2026-07-28 over ${wire}: a forged, replayed or mismatched approval answer runs nothing`, async () => {
    const dir = await tempDir();
    const person: Person = { answer: "accept", asked: [] };
    const { client, close } = await connect(
      wire,
      makeClient(person, true),
      dir.path,
    );
    const target = `${dir.path}/approved.txt`;
    const accept = { approve: { action: "accept", content: { approve: true } } };
    const call = (params: Record<string, unknown>) =>
      client.callTool(
        { name: "write", arguments: { path: "approved.txt", content: "ran\n" }, ...params },
        { allowInputRequired: true } as never,
      ) as Promise<Record<string, unknown>>;
    try {
      const asked = await call({});
      assert.equal(asked.resultType, "input_required");
      const state = asked.requestState as string;
      assert.equal(typeof state, "string");
      assert.equal(await exists(target), false);

      // An acceptance without the state, or with a state the server did not sign.
      const unsigned = await call({ inputResponses: accept });
      assert.equal(unsigned.resultType, "input_required");
      const [head, body, mac] = state.split(".");
      const forgedBody = Buffer.from(
        JSON.stringify({
          ...JSON.parse(Buffer.from(body, "base64url").toString()),
          p: { name: "write", input: "0", question: "0", root: dir.path, nonce: "forged" },
        }),
      ).toString("base64url");
      await assert.rejects(
        call({ inputResponses: accept, requestState: `${head}.${forgedBody}.${mac}` }),
      );
      assert.equal(await exists(target), false);

      // The state of one call does not approve another.
      const other = await client.callTool(
        {
          name: "write",
          arguments: { path: "approved.txt", content: "something else\n" },
          inputResponses: accept,
          requestState: state,
        } as never,
        { allowInputRequired: true } as never,
      );
      assert.equal(other.isError, true);
      assert.match(text(other), /does not belong to this call/);
      assert.equal(await exists(target), false);

      // The real answer runs the call once; the same answer again runs nothing.
      const approved = await call({ inputResponses: accept, requestState: state });
      assert.equal(approved.isError, false, text(approved));
      assert.equal(await readFile(target, "utf8"), "ran\n");
      await rm(target);
      const replayed = await call({ inputResponses: accept, requestState: state });
      assert.equal(replayed.isError, true);
      assert.match(text(replayed), /used already/);
      assert.equal(await exists(target), false);
    } finally {
      await close();
      await dir.cleanup();
    }
  });

  test(`MCP 2026-07-28 over ${wire}: two concurrent requests with different working directories each read their own`, async () => {
    const dir = await tempDir();
    const [first, second] = [`${dir.path}/first`, `${dir.path}/second`];
    await mkdir(first);
    await mkdir(second);
    await writeFile(`${first}/which.txt`, "the first root\n");
    await writeFile(`${second}/which.txt`, "the second root\n");
    const person: Person = { answer: "accept", asked: [] };
    const { client, close } = await connect(
      wire,
      makeClient(person),
      dir.path,
      false,
    );
    const readIn = (root: string, path = "which.txt") =>
      client.callTool({
        name: "read",
        arguments: { path },
        _meta: { "openwork/root": pathToFileURL(root).href },
      });
    try {
      const [a, b] = await Promise.all([readIn(first), readIn(second)]);
      assert.match(text(a), /the first root/);
      assert.match(text(b), /the second root/);
      // A request's root is its boundary: the other root is outside it.
      const outside = await readIn(second, `${first}/which.txt`);
      assert.equal(outside.isError, true);
      assert.match(text(outside), /path_outside_root/);
      // A working directory that cannot be used is the request's error; the server keeps serving.
      await assert.rejects(readIn(`${dir.path}/missing`), /cannot be used/);
      assert.match(text(await readIn(first)), /the first root/);
      // Without a root of its own, a request runs in the server's directory.
      const own = await client.callTool({ name: "read", arguments: { path: "first/which.txt" } });
      assert.match(text(own), /the first root/);
    } finally {
      await close();
      await dir.cleanup();
    }
  });
}

test("MCP 2026-07-28 over HTTP: a client that reads its stream slowly gets progress dropped, not piled up, and still gets the answer", async () => {
  const dir = await tempDir();
  const served = await serveHttp(
    async () => finalizeToolset({ session: await createSession({ workingDirectory: dir.path }) }),
    { port: 0, approval: "client" },
  );
  try {
    const produced = 32 * 1024 * 1024;
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: "noisy",
      method: "tools/call",
      params: {
        name: "bash",
        arguments: { command: `head -c ${produced} /dev/zero | tr '\\0' a; : > done` },
        _meta: {
          progressToken: "p",
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    });
    // node:http, paused: nothing is read from the socket until the command has finished.
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const sent = httpRequest(served.url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${served.token}`,
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "bash",
        },
      }, resolve);
      sent.on("error", reject);
      sent.end(body);
    });
    response.pause();
    await until(
      () => readFile(`${dir.path}/done`).then(() => true, () => false),
      "the command has finished",
    );
    response.setEncoding("utf8");
    let text = "";
    for await (const chunk of response) text += chunk;
    const messages = text.split("\n").filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as { method?: string; params?: { message: string } });
    const relayed = messages.filter((m) => m.method === "notifications/progress")
      .reduce((sum, m) => sum + m.params!.message.length, 0);
    assert.ok(relayed < produced / 2, `${relayed} of ${produced} bytes relayed as progress`);
    const last = messages.at(-1) as { id?: string; result?: { isError: boolean } };
    assert.deepEqual([last.id, last.result?.isError], ["noisy", false], text.slice(-500));
  } finally {
    await served.close();
    await dir.cleanup();
  }
});

test("MCP 2026-07-28 over stdio: approval modes: elicit refuses a client without elicitation and names --approval client, client runs, policy refuses", async () => {
  const dir = await tempDir();
  // Not provably read-only: the policy asks about it in the default mode.
  const command = "touch made-by-bash.txt";
  try {
    const outcomes: Record<string, { isError: boolean; text: string; made: boolean }> = {};
    for (const approval of ["elicit", "client", "policy"]) {
      const client = new Client({ name: "openwork-test", version: "1.0.0" }, {
        capabilities: {},
        versionNegotiation: { mode: { pin: "2026-07-28" } },
      });
      const { command: deno, args } = cliCommand();
      await client.connect(
        new StdioClientTransport({
          command: deno,
          args: [...args, "mcp", "--mode", "default", "--root", dir.path, "--approval", approval],
          env: ENV,
          stderr: "ignore",
        }),
      );
      try {
        const result = await client.callTool({ name: "bash", arguments: { command } });
        const made = await exists(`${dir.path}/made-by-bash.txt`);
        outcomes[approval] = { isError: result.isError === true, text: text(result), made };
      } finally {
        await client.close();
        await rm(`${dir.path}/made-by-bash.txt`, { force: true });
      }
    }
    assert.equal(outcomes.elicit.isError, true);
    assert.match(outcomes.elicit.text, /no elicitation support/);
    assert.match(outcomes.elicit.text, /--approval client/);
    assert.equal(outcomes.elicit.made, false);
    assert.equal(outcomes.client.isError, false, outcomes.client.text);
    assert.equal(outcomes.client.made, true);
    assert.equal(outcomes.policy.isError, true);
    assert.match(outcomes.policy.text, /--approval policy/);
    assert.equal(outcomes.policy.made, false);
  } finally {
    await dir.cleanup();
  }
});

test("MCP 2026-07-28 over HTTP: JSON nested 1,000,000 deep in arguments or in the envelope gets -32600 naming the bound of 64 levels, and the server keeps serving", async () => {
  const dir = await tempDir();
  const served = await serveHttp(
    async () => finalizeToolset({ session: await createSession({ workingDirectory: dir.path }) }),
    { port: 0 },
  );
  // Deeper than JSON.stringify reaches on either runtime's stack.
  const deep = "[".repeat(1_000_000) + "]".repeat(1_000_000);
  const envelope = (capabilities: unknown) => ({
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  });
  const post = async (id: number, method: string, params: Record<string, unknown>) => {
    const response = await fetch(served.url, {
      method: "POST",
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }).replace('"N"', deep),
      headers: {
        authorization: `Bearer ${served.token}`,
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...(method === "tools/call" ? { "mcp-name": "read" } : {}),
      },
    });
    return await response.json() as {
      id?: unknown;
      result?: { isError?: boolean; tools?: unknown[] };
      error?: { code: number; message: string };
    };
  };
  try {
    const argument = await post(1, "tools/call", {
      name: "read",
      arguments: { path: "N" },
      _meta: envelope({}),
    });
    const capabilities = await post(2, "tools/call", {
      name: "read",
      arguments: { path: "x.txt" },
      _meta: envelope({ experimental: { deep: { value: "N" } } }),
    });
    for (const [id, answer] of [[1, argument], [2, capabilities]] as const) {
      assert.deepEqual([answer.id, answer.error?.code], [id, -32600], JSON.stringify(answer));
      assert.match(answer.error!.message, /nested deeper than 64 levels/);
    }
    const odd = await post(4, "tools/call", {
      name: "read",
      arguments: { path: "x.txt" },
      _meta: envelope({ experimental: 7 }),
    });
    // A capability that does not fit its schema is the client's error, named.
    assert.deepEqual([odd.id, odd.error?.code], [4, -32602], JSON.stringify(odd));
    assert.match(odd.error!.message, /clientCapabilities\.experimental/);
    const listed = await post(3, "tools/list", { _meta: envelope({}) });
    assert.equal(listed.result?.tools?.length, ALL_TOOLS.length);
  } finally {
    await served.close();
    await dir.cleanup();
  }
});

test("MCP 2026-07-28 over HTTP: a working directory named in several spellings, or through a link, makes one toolset (one of the 64 a server serves)", async () => {
  const dir = await tempDir();
  const project = `${dir.path}/project`;
  await mkdir(project);
  await writeFile(`${project}/which.txt`, "the project\n");
  await symlinkOnDisk(project, `${dir.path}/link`);
  const made: string[] = [];
  const make = async (workingDirectory: string) => {
    made.push(workingDirectory);
    return finalizeToolset({ session: await createSession({ workingDirectory }) });
  };
  const served = await serveHttp(() => make(dir.path), { port: 0, toolsetForRoot: make });
  const client = makeClient({ answer: "decline", asked: [] });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(served.url), {
      requestInit: { headers: { Authorization: `Bearer ${served.token}` } },
    }),
  );
  try {
    const href = pathToFileURL(project).href;
    for (
      const root of [
        href,
        `${href}/`,
        `${href}//`,
        href.replace(/project$/, "./project"),
        pathToFileURL(`${dir.path}/link`).href,
      ]
    ) {
      const read = await client.callTool({
        name: "read",
        arguments: { path: "which.txt" },
        _meta: { "openwork/root": root },
      });
      assert.match(text(read), /the project/, root);
    }
    assert.deepEqual(made, [dir.path, project]);
  } finally {
    await client.close();
    await served.close();
    await dir.cleanup();
  }
});

test("MCP 2026-07-28 over HTTP: approval elicit with a client whose elicitation takes URLs only is a refusal the model can read, as under the 2025 revisions, and nothing runs", async () => {
  const dir = await tempDir();
  const served = await serveHttp(
    async () =>
      finalizeToolset({
        session: await createSession({
          workingDirectory: dir.path,
          permissions: { mode: "default" },
        }),
      }),
    { port: 0 },
  );
  const call = async (elicitation: Record<string, unknown>) => {
    const response = await fetch(served.url, {
      method: "POST",
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "bash",
          arguments: { command: "touch made-by-bash.txt" },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { elicitation },
          },
        },
      }),
      headers: {
        authorization: `Bearer ${served.token}`,
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "bash",
      },
    });
    return await response.json() as {
      result?: { isError?: boolean; resultType?: string; content?: { text: string }[] };
      error?: unknown;
    };
  };
  try {
    const urlOnly = await call({ url: {} });
    assert.equal(urlOnly.result?.isError, true, JSON.stringify(urlOnly));
    assert.match(urlOnly.result?.content?.[0].text ?? "", /cannot ask the person/);
    // A client that declares forms, or elicitation without modes, is asked.
    for (const elicitation of [{}, { form: {} }, { form: {}, url: {} }]) {
      assert.equal((await call(elicitation)).result?.resultType, "input_required");
    }
    assert.equal(await exists(`${dir.path}/made-by-bash.txt`), false);
  } finally {
    await served.close();
    await dir.cleanup();
  }
});

test("MCP 2026-07-28 over HTTP: mcp --http without --root runs every request in its own directory, whatever _meta names", async () => {
  const dir = await tempDir();
  const [own, other] = [`${dir.path}/own`, `${dir.path}/other`];
  await mkdir(own);
  await mkdir(other);
  await writeFile(`${own}/here.txt`, "the server's directory\n");
  await writeFile(`${other}/there.txt`, "another directory\n");
  const server = await startHttpServer(["--mode", "default"], own);
  try {
    const read = async (id: number, path: string) => {
      const response = await fetch(new URL("/mcp", server.url), {
        method: "POST",
        body: JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: {
            name: "read",
            arguments: { path },
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
              "openwork/root": pathToFileURL(other).href,
            },
          },
        }),
        headers: {
          authorization: `Bearer ${server.token}`,
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "read",
        },
      });
      return await response.text();
    };
    assert.match(await read(1, "here.txt"), /the server's directory/);
    const there = await read(2, "there.txt");
    assert.doesNotMatch(there, /another directory/);
    assert.match(there, /not_found/);
  } finally {
    await server.stop();
    await dir.cleanup();
  }
});

test("MCP 2026-07-28 over HTTP: a server serves at most 64 working directories, its own among them, as under the 2025 revisions", async () => {
  const dir = await tempDir();
  const make = async (workingDirectory: string) =>
    finalizeToolset({ session: await createSession({ workingDirectory }) });
  const served = await serveHttp(() => make(dir.path), { port: 0, toolsetForRoot: make });
  const client = makeClient({ answer: "decline", asked: [] });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(served.url), {
      requestInit: { headers: { Authorization: `Bearer ${served.token}` } },
    }),
  );
  const list = (root: string) =>
    client.callTool({
      name: "list",
      arguments: { path: "." },
      _meta: { "openwork/root": pathToFileURL(root).href },
    });
  try {
    for (let i = 0; i < 63; i++) {
      await mkdir(`${dir.path}/d${i}`);
      await list(`${dir.path}/d${i}`);
    }
    await mkdir(`${dir.path}/one-more`);
    await assert.rejects(list(`${dir.path}/one-more`), /at most 64 working directories/);
    // The server's own directory and those already served are still served.
    await list(dir.path);
    await list(`${dir.path}/d0`);
  } finally {
    await client.close();
    await served.close();
    await dir.cleanup();
  }
});
