/**
 * The MCP server's stdio transport against raw, abusive input: every bad
 * line gets the JSON-RPC error the spec names, and the server keeps serving.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import process from "node:process";
import { sh, tempDir } from "./helpers.ts";
import { cliCommand, ENV } from "./mcp_helpers.ts";
import { EventEmitter } from "node:events";
import { type ByteSource, StdioTransport } from "../mcp.ts";

interface Message {
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: "init",
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "abuse", version: "1" },
  },
};

/** The MCP server spawned as a user would, spoken to line by line. */
class RawServer {
  readonly messages: Message[] = [];
  readonly #child: ChildProcessWithoutNullStreams;
  #exited: number | null | undefined = undefined;
  #rest = "";
  #waiters: (() => void)[] = [];

  constructor(root: string) {
    // As `deno task cli` (and the README's MCP configuration) runs it.
    const { command, args } = cliCommand();
    this.#child = spawn(command, [...args, "mcp", "--root", root], {
      env: process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.#child.stderr.resume();
    this.#child.stdin.on("error", () => {});
    this.#child.stdout.setEncoding("utf8");
    this.#child.stdout.on("data", (text: string) => {
      const lines = (this.#rest + text).split("\n");
      this.#rest = lines.pop()!;
      for (const line of lines) this.messages.push(JSON.parse(line));
      this.#wake();
    });
    this.#child.on("exit", (code) => {
      this.#exited = code;
      this.#wake();
    });
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  /** Writes text as it is, waiting for the pipe to take it. */
  async write(text: string): Promise<void> {
    if (!this.#child.stdin.write(text)) {
      await new Promise<void>((resolve) => this.#child.stdin.once("drain", resolve));
    }
  }

  /** Sends one message as a line. */
  send(message: unknown): Promise<void> {
    return this.write(JSON.stringify(message) + "\n");
  }

  /** The first message with this id, waited for. */
  async reply(id: string | number, timeoutMs = 20_000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const found = this.messages.find((m) => m.id === id && m.method === undefined);
      if (found !== undefined) return found;
      assert.equal(this.#exited, undefined, `the server exited (${this.#exited}) before ${id}`);
      const left = deadline - Date.now();
      assert.ok(left > 0, `no reply to ${id}; got ${JSON.stringify(this.messages).slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  /** Sends a request and waits for its reply. */
  async request(id: string | number, method: string, params?: unknown): Promise<Message> {
    await this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    return this.reply(id);
  }

  /** The first message `match` accepts (a request or notification of the server's), waited for. */
  async heard(match: (message: Message) => boolean, what: string): Promise<Message> {
    while (true) {
      const found = this.messages.find(match);
      if (found !== undefined) return found;
      assert.equal(this.#exited, undefined, `the server exited (${this.#exited}) before ${what}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Replies with id null, in order. */
  anonymous(): Message[] {
    return this.messages.filter((m) => m.id === null);
  }

  async initialize(): Promise<void> {
    await this.send(INITIALIZE);
    assert.ok((await this.reply("init")).result, "initialize answered");
    await this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  /** A valid tools/list and a real tools/call still work. */
  async stillServes(tag: string): Promise<void> {
    const list = await this.request(`${tag}-list`, "tools/list");
    const tools = (list.result?.tools ?? []) as { name: string }[];
    assert.ok(tools.some((t) => t.name === "read"), JSON.stringify(list).slice(0, 300));
    const read = await this.request(`${tag}-read`, "tools/call", {
      name: "read",
      arguments: { path: "a.txt" },
    });
    assert.equal(read.result?.isError, false, JSON.stringify(read));
    assert.match(text(read), /1\talpha/);
  }

  async close(): Promise<void> {
    this.#child.stdin.end();
    if (this.#exited !== undefined) return;
    await new Promise<void>((resolve) => this.#child.once("exit", () => resolve()));
  }
}

function text(message: Message): string {
  const content = (message.result?.content ?? []) as { text: string }[];
  return content.map((c) => c.text).join("\n");
}

async function withServer(body: (server: RawServer) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  await writeFile(`${dir.path}/a.txt`, "alpha\n");
  const server = new RawServer(dir.path);
  try {
    await body(server);
  } finally {
    await server.close();
    await dir.cleanup();
  }
}

test("MCP: a 20 MB line, valid or garbage, is answered with -32600 and id null naming the cap, and the server keeps serving", async () => {
  await withServer(async (server) => {
    await server.initialize();
    const padding = "a".repeat(20 * 1024 * 1024);
    await server.send({ jsonrpc: "2.0", id: 99, method: "tools/list", params: { padding } });
    await server.write(`${padding}}{garbage\n`);
    await server.stillServes("after");
    const refusals = server.anonymous();
    assert.equal(refusals.length, 2, JSON.stringify(refusals));
    for (const refusal of refusals) {
      assert.equal(refusal.error?.code, -32600);
      assert.match(refusal.error!.message, /longer than 4194304 bytes/);
    }
    assert.equal(server.messages.find((m) => m.id === 99), undefined, "the long request never ran");
  });
});

test("MCP: each of 20 malformed lines gets -32700 with id null, and the server keeps serving", async () => {
  await withServer(async (server) => {
    await server.initialize();
    const malformed = [
      "{bad",
      "{",
      "}",
      "not json",
      '{"jsonrpc":"2.0","id":1,"method":"tools/list"',
      '{"jsonrpc":"2.0",}',
      "'single'",
      "{'jsonrpc':'2.0'}",
      "undefined",
      "NaN",
      "[1,2",
      '"unterminated',
      "{}}",
      "\u0000\u0001\u0002",
      "\\x7b",
      "tru",
      '{"a":01}',
      '{"jsonrpc":"2.0","id":2,"method":"tools/list"}garbage',
      "<?xml version='1.0'?>",
      "--",
      '{"id":1e}',
    ];
    for (const line of malformed) await server.write(line + "\n");
    await server.stillServes("after");
    const refusals = server.anonymous();
    assert.equal(refusals.length, malformed.length, JSON.stringify(refusals));
    assert.ok(refusals.every((r) => r.error?.code === -32700), JSON.stringify(refusals));
  });
});

test("MCP: invalid envelopes with an id get -32600 with that id; batches get -32600; invalid notifications get no reply", async () => {
  await withServer(async (server) => {
    await server.initialize();
    const cases: [string | number, Record<string, unknown>, RegExp][] = [
      ["params", { method: "tools/call", params: "read" }, /"params" must be an object/],
      ["method", { method: 42 }, /"method" must be a string/],
      ["missing", {}, /needs a string "method"/],
      ["extra", { method: "tools/list", surplus: true }, /unexpected member/],
    ];
    for (const [id, rest] of cases) await server.send({ jsonrpc: "2.0", id, ...rest });
    await server.send({ jsonrpc: "1.0", id: "version", method: "tools/list" });
    await server.send([{ jsonrpc: "2.0", id: "batched", method: "tools/list" }]);
    await server.send({ jsonrpc: "2.0", method: "notifications/whatever", params: "bad" });
    await server.send({ jsonrpc: "1.0", method: "notifications/initialized" });
    for (const [id, , pattern] of cases) {
      const reply = await server.reply(id);
      assert.equal(reply.error?.code, -32600, JSON.stringify(reply));
      assert.match(reply.error!.message, pattern);
    }
    const version = await server.reply("version");
    assert.equal(version.error?.code, -32600);
    assert.match(version.error!.message, /"jsonrpc" must be "2\.0"/);
    await server.stillServes("after");
    const refusals = server.anonymous();
    assert.equal(refusals.length, 1, "the batch, and no reply to either notification");
    assert.equal(refusals[0].error?.code, -32600);
    assert.match(refusals[0].error!.message, /batches/);
    assert.equal(server.messages.find((m) => m.id === "batched"), undefined);
  });
});

test("MCP: a request before initialize gets -32600; ping is answered; after initialize the server serves", async () => {
  await withServer(async (server) => {
    const early = await server.request("early", "tools/list");
    assert.equal(early.error?.code, -32600);
    assert.match(early.error!.message, /before initialize/);
    const call = await server.request("early-call", "tools/call", {
      name: "read",
      arguments: { path: "a.txt" },
    });
    assert.equal(call.error?.code, -32600);
    assert.deepEqual((await server.request("ping", "ping")).result, {});
    await server.initialize();
    await server.stillServes("after");
  });
});

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

test("MCP stdio: on a connection that opened with initialize, the 2026-07-28 envelope does not stand in for it: after a failed initialize, requests with or without it get -32600", async () => {
  await withServer(async (server) => {
    const failed = await server.request("bad-init", "initialize", {
      protocolVersion: "2025-06-18",
    });
    assert.equal(failed.error?.code, -32602);
    const enveloped = await server.request("enveloped", "tools/call", {
      name: "read",
      arguments: { path: "a.txt" },
      _meta: ENVELOPE,
    });
    assert.equal(enveloped.error?.code, -32600, JSON.stringify(enveloped).slice(0, 300));
    const plain = await server.request("plain", "tools/list");
    assert.equal(plain.error?.code, -32600, JSON.stringify(plain).slice(0, 300));
    await server.initialize();
    await server.stillServes("after");
  });
});

test("MCP stdio: a first request whose 2026-07-28 envelope the server refuses chooses no revision: requests without initialize still get -32600, and either revision may open the connection after", async () => {
  for (const opening of ["2025", "2026-07-28"]) {
    await withServer(async (server) => {
      // No clientCapabilities in the envelope: refused before any engine is made.
      const refused = await server.request("bad-envelope", "ping", {
        _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
      });
      assert.ok(refused.error !== undefined, JSON.stringify(refused).slice(0, 300));
      const listed = await server.request("list", "tools/list");
      assert.equal(listed.error?.code, -32600, JSON.stringify(listed).slice(0, 300));
      const read = await server.request("read", "tools/call", {
        name: "read",
        arguments: { path: "a.txt" },
      });
      assert.equal(read.error?.code, -32600, JSON.stringify(read).slice(0, 300));
      if (opening === "2025") {
        await server.initialize();
        await server.stillServes("after");
      } else {
        const served = await server.request("enveloped", "tools/call", {
          name: "read",
          arguments: { path: "a.txt" },
          _meta: ENVELOPE,
        });
        assert.equal(served.result?.isError, false, JSON.stringify(served).slice(0, 300));
      }
    });
  }
});

test("MCP stdio 2026-07-28: a request the revision's JSON-RPC schema refuses (a progressToken not a string or number, params an array) gets -32600 with its id, first or later, and the connection keeps serving", async () => {
  await withServer(async (server) => {
    const read = (progressToken: unknown) => ({
      name: "read",
      arguments: { path: "a.txt" },
      _meta: { ...ENVELOPE, progressToken },
    });
    const first = await server.request("first", "tools/call", read(true));
    assert.equal(first.error?.code, -32600, JSON.stringify(first).slice(0, 300));
    const served = await server.request("served", "tools/call", read("p"));
    assert.equal(served.result?.isError, false, JSON.stringify(served).slice(0, 300));
    for (const [id, params] of [["object", read({})], ["null", read(null)], ["array", [1]]]) {
      const refused = await server.request(id as string, "tools/call", params);
      assert.equal(refused.error?.code, -32600, JSON.stringify(refused).slice(0, 300));
    }
    const again = await server.request("again", "tools/call", read(7));
    assert.equal(again.result?.isError, false, JSON.stringify(again).slice(0, 300));
  });
});

test("MCP stdio: a ping or a notification before the first request does not choose the revision: a 2026-07-28 client that pings first is served as one", async () => {
  await withServer(async (server) => {
    await server.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: {} });
    assert.deepEqual((await server.request("ping", "ping")).result, {});
    const discovered = await server.request("discover", "server/discover", { _meta: ENVELOPE });
    assert.ok(
      (discovered.result?.supportedVersions as string[] | undefined)?.includes("2026-07-28"),
      JSON.stringify(discovered).slice(0, 300),
    );
  });
});

/** JSON of `levels` nested arrays, `[[…]]`, standing for a value in a message's text. */
function nested(levels: number): string {
  return "[".repeat(levels) + "]".repeat(levels);
}

test("MCP: a message nested deeper than 64 levels, 100,000 deep in any member, gets -32600 naming the bound (a notification or a response is dropped), and the server keeps serving", async () => {
  // 200 KB a line, far under the cap; deep enough to overflow a recursive JSON.stringify.
  const deep = nested(100_000);
  await withServer(async (server) => {
    await server.initialize();
    await server.write(`{"jsonrpc":${deep},"id":"deep-version","method":"ping"}\n`);
    await server.write(`{"jsonrpc":"2.0","id":${deep},"method":"ping"}\n`);
    await server.write(`{"jsonrpc":"2.0","id":null,"result":${deep}}\n`);
    await server.write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":${deep}}\n`);
    await server.write(
      `{"jsonrpc":"2.0","id":"deep-args","method":"tools/call",` +
        `"params":{"name":"read","arguments":{"path":${deep}}}}\n`,
    );
    for (const id of ["deep-version", "deep-args"]) {
      const refused = await server.reply(id);
      assert.equal(refused.error?.code, -32600, JSON.stringify(refused).slice(0, 300));
      assert.match(refused.error!.message, /nested deeper than 64 levels/);
    }
    await server.stillServes("after");
    const refusals = server.anonymous();
    assert.equal(refusals.length, 1, "the request whose id cannot be read");
    assert.equal(refusals[0].error?.code, -32600);
    assert.match(refusals[0].error!.message, /nested deeper than 64 levels/);
  });
});

test("MCP: a message nested 64 levels deep is served and one of 65 is refused, under either revision", async () => {
  // The message is level 1, params 2, arguments 3, its member from 4 on.
  const call = (id: string, levels: number, envelope: boolean) =>
    `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"read",` +
    `"arguments":{"path":${nested(levels - 3)}}` +
    (envelope ? `,"_meta":${JSON.stringify(ENVELOPE)}` : "") + "}}\n";
  for (const envelope of [false, true]) {
    await withServer(async (server) => {
      if (!envelope) await server.initialize();
      await server.write(call("at-bound", 64, envelope));
      await server.write(call("past-bound", 65, envelope));
      const served = await server.reply("at-bound");
      assert.equal(served.result?.isError, true, JSON.stringify(served).slice(0, 300));
      assert.match(text(served), /invalid_input/);
      const refused = await server.reply("past-bound");
      assert.equal(refused.error?.code, -32600, JSON.stringify(refused).slice(0, 300));
      assert.match(refused.error!.message, /nested deeper than 64 levels/);
    });
  }
});

test("MCP: an initialize whose capabilities do not fit their schema (an experimental capability that is not an object) gets -32602 naming the field, and the client may initialize again", async () => {
  await withServer(async (server) => {
    const refused = await server.request("bad-init", "initialize", {
      ...INITIALIZE.params,
      capabilities: { experimental: { feature: true }, roots: { listChanged: "yes" } },
    });
    assert.equal(refused.error?.code, -32602, JSON.stringify(refused).slice(0, 300));
    assert.match(refused.error!.message, /params\.capabilities\.experimental\.feature: /);
    assert.match(refused.error!.message, /params\.capabilities\.roots\.listChanged: /);
    const gated = await server.request("early", "tools/list");
    assert.equal(gated.error?.code, -32600, JSON.stringify(gated).slice(0, 300));
    await server.initialize();
    await server.stillServes("after");
  });
});

test("MCP 2025: a progress token that is neither a string nor an integer gets -32602 naming it, and the server keeps serving", async () => {
  await withServer(async (server) => {
    await server.initialize();
    const refused = await server.request("fraction", "tools/call", {
      name: "read",
      arguments: { path: "a.txt" },
      _meta: { progressToken: 1.5 },
    });
    assert.equal(refused.error?.code, -32602, JSON.stringify(refused).slice(0, 300));
    assert.match(refused.error!.message, /params\._meta\.progressToken: .*string or int/);
    await server.stillServes("after");
  });
});

test("MCP 2025: an answer to a question the server did not ask, or a second answer to one it asked, is dropped with a warning and approves nothing", async () => {
  const dir = await tempDir();
  await writeFile(`${dir.path}/a.txt`, "alpha\n");
  const server = new RawServer(dir.path);
  try {
    const capabilities = { elicitation: {} };
    await server.send({ ...INITIALIZE, params: { ...INITIALIZE.params, capabilities } });
    assert.ok((await server.reply("init")).result, "initialize answered");
    await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const accept = (id: unknown) => ({
      jsonrpc: "2.0",
      id,
      result: { action: "accept", content: { approve: true } },
    });
    // Forged: answers to questions not asked yet (the server numbers its own from 0).
    for (const id of [0, 1, "0"]) await server.send(accept(id));
    await server.send({
      jsonrpc: "2.0",
      id: "w",
      method: "tools/call",
      params: { name: "write", arguments: { path: "b.txt", content: "x\n" } },
    });
    const question = await server.heard((m) => m.method === "elicitation/create", "the question");
    await server.send({ jsonrpc: "2.0", id: question.id, result: { action: "decline" } });
    const refused = await server.reply("w");
    assert.equal(refused.result?.isError, true, JSON.stringify(refused).slice(0, 300));
    assert.match(text(refused), /declined/);
    // Replayed: the question answered again, accepted this time.
    await server.send(accept(question.id));
    await server.stillServes("after");
    await assert.rejects(readFile(`${dir.path}/b.txt`), "nothing was written");
    const warnings = server.messages.filter((m) => m.method === "notifications/message")
      .map((m) => String(m.params?.data));
    const dropped = warnings.filter((w) => /a response to an unknown request/.test(w));
    assert.equal(dropped.length, 4, JSON.stringify(warnings));
  } finally {
    await server.close();
    await dir.cleanup();
  }
});

test("MCP: tools/call with non-object or schema-violating arguments is a tool result with isError; params that do not fit get -32602", async () => {
  await withServer(async (server) => {
    await server.initialize();
    for (const [id, args] of [["string", "read"], ["array", [1]], ["null", null], ["number", 3]]) {
      const reply = await server.request(id as string, "tools/call", {
        name: "read",
        arguments: args,
      });
      assert.equal(reply.result?.isError, true, JSON.stringify(reply));
      assert.match(text(reply), /^\[invalid_input\] The input of read must be a JSON object\.$/);
    }
    const schema = await server.request("schema", "tools/call", {
      name: "read",
      arguments: { path: 3, bogus: true },
    });
    assert.equal(schema.result?.isError, true);
    assert.match(
      text(schema),
      /^\[invalid_input\] Invalid input for read:\n.*path: expected string/s,
    );
    const unknown = await server.request("unknown", "tools/call", { name: "nope", arguments: {} });
    assert.match(text(unknown), /^\[unknown_tool\] There is no tool named nope/);
    assert.equal(text(unknown).split("unknown_tool").length, 2, "the code appears once");
    for (
      const [id, method, params, pattern] of [
        ["no-name", "tools/call", { arguments: {} }, /params\.name/],
        ["array-params", "tools/call", ["read"], /params: MCP params are a JSON object/],
        ["level", "logging/setLevel", { level: "loud" }, /params\.level/],
      ] as [string, string, unknown, RegExp][]
    ) {
      const reply = await server.request(id, method, params);
      assert.equal(reply.error?.code, -32602, JSON.stringify(reply));
      assert.match(reply.error!.message, new RegExp(`^Invalid params for ${method}:\\n`));
      assert.match(reply.error!.message, pattern);
    }
    await server.stillServes("after");
  });
});

test("MCP: tools/call without arguments runs the tool with {}; a tool that requires fields answers as it does to arguments {}", async () => {
  await withServer(async (server) => {
    await server.initialize();
    // list requires nothing: it lists the root.
    const listed = await server.request("no-args-list", "tools/call", { name: "list" });
    assert.equal(listed.error, undefined, JSON.stringify(listed));
    assert.equal(listed.result?.isError, false, JSON.stringify(listed));
    assert.match(text(listed), /a\.txt/);
    // read requires a path: the same tool result as an empty object gets.
    const bare = await server.request("no-args-read", "tools/call", { name: "read" });
    const empty = await server.request("empty-args-read", "tools/call", {
      name: "read",
      arguments: {},
    });
    assert.equal(bare.error, undefined, JSON.stringify(bare));
    assert.equal(bare.result?.isError, true, JSON.stringify(bare));
    assert.match(text(bare), /^\[invalid_input\] /);
    assert.equal(text(bare), text(empty));
    await server.stillServes("after");
  });
});

test("MCP: logging is a capability; refused input is reported as notifications/message at warning, not when the level is above it", async () => {
  await withServer(async (server) => {
    await server.send(INITIALIZE);
    const init = await server.reply("init");
    assert.deepEqual((init.result?.capabilities as Record<string, unknown>).logging, {});
    await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    assert.deepEqual(
      (await server.request("warn", "logging/setLevel", { level: "warning" })).result,
      {},
    );
    await server.write("{bad\n");
    await server.request("p1", "ping");
    const logged = () => server.messages.filter((m) => m.method === "notifications/message");
    assert.equal(logged().length, 1, JSON.stringify(server.messages));
    assert.equal(logged()[0].params?.level, "warning");
    assert.match(String(logged()[0].params?.data), /Parse error/);
    assert.deepEqual(
      (await server.request("err", "logging/setLevel", { level: "error" })).result,
      {},
    );
    await server.write("{bad\n");
    await server.request("p2", "ping");
    assert.equal(server.anonymous().length, 2, "both bad lines answered");
    assert.equal(logged().length, 1, "a warning is not sent at level error");
  });
});

/** A stdin the test feeds, which notes whether the transport wants data. */
class FakeInput extends EventEmitter {
  paused = false;
  pause(): this {
    this.paused = true;
    return this;
  }
  resume(): this {
    this.paused = false;
    return this;
  }
}

/** A stdout whose reader is stalled until the test lets it drain. */
class StalledOutput extends EventEmitter {
  readonly lines: string[] = [];
  stalled = true;
  write(text: string): boolean {
    this.lines.push(text);
    return !this.stalled;
  }
}

test("MCP stdio: a client that sends without reading its replies is not read from until they drain", async () => {
  const input = new FakeInput();
  const output = new StalledOutput();
  const transport = new StdioTransport({
    input: input as unknown as ByteSource,
    output,
    requireInitialize: false,
  });
  const heard: unknown[] = [];
  transport.onmessage = (message) => heard.push(message.id);
  transport.onerror = () => {};
  await transport.start();
  input.emit("data", new TextEncoder().encode("{bad\n{bad\n"));
  assert.equal(output.lines.length, 2, "both lines are answered");
  assert.equal(input.paused, true, "the input waits while the replies are not taken");
  output.stalled = false;
  output.emit("drain");
  assert.equal(input.paused, false, "reading resumes once the replies drain");
  input.emit("data", new TextEncoder().encode('{"jsonrpc":"2.0","id":7,"method":"ping"}\n'));
  assert.deepEqual(heard, [7]);
  assert.equal(output.listenerCount("drain"), 0, "no drain listener is left behind");
  await transport.close();
});

test("MCP stdio: an output that fails (the client stopped reading) closes the transport, and nothing more is written", async () => {
  const input = new FakeInput();
  const output = new StalledOutput();
  output.stalled = false;
  const transport = new StdioTransport({
    input: input as unknown as ByteSource,
    output,
    requireInitialize: false,
  });
  let closed = 0;
  transport.onclose = () => closed++;
  transport.onerror = () => {};
  await transport.start();
  output.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
  assert.equal(closed, 1);
  assert.equal(input.paused, true, "nothing more is read");
  await transport.send({ jsonrpc: "2.0", method: "notifications/message", params: {} });
  assert.deepEqual(output.lines, [], "nothing is written to a failed output");
});

test("MCP stdio: a client that stops reading while a call writes output ends the server cleanly, and the call's processes with it", async () => {
  const dir = await tempDir();
  const tag = `stdout-gone-${process.pid}-${Date.now()}`;
  const { command, args } = cliCommand();
  const child = spawn(command, [...args, "mcp", "--root", dir.path, "--approval", "client"], {
    env: ENV,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text: string) => (stderr += text));
  child.stdin.on("error", () => {});
  child.stdout.on("error", () => {});
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  let out = "";
  const progressed = new Promise<void>((resolve) => {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      out += text;
      if (out.includes('"notifications/progress"')) resolve();
    });
  });
  const send = (message: unknown) => child.stdin.write(JSON.stringify(message) + "\n");
  try {
    send(INITIALIZE);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    // A background sleep that writes nothing, beside a loop that writes all the time.
    send({
      jsonrpc: "2.0",
      id: "call",
      method: "tools/call",
      params: {
        name: "bash",
        arguments: {
          command: `bash -c "sleep 300; : ${tag}" & while true; do echo tick; sleep 0.05; done`,
          timeout_ms: 600_000,
        },
        _meta: { progressToken: "p" },
      },
    });
    await progressed;
    assert.ok((await sh(`ps -eo args= | grep -c '[:] ${tag}' || true`)).trim() !== "0");
    // The client stops reading: the server's next writes fail.
    child.stdout.destroy();
    assert.equal(await exited, 0, stderr.slice(-500));
    let left = "";
    for (let i = 0; i < 250; i++) {
      left = (await sh(`ps -eo pid=,args= | grep '[:] ${tag}' || true`)).trim();
      if (left === "") break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(left, "", "the call's background process ended with the server");
  } finally {
    child.kill("SIGKILL");
    await sh(
      `for p in $(ps -eo pid=,args= | grep '[:] ${tag}' | awk '{print $1}'); do kill $p; done`,
    );
    await dir.cleanup();
  }
});
