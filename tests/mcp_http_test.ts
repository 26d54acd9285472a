/**
 * The MCP server over Streamable HTTP against the official MCP client and
 * raw `fetch`: the token, the Host/Origin checks, one toolset session per
 * MCP session, and process groups ended on a dropped exchange, DELETE and
 * close (a cancel, through each official client: `mcp_clients_test.ts`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { request } from "node:http";
import { connect as connectTcp, type Socket } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createSession, finalizeToolset } from "../mod.ts";
import { type HttpMcpServer, serveHttp } from "../mcp.ts";
import { ALL_TOOLS, sh, tempDir, until } from "./helpers.ts";

function serve(
  root: string,
  options: {
    idleTimeoutMs?: number;
    maxSessions?: number;
    headersTimeoutMs?: number;
    maxUnauthenticatedConnections?: number;
  } = {},
): Promise<HttpMcpServer> {
  return serveHttp(async () =>
    finalizeToolset({
      session: await createSession({
        workingDirectory: root,
        permissions: { mode: "acceptEdits" },
      }),
    }), { port: 0, name: "openwork-tools", version: "test", ...options });
}

async function connect(served: HttpMcpServer): Promise<
  { client: Client; transport: StreamableHTTPClientTransport }
> {
  const transport = new StreamableHTTPClientTransport(new URL(served.url), {
    requestInit: { headers: { Authorization: `Bearer ${served.token}` } },
  });
  // The person approves every call: these tests are about the transport.
  const client = new Client({ name: "openwork-test", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  client.setRequestHandler(
    ElicitRequestSchema,
    () => Promise.resolve({ action: "accept" as const, content: { approve: true } }),
  );
  await client.connect(transport);
  return { client, transport };
}

function text(result: object): string {
  return (result as { content: { text: string }[] }).content.map((c) => c.text).join("\n");
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "curl", version: "1" },
  },
};

function post(
  served: HttpMcpServer,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(served.url, {
    signal,
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${served.token}`,
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** The live (not zombie) processes in the process groups of those whose command line holds `tag`. */
async function groupOf(tag: string): Promise<number[]> {
  // Deno reads /proc only with every permission; ps is run through bash, which `--allow-run` grants.
  const rows = (await sh("ps -eo pid=,pgid=,stat=,args=")).split("\n").map((line) => {
    const [pid, pgid, state, ...args] = line.trim().split(/\s+/);
    return { pid: Number(pid), pgid: Number(pgid), live: !state?.startsWith("Z"), args };
  }).filter((row) => row.live && row.pid > 0);
  const groups = new Set(rows.filter((r) => r.args.join(" ").includes(tag)).map((r) => r.pgid));
  return rows.filter((r) => groups.has(r.pgid)).map((r) => r.pid);
}

/** POSTs `initialize` through `node:http`, which, unlike fetch, sends the Host header it is given. */
function rawStatus(served: HttpMcpServer, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(INITIALIZE);
    const sent = request(served.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${served.token}`,
        ...headers,
      },
    }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

/** Runs `body` with a server on a fresh root and one client connected to it; ends all three after. */
async function withSession(
  body: (session: {
    dir: { path: string };
    served: HttpMcpServer;
    client: Awaited<ReturnType<typeof connect>>["client"];
    transport: Awaited<ReturnType<typeof connect>>["transport"];
  }) => Promise<void>,
): Promise<void> {
  const dir = await tempDir();
  const served = await serve(dir.path);
  const { client, transport } = await connect(served);
  try {
    await body({ dir, served, client, transport });
  } finally {
    await client.close();
    await served.close();
    await dir.cleanup();
  }
}

test("MCP over HTTP: the official client initializes, lists the tools and reads a file", async () => {
  await withSession(async ({ dir, served, client, transport }) => {
    assert.match(served.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.ok(served.token.length >= 32, "a generated token is long");
    assert.match(transport.sessionId ?? "", /^[0-9a-f-]{36}$/);
    assert.equal(client.getServerVersion()?.name, "openwork-tools");
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t: { name: string }) => t.name), ALL_TOOLS);
    await writeFile(`${dir.path}/a.txt`, "alpha\nbeta\n");
    const read = await client.callTool({ name: "read", arguments: { path: "a.txt" } });
    assert.equal(read.isError, false, text(read));
    assert.match(text(read), /2\tbeta/);
  });
});

test("MCP over HTTP: no or a wrong token gets 401, a foreign Origin or Host 403, an unknown session 404", async () => {
  const dir = await tempDir();
  const served = await serve(dir.path);
  try {
    const missing = await post(served, INITIALIZE, { authorization: "" });
    assert.equal(missing.status, 401);
    assert.match(missing.headers.get("www-authenticate") ?? "", /^Bearer/);
    await missing.body?.cancel();
    const wrong = await post(served, INITIALIZE, { authorization: `Bearer ${served.token}x` });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const foreign = await post(served, INITIALIZE, { origin: "http://evil.example" });
    assert.equal(foreign.status, 403);
    assert.match(
      ((await foreign.json()) as { error: { message: string } }).error.message,
      /Origin "http:\/\/evil.example" is not/,
    );
    const local = await post(served, INITIALIZE, { origin: new URL(served.url).origin });
    assert.equal(local.status, 200, "the server's own origin passes");
    await local.body?.cancel();
    // A rebinding page reaches the loopback port under its own name: the Host header says so.
    const rebound = await rawStatus(served, {
      host: `attacker.example:${new URL(served.url).port}`,
    });
    assert.equal(rebound, 403);
    const unknown = await post(
      served,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { "mcp-session-id": randomUUID(), "mcp-protocol-version": "2025-06-18" },
    );
    assert.equal(unknown.status, 404);
    await unknown.body?.cancel();
    const sessionless = await post(served, { jsonrpc: "2.0", id: 2, method: "tools/list" });
    assert.equal(sessionless.status, 400);
    await sessionless.body?.cancel();
  } finally {
    await served.close();
    await dir.cleanup();
  }
});

test("MCP over HTTP: a client that drops the HTTP exchange of a call ends its process group", async () => {
  await withSession(async ({ served, transport }) => {
    const tag = `owt-http-drop-${randomUUID()}`;
    const exchange = new AbortController();
    const response = await post(
      served,
      {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "bash", arguments: { command: `sleep 300; : ${tag}` } },
      },
      { "mcp-session-id": transport.sessionId!, "mcp-protocol-version": "2025-06-18" },
      exchange.signal,
    );
    assert.equal(response.status, 200);
    await until(async () => (await groupOf(tag)).length >= 2, "bash runs");
    exchange.abort();
    await response.body?.cancel().catch(() => {});
    await until(async () => (await groupOf(tag)).length === 0, "the process group is gone");
  });
});

test("MCP over HTTP: DELETE ends the session and its processes; later requests with its id get 404", async () => {
  await withSession(async ({ served, client, transport }) => {
    const tag = `owt-http-delete-${randomUUID()}`;
    const id = transport.sessionId!;
    // Left running: the session's end must end it.
    const call = client.callTool({ name: "bash", arguments: { command: `sleep 300; : ${tag}` } })
      .catch(() => {});
    await until(async () => (await groupOf(tag)).length >= 2, "bash runs");
    await transport.terminateSession();
    await until(async () => (await groupOf(tag)).length === 0, "the session's processes are gone");
    const after = await post(
      served,
      { jsonrpc: "2.0", id: 9, method: "tools/list" },
      { "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" },
    );
    assert.equal(after.status, 404);
    await after.body?.cancel();
    await client.close();
    await call;
  });
});

test("MCP over HTTP: two sessions are isolated, a running call keeps its session, and close ends the rest", async () => {
  const one = await tempDir();
  const served = await serveHttp(async () =>
    finalizeToolset({
      session: await createSession({
        workingDirectory: one.path,
        permissions: { mode: "acceptEdits" },
      }),
    }), { port: 0, idleTimeoutMs: 1000 });
  const a = await connect(served);
  const b = await connect(served);
  try {
    assert.notEqual(a.transport.sessionId, b.transport.sessionId);
    const tag = `owt-http-iso-${randomUUID()}`;
    const running = a.client.callTool({
      name: "bash",
      arguments: { command: `sleep 300; : ${tag}` },
    }).catch(() => {});
    await until(async () => (await groupOf(tag)).length >= 2, "a's bash runs");
    // b ending does not touch a's processes.
    await b.transport.terminateSession();
    assert.ok((await groupOf(tag)).length >= 2, "a's process outlives b's session");
    const listed = await a.client.listTools();
    assert.equal(listed.tools.length, ALL_TOOLS.length);
    // A call in flight is an open exchange: a is not idle while its bash runs. (The server's
    // timers run in this process: one that expires first has fired when this wait ends.)
    await new Promise((r) => setTimeout(r, 1200));
    assert.ok((await groupOf(tag)).length >= 2, "a running call keeps its session");
    await served.close();
    await until(async () => (await groupOf(tag)).length === 0, "close ends a's processes");
    await a.client.close();
    await running;
  } finally {
    await a.client.close().catch(() => {});
    await b.client.close().catch(() => {});
    await served.close();
    await one.cleanup();
  }
});

test("MCP over HTTP: a session with no open exchange ends after the idle timeout", async () => {
  const dir = await tempDir();
  const served = await serve(dir.path, { idleTimeoutMs: 1000 });
  try {
    const init = await post(served, INITIALIZE);
    const id = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const list = () =>
      post(served, { jsonrpc: "2.0", id: 2, method: "tools/list" }, {
        "mcp-session-id": id,
        "mcp-protocol-version": "2025-06-18",
      });
    const live = await list();
    assert.equal(live.status, 200);
    await live.text();
    // The server's idle timer runs in this process and expires first: it has fired by then.
    await new Promise((r) => setTimeout(r, 1200));
    const gone = await list();
    assert.equal(gone.status, 404);
    await gone.body?.cancel();
  } finally {
    await served.close();
    await dir.cleanup();
  }
});

test("MCP over HTTP: sessions are capped; an initialize beyond the cap gets 503 until one ends", async () => {
  const root = await tempDir();
  const served = await serve(root.path, { maxSessions: 2 });
  try {
    const initialize = async () => {
      const response = await post(served, INITIALIZE);
      await response.body?.cancel();
      return { status: response.status, id: response.headers.get("mcp-session-id") };
    };
    // Made at once, as a client flooding initializes would: the cap holds for sessions being made.
    const first = await Promise.all([initialize(), initialize(), initialize()]);
    assert.deepEqual(first.map((r) => r.status).sort(), [200, 200, 503]);
    const open = first.filter((r) => r.status === 200).map((r) => r.id!);
    assert.equal((await initialize()).status, 503);
    const ended = await fetch(served.url, {
      method: "DELETE",
      headers: { authorization: `Bearer ${served.token}`, "mcp-session-id": open[0] },
    });
    await ended.body?.cancel();
    assert.equal(ended.status, 200);
    assert.equal((await initialize()).status, 200);
    // The other session still serves.
    const listed = await post(
      served,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { "mcp-session-id": open[1], "mcp-protocol-version": "2025-06-18" },
    );
    assert.equal(listed.status, 200);
    assert.match(await listed.text(), /"read"/);
  } finally {
    await served.close();
    await root.cleanup();
  }
});

test("MCP over HTTP: an initialize that fails leaves no session: no Mcp-Session-Id, and the session cap is not used up", async () => {
  const root = await tempDir();
  const served = await serve(root.path, { maxSessions: 1 });
  try {
    const { capabilities: _left, ...params } = INITIALIZE.params;
    for (const accept of ["application/json, text/event-stream", "application/json"]) {
      const failed = await post(served, { ...INITIALIZE, params }, { accept });
      const body = await failed.text();
      // Answered as JSON or as an event stream: the answer is the one event with data.
      const data = body.split("\n").find((line) => line.startsWith("data: "))?.slice(6) ?? body;
      const answer = JSON.parse(data) as { id: number; error?: { code: number; message: string } };
      assert.equal(answer.error?.code, -32602, body);
      assert.match(answer.error!.message, /params\.capabilities/);
      assert.equal(failed.headers.get("mcp-session-id"), null, `no session for ${accept}`);
    }
    // The one session the cap allows is still free.
    const started = await post(served, INITIALIZE, { accept: "application/json" });
    assert.equal(started.status, 200);
    const id = started.headers.get("mcp-session-id");
    assert.ok(id !== null);
    await started.body?.cancel();
    const listed = await post(
      served,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { "mcp-session-id": id, "mcp-protocol-version": "2025-06-18", accept: "application/json" },
    );
    assert.equal(listed.status, 200);
    assert.match(await listed.text(), /"read"/);
  } finally {
    await served.close();
    await root.cleanup();
  }
});

/** An HTTP/1.1 request as raw bytes, for the tests that drive a connection by hand. */
function rawRequest(served: HttpMcpServer, body: unknown, headers: Record<string, string>): string {
  const { host } = new URL(served.url);
  const text = JSON.stringify(body);
  const lines = Object.entries({
    host,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "content-length": String(new TextEncoder().encode(text).length),
    ...headers,
  }).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  return `POST /mcp HTTP/1.1\r\n${lines}\r\n${text}`;
}

test("MCP over HTTP: an initialize whose client drops the exchange while the session is being made leaves no session", async () => {
  const root = await tempDir();
  let asked!: () => void;
  const wasAsked = new Promise<void>((resolve) => (asked = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let first = true;
  const served = await serveHttp(async () => {
    if (first) {
      first = false;
      asked();
      await released;
    }
    return finalizeToolset({ session: await createSession({ workingDirectory: root.path }) });
  }, { port: 0, maxSessions: 1 });
  try {
    const { hostname, port } = new URL(served.url);
    const dropping = connectTcp(Number(port), hostname);
    dropping.on("error", () => {});
    dropping.write(rawRequest(served, INITIALIZE, { authorization: `Bearer ${served.token}` }));
    await wasAsked;
    const gone = new Promise((resolve) => dropping.once("close", resolve));
    dropping.destroy();
    await gone;
    // A whole exchange after the drop: the server has heard the drop by its end.
    const between = await post(served, INITIALIZE, { authorization: "" });
    assert.equal(between.status, 401);
    await between.body?.cancel();
    release();
    // The one session the cap allows is free again once the dropped one is made (and ended).
    await until(async () => {
      const started = await post(served, INITIALIZE, { accept: "application/json" });
      await started.body?.cancel();
      return started.status === 200;
    }, "an initialize gets a session");
  } finally {
    release();
    await served.close();
    await root.cleanup();
  }
});

/** Opens TCP connections to the server that send nothing; counts those the server closes. */
async function idleSockets(
  served: HttpMcpServer,
  count: number,
): Promise<{ sockets: Socket[]; closed: () => number }> {
  const { hostname, port } = new URL(served.url);
  let closed = 0;
  const sockets = await Promise.all(
    Array.from({ length: count }, () =>
      new Promise<Socket>((resolve) => {
        const socket = connectTcp(Number(port), hostname);
        socket.on("error", () => {});
        socket.once("close", () => closed++);
        // Connected, or refused at once: either way the server has seen it.
        socket.once("connect", () => resolve(socket));
        socket.once("close", () => resolve(socket));
      })),
  );
  return { sockets, closed: () => closed };
}

test("MCP over HTTP: 300 idle connections without the token do not lock out the token holder; past their cap the oldest are closed", async () => {
  const root = await tempDir();
  const cap = 16;
  const served = await serve(root.path, { maxUnauthenticatedConnections: cap });
  const idle = await idleSockets(served, 300);
  try {
    const started = await post(served, INITIALIZE, { accept: "application/json" });
    assert.equal(started.status, 200);
    assert.ok(started.headers.get("mcp-session-id") !== null);
    await started.body?.cancel();
    await until(() => idle.closed() >= 300 - cap, "the idle connections past the cap are closed");
  } finally {
    for (const socket of idle.sockets) socket.destroy();
    await served.close();
    await root.cleanup();
  }
});

test("MCP over HTTP: the token holder's new connection outlives 200 connections without the token opened before its headers arrive", async () => {
  const root = await tempDir();
  // A deadline far off: this test is about the budget, not the deadline.
  const served = await serve(root.path, { headersTimeoutMs: 600_000 });
  const { hostname, port } = new URL(served.url);
  const holder = connectTcp(Number(port), hostname);
  holder.on("error", () => {});
  let answer = "";
  // The answer's head, or the connection closed without one.
  const headed = new Promise<void>((resolve) => {
    holder.on("data", (chunk: Uint8Array) => {
      answer += new TextDecoder().decode(chunk);
      if (answer.includes("\r\n\r\n")) resolve();
    });
    holder.once("close", () => resolve());
  });
  await new Promise<void>((resolve) => holder.once("connect", () => resolve()));
  // A flood opened after the holder's connection, before it sends a byte (a busy client, or one
  // that the system has not scheduled yet).
  const flood = await idleSockets(served, 200);
  try {
    // Answered only once the server has taken every connection opened before it (in order).
    const refused = await post(served, INITIALIZE, { authorization: "" });
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    holder.write(rawRequest(served, INITIALIZE, { authorization: `Bearer ${served.token}` }));
    await headed;
    assert.match(answer, /^HTTP\/1\.1 200 /, "the holder is served");
    assert.match(answer, /\r\nmcp-session-id: /i);
    assert.equal(flood.closed(), 0, "none of the 200 is closed either");
  } finally {
    for (const socket of flood.sockets) socket.destroy();
    holder.destroy();
    await served.close();
    await root.cleanup();
  }
});

test("MCP over HTTP: a connection that trickles its headers without the token is closed at the headers deadline", async () => {
  const root = await tempDir();
  const served = await serve(root.path, { headersTimeoutMs: 200 });
  const { hostname, port } = new URL(served.url);
  const trickle = connectTcp(Number(port), hostname);
  trickle.on("error", () => {});
  let cut = false;
  trickle.once("close", () => (cut = true));
  await new Promise<void>((resolve) => trickle.once("connect", () => resolve()));
  trickle.write(`POST /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\nX-Slow: `);
  // One byte at a time, never finishing the headers, until the server closes the connection.
  const drip = setInterval(() => trickle.writable && trickle.write("a"), 20);
  try {
    await until(() => cut, "the server closes the trickling connection");
  } finally {
    clearInterval(drip);
    trickle.destroy();
    await served.close();
    await root.cleanup();
  }
});
