/**
 * The Streamable HTTP transport of the MCP server against raw `fetch`: the
 * statuses the spec names for what a client sends wrong, JSON or SSE
 * answers by `Accept`, the GET stream, and a question to the client (an
 * approval) on the stream of the call it is about. The official clients
 * over HTTP are in `mcp_clients_test.ts`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { createSession, finalizeToolset } from "../mod.ts";
import { type HttpMcpServer, serveHttp } from "../mcp.ts";
import { drainedOrClosed } from "../src/mcp/http_transport.ts";
import { tempDir } from "./helpers.ts";

const VERSION = "2025-06-18";

function initialize(capabilities: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: { protocolVersion: VERSION, capabilities, clientInfo: { name: "raw", version: "1" } },
  };
}

/** A server on a fresh root, in the policy's default mode (writes are asked about). */
async function withServer(
  body: (served: HttpMcpServer, root: string) => Promise<void>,
): Promise<void> {
  const dir = await tempDir();
  const served = await serveHttp(async () =>
    finalizeToolset({
      session: await createSession({
        workingDirectory: dir.path,
        permissions: { mode: "default" },
      }),
    }), { port: 0 });
  try {
    await body(served, dir.path);
  } finally {
    await served.close();
    await dir.cleanup();
  }
}

function send(
  served: HttpMcpServer,
  method: string,
  body: string | undefined,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(served.url, {
    method,
    signal,
    headers: { authorization: `Bearer ${served.token}`, ...headers },
    ...(body === undefined ? {} : { body }),
  });
}

const BOTH = { accept: "application/json, text/event-stream", "content-type": "application/json" };

/** Starts a session with a raw initialize (answered as JSON) and its initialized notification. */
async function session(
  served: HttpMcpServer,
  capabilities: Record<string, unknown> = {},
): Promise<Record<string, string>> {
  const init = await send(served, "POST", JSON.stringify(initialize(capabilities)), {
    accept: "application/json",
    "content-type": "application/json",
  });
  assert.equal(init.status, 200);
  const id = init.headers.get("mcp-session-id");
  assert.ok(id !== null);
  await init.body?.cancel();
  const headers = { ...BOTH, "mcp-session-id": id, "mcp-protocol-version": VERSION };
  const ready = await send(
    served,
    "POST",
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    headers,
  );
  assert.equal(ready.status, 202);
  assert.equal(await ready.text(), "");
  return headers;
}

/** The SSE events of a response, read as they come. */
async function* events(response: Response): AsyncGenerator<Record<string, unknown>> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (true) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
      if (data.length > 0) yield JSON.parse(data.join("\n"));
    }
  }
}

/** An SSE event's fields as sent: `id`, `retry`, `event` and the joined `data`, when present. */
type RawEvent = Record<string, string>;

/** The SSE events of a response with their fields, read as they come. */
async function* rawEvents(response: Response): AsyncGenerator<RawEvent> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (true) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const fields: RawEvent = {};
      for (const line of buffer.slice(0, end).split("\n")) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon);
        const field = line.slice(colon + 1).replace(/^ /, "");
        fields[name] = name === "data" && name in fields ? `${fields[name]}\n${field}` : field;
      }
      buffer = buffer.slice(end + 2);
      yield fields;
    }
  }
}

/** The next event, or a failure after 20 s (a stream that never speaks must not hang the run). */
async function next<T>(stream: AsyncGenerator<T>): Promise<IteratorResult<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no event within 20 s")), 20_000);
  });
  try {
    return await Promise.race([stream.next(), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function status(response: Promise<Response>): Promise<[number, string]> {
  const answered = await response;
  const body = await answered.text();
  const message = body === "" ? "" : (JSON.parse(body).error?.message ?? "");
  return [answered.status, message];
}

test("MCP over HTTP: Accept, Content-Type, protocol version, method and batches get the statuses the spec names", async () => {
  await withServer(async (served) => {
    const init = JSON.stringify(initialize());
    assert.deepEqual(
      (await status(send(served, "POST", init, { ...BOTH, accept: "text/html" })))[0],
      406,
    );
    assert.deepEqual(
      (await status(send(served, "POST", init, { ...BOTH, "content-type": "text/plain" })))[0],
      415,
    );
    // Accepting JSON only, the answer is one JSON body.
    const json = await send(served, "POST", init, {
      accept: "application/json",
      "content-type": "application/json",
    });
    assert.equal(json.status, 200);
    assert.match(json.headers.get("content-type") ?? "", /^application\/json/);
    const answer = await json.json() as { id: string; result: { protocolVersion: string } };
    assert.deepEqual([answer.id, answer.result.protocolVersion], ["init", VERSION]);
    const headers = {
      ...BOTH,
      "mcp-session-id": json.headers.get("mcp-session-id")!,
      "mcp-protocol-version": VERSION,
    };
    const ping = JSON.stringify({ jsonrpc: "2.0", id: "p", method: "ping" });
    const [unknownVersion, versionText] = await status(
      send(served, "POST", ping, { ...headers, "mcp-protocol-version": "1900-01-01" }),
    );
    assert.equal(unknownVersion, 400);
    assert.match(versionText, /unsupported protocol version "1900-01-01"/);
    const [again, againText] = await status(send(served, "POST", init, headers));
    assert.deepEqual([again, againText], [400, "Invalid Request: the session is initialized"]);
    const [batch, batchText] = await status(send(served, "POST", `[${ping}]`, headers));
    assert.equal(batch, 400);
    assert.match(batchText, /batches/);
    const put = await send(served, "PUT", ping, headers);
    assert.equal(put.status, 405);
    assert.equal(put.headers.get("allow"), "GET, POST, DELETE");
    await put.body?.cancel();
    // Accepting SSE, a request's answer is an event stream.
    const sse = await send(served, "POST", ping, headers);
    assert.equal(sse.status, 200);
    assert.equal(sse.headers.get("content-type"), "text/event-stream");
    const received = [];
    for await (const message of events(sse)) received.push(message);
    assert.deepEqual(received, [{ jsonrpc: "2.0", id: "p", result: {} }]);
    // The GET stream: text/event-stream only, one at a time.
    const { "content-type": _type, ...getHeaders } = headers;
    assert.equal(
      (await status(send(served, "GET", undefined, { ...getHeaders, accept: "application/json" })))[
        0
      ],
      406,
    );
    const listening = new AbortController();
    const stream = await send(served, "GET", undefined, getHeaders, listening.signal);
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get("content-type"), "text/event-stream");
    assert.equal((await status(send(served, "GET", undefined, getHeaders)))[0], 409);
    listening.abort();
    await stream.body?.cancel().catch(() => {});
  });
});

test("MCP over HTTP: an error answered at the HTTP layer to a request carries the request's id; what cannot be read gets null", async () => {
  await withServer(async (served) => {
    /** The status and the JSON-RPC id of the error answer to `body` sent with `headers`. */
    const answer = async (body: string, headers: Record<string, string>) => {
      const response = await send(served, "POST", body, headers);
      const reply = await response.json() as { id?: unknown; error?: unknown };
      assert.ok(reply.error !== undefined, JSON.stringify(reply));
      return [response.status, reply.id];
    };
    const list = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" });
    assert.deepEqual(await answer(list, BOTH), [400, 7], "no Mcp-Session-Id");
    const unknown = { ...BOTH, "mcp-session-id": "no-such-session" };
    assert.deepEqual(await answer(list, unknown), [404, 7], "an unknown session");
    const headers = await session(served);
    assert.deepEqual(
      await answer(list, { ...headers, accept: "text/html" }),
      [406, 7],
      "an Accept without either type",
    );
    assert.deepEqual(
      await answer(list, { ...headers, "mcp-protocol-version": "1900-01-01" }),
      [400, 7],
      "an unknown protocol version",
    );
    const again = JSON.stringify(initialize());
    assert.deepEqual(await answer(again, headers), [400, "init"], "a second initialize");
    assert.deepEqual(await answer("{", headers), [400, null], "a body that is not JSON");
  });
});

test("MCP over HTTP: without a GET stream, the approval of a call is asked on the call's stream and the call runs once it is answered", async () => {
  await withServer(async (served, root) => {
    const headers = await session(served, { elicitation: {} });
    const call = await send(
      served,
      "POST",
      JSON.stringify({
        jsonrpc: "2.0",
        id: "write-1",
        method: "tools/call",
        params: { name: "write", arguments: { path: "asked.txt", content: "yes\n" } },
      }),
      headers,
    );
    assert.equal(call.status, 200);
    const stream = events(call);
    const question = (await next(stream)).value as { id: number; method: string };
    assert.equal(question.method, "elicitation/create");
    assert.equal(await readFile(`${root}/asked.txt`, "utf8").catch(() => null), null);
    const answered = await send(
      served,
      "POST",
      JSON.stringify({
        jsonrpc: "2.0",
        id: question.id,
        result: { action: "accept", content: { approve: true } },
      }),
      headers,
    );
    assert.equal(answered.status, 202);
    await answered.body?.cancel();
    const result = (await next(stream)).value as { id: string; result: { isError: boolean } };
    assert.deepEqual([result.id, result.result.isError], ["write-1", false]);
    assert.equal((await next(stream)).done, true, "the stream ends with the answer");
    assert.equal(await readFile(`${root}/asked.txt`, "utf8"), "yes\n");
  });
});

test("MCP over HTTP: a call answered as JSON, with no GET stream to ask on, is refused as unasked rather than waiting for an answer that cannot come", async () => {
  await withServer(async (served, root) => {
    const headers = await session(served, { elicitation: {} });
    const call = await send(
      served,
      "POST",
      JSON.stringify({
        jsonrpc: "2.0",
        id: "write-json",
        method: "tools/call",
        params: { name: "write", arguments: { path: "unasked.txt", content: "no\n" } },
      }),
      { ...headers, accept: "application/json" },
    );
    assert.equal(call.status, 200);
    const answer = await call.json() as {
      id: string;
      result: { isError: boolean; content: { text: string }[] };
    };
    assert.equal(answer.id, "write-json");
    assert.equal(answer.result.isError, true);
    assert.match(answer.result.content[0].text, /^\[denied\] /);
    assert.match(answer.result.content[0].text, /could not be asked.*no stream/);
    assert.doesNotMatch(answer.result.content[0].text, /declined/);
    assert.equal(await readFile(`${root}/unasked.txt`, "utf8").catch(() => null), null);
  });
});

test("MCP over HTTP: a body over 4 MiB gets 413, a body that is not JSON 400 with -32700 (Parse error), and the server keeps serving", async () => {
  await withServer(async (served) => {
    const headers = await session(served);
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: "big",
      method: "ping",
      params: { padding: "a".repeat(5 * 1024 * 1024) },
    });
    const [tooLarge, largeText] = await status(send(served, "POST", big, headers));
    assert.deepEqual([tooLarge, largeText], [413, "Payload too large"]);
    const garbage = await send(served, "POST", "{not json", headers);
    assert.equal(garbage.status, 400);
    const parseError = await garbage.json() as { id: unknown; error: { code: number } };
    assert.deepEqual([parseError.id, parseError.error.code], [null, -32700]);
    assert.match(JSON.stringify(parseError), /Parse error: the body is not JSON/);
    // Without a session as well: the body is read before anything else.
    const { "mcp-session-id": _id, ...sessionless } = headers;
    const [orphan, orphanText] = await status(send(served, "POST", "not json", sessionless));
    assert.deepEqual([orphan, orphanText.startsWith("Parse error")], [400, true]);
    const ping = JSON.stringify({ jsonrpc: "2.0", id: "after", method: "ping" });
    const after = await send(served, "POST", ping, { ...headers, accept: "application/json" });
    assert.deepEqual(await after.json(), { jsonrpc: "2.0", id: "after", result: {} });
  });
});

test("MCP over HTTP: a message nested deeper than 64 levels, 100,000 deep, gets 400 and -32600 naming the bound, an initialize makes no session, and the server keeps serving", async () => {
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  await withServer(async (served) => {
    const json = { accept: "application/json", "content-type": "application/json" };
    const init = JSON.stringify(initialize({ experimental: { nested: "N" } })).replace('"N"', deep);
    const started = await send(served, "POST", init, json);
    assert.equal(started.headers.get("mcp-session-id"), null, "no session");
    const refusal = await started.json() as {
      id: unknown;
      error: { code: number; message: string };
    };
    assert.deepEqual([started.status, refusal.id, refusal.error.code], [400, "init", -32600]);
    assert.match(refusal.error.message, /nested deeper than 64 levels/);
    const headers = await session(served);
    for (
      const body of [
        `{"jsonrpc":"2.0","id":null,"result":${deep}}`,
        `{"jsonrpc":${deep},"id":"v","method":"ping"}`,
      ]
    ) {
      const [code, text] = await status(send(served, "POST", body, headers));
      assert.equal(code, 400);
      assert.match(text, /nested deeper than 64 levels/);
    }
    const ping = JSON.stringify({ jsonrpc: "2.0", id: "after", method: "ping" });
    const after = await send(served, "POST", ping, { ...headers, accept: "application/json" });
    assert.deepEqual(await after.json(), { jsonrpc: "2.0", id: "after", result: {} });
  });
});

test("MCP over HTTP: an initialize whose capabilities do not fit their schema gets -32602 naming the field, and leaves no session", async () => {
  await withServer(async (served) => {
    const json = { accept: "application/json", "content-type": "application/json" };
    for (const capabilities of [{ experimental: { feature: true } }, { experimental: 7 }]) {
      const failed = await send(served, "POST", JSON.stringify(initialize(capabilities)), json);
      assert.equal(failed.headers.get("mcp-session-id"), null, "no session");
      const answer = await failed.json() as {
        id: unknown;
        error?: { code: number; message: string };
      };
      assert.deepEqual([answer.id, answer.error?.code], ["init", -32602], JSON.stringify(answer));
      assert.match(answer.error!.message, /params\.capabilities\.experimental/);
    }
    const headers = await session(served);
    const ping = JSON.stringify({ jsonrpc: "2.0", id: "after", method: "ping" });
    const after = await send(served, "POST", ping, { ...headers, accept: "application/json" });
    assert.deepEqual(await after.json(), { jsonrpc: "2.0", id: "after", result: {} });
  });
});

test("MCP over HTTP: a client that reads its stream slowly gets progress dropped, not piled up, and still gets the answer", async () => {
  const dir = await tempDir();
  const served = await serveHttp(
    async () => finalizeToolset({ session: await createSession({ workingDirectory: dir.path }) }),
    {
      port: 0,
      approval: "client",
    },
  );
  try {
    const headers = await session(served);
    const produced = 32 * 1024 * 1024;
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: "noisy",
      method: "tools/call",
      params: {
        name: "bash",
        arguments: { command: `head -c ${produced} /dev/zero | tr '\\0' a; : > done` },
        _meta: { progressToken: "p" },
      },
    });
    // node:http, paused: nothing is read from the socket until the command has finished.
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const sent = request(served.url, {
        method: "POST",
        headers: { ...headers, authorization: `Bearer ${served.token}` },
      }, resolve);
      sent.on("error", reject);
      sent.end(body);
    });
    response.pause();
    for (let i = 0; i < 1000; i++) {
      if (await readFile(`${dir.path}/done`).then(() => true, () => false)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    response.setEncoding("utf8");
    let text = "";
    for await (const chunk of response) text += chunk;
    const messages = text.split("\n").filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as { method?: string; params?: { message: string } });
    const relayed = messages.filter((m) => m.method === "notifications/progress")
      .reduce((sum, m) => sum + m.params!.message.length, 0);
    assert.ok(relayed < produced / 2, `${relayed} of ${produced} bytes relayed as progress`);
    const last = messages.at(-1) as { id?: string; result?: { isError: boolean } };
    assert.deepEqual([last.id, last.result?.isError], ["noisy", false]);
  } finally {
    await served.close();
    await dir.cleanup();
  }
});

test("MCP over HTTP: every event stream opens with retry and an id with empty data, and every event has an id unique across the session's streams", async () => {
  await withServer(async (served) => {
    const headers = await session(served, { elicitation: {} });
    const ids: string[] = [];
    /** The stream's priming event, checked; its id is kept. */
    const primed = async (stream: AsyncGenerator<RawEvent>) => {
      const first = (await next(stream)).value as RawEvent;
      assert.match(first.retry ?? "", /^\d+$/, JSON.stringify(first));
      assert.equal(first.data, "", JSON.stringify(first));
      assert.ok(first.id !== undefined && first.id !== "", JSON.stringify(first));
      ids.push(first.id);
    };
    /** The stream's next message; its event's id is kept. */
    const message = async (stream: AsyncGenerator<RawEvent>) => {
      const event = (await next(stream)).value as RawEvent;
      assert.ok(event.id !== undefined && event.id !== "", JSON.stringify(event));
      ids.push(event.id);
      return JSON.parse(event.data) as { id?: string | number; method?: string };
    };
    const ping = await send(
      served,
      "POST",
      JSON.stringify({ jsonrpc: "2.0", id: "p", method: "ping" }),
      headers,
    );
    const pinged = rawEvents(ping);
    await primed(pinged);
    assert.equal((await message(pinged)).id, "p");
    assert.equal((await next(pinged)).done, true);
    // The GET stream, and a question on it about a call on another stream.
    const { "content-type": _type, ...getHeaders } = headers;
    const listening = new AbortController();
    const get = await send(served, "GET", undefined, getHeaders, listening.signal);
    const questions = rawEvents(get);
    await primed(questions);
    const call = await send(
      served,
      "POST",
      JSON.stringify({
        jsonrpc: "2.0",
        id: "w",
        method: "tools/call",
        params: { name: "write", arguments: { path: "w.txt", content: "w\n" } },
      }),
      headers,
    );
    const called = rawEvents(call);
    await primed(called);
    const question = await message(questions);
    assert.equal(question.method, "elicitation/create");
    const answered = await send(
      served,
      "POST",
      JSON.stringify({
        jsonrpc: "2.0",
        id: question.id,
        result: { action: "accept", content: { approve: true } },
      }),
      headers,
    );
    await answered.body?.cancel();
    assert.equal((await message(called)).id, "w");
    assert.equal(new Set(ids).size, ids.length, `ids unique in the session: ${ids}`);
    // A request's stream is not replayed (it ended with its answer): nothing more to send.
    const resumed = await send(served, "GET", undefined, {
      ...getHeaders,
      "last-event-id": ids[1],
    });
    assert.equal(resumed.status, 204);
    listening.abort();
    await get.body?.cancel().catch(() => {});
  });
});

test("MCP over HTTP: waiting for a response to drain ends at once when the response has already closed", async () => {
  let answer!: (response: ServerResponse) => void;
  const responded = new Promise<ServerResponse>((resolve) => (answer = resolve));
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.flushHeaders();
    answer(response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const client = request({ host: "127.0.0.1", port, method: "GET" });
  client.on("error", () => {});
  client.end();
  const response = await responded;
  const closed = new Promise<void>((resolve) => response.once("close", () => resolve()));
  client.destroy();
  await closed;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  // The client is gone and 'close' has come and gone: a write fails and nothing will drain.
  response.write("data: late\n\n");
  await drainedOrClosed(response);
  assert.equal(response.listenerCount("drain"), 0);
});
