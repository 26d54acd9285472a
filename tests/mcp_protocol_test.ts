/**
 * The MCP protocol engine on its own, over a transport the test holds both
 * ends of: version negotiation, errors, cancellation, requests to the
 * client with their answers, timeouts and cancellation, logging levels, and
 * what a close does to work in flight.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { until } from "./helpers.ts";
import {
  type JsonRpcMessage,
  LATEST_PROTOCOL_VERSION,
  McpError,
  McpServer,
  type McpTransport,
  type SendOptions,
} from "../mcp.ts";

/** The client's end: what the server sent, and a way to send it messages. */
class Wire implements McpTransport {
  onmessage?: (message: JsonRpcMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  readonly sent: { message: JsonRpcMessage; options?: SendOptions }[] = [];
  #waiters: (() => void)[] = [];

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    this.sent.push({ message, options });
    for (const wake of this.#waiters.splice(0)) wake();
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }

  deliver(message: Record<string, unknown>): void {
    this.onmessage?.({ jsonrpc: "2.0", ...message });
  }

  /** The first message sent that `match` accepts, waited for. */
  async next(match: (message: JsonRpcMessage) => boolean): Promise<JsonRpcMessage> {
    for (let i = 0; i < 200; i++) {
      const found = this.sent.find((s) => match(s.message));
      if (found !== undefined) return found.message;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.#waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
    assert.fail(`nothing matched in ${JSON.stringify(this.sent).slice(0, 400)}`);
  }

  async reply(id: string | number): Promise<JsonRpcMessage> {
    return await this.next((m) => m.id === id && m.method === undefined);
  }
}

async function connected(): Promise<{ server: McpServer; wire: Wire }> {
  const server = new McpServer({
    info: { name: "engine", version: "1" },
    capabilities: { tools: {}, logging: {} },
  });
  const wire = new Wire();
  await server.connect(wire);
  return { server, wire };
}

function initialize(wire: Wire, protocolVersion: string, capabilities = {}): void {
  wire.deliver({
    id: "init",
    method: "initialize",
    params: { protocolVersion, capabilities, clientInfo: { name: "test", version: "2" } },
  });
}

test("MCP engine: initialize echoes a supported revision, answers an unknown one with the newest, and names the server", async () => {
  for (
    const [asked, expected] of [
      ["2024-11-05", "2024-11-05"],
      ["2025-06-18", "2025-06-18"],
      ["1999-01-01", LATEST_PROTOCOL_VERSION],
    ]
  ) {
    const { server, wire } = await connected();
    initialize(wire, asked, { roots: {} });
    const reply = await wire.reply("init");
    assert.deepEqual(reply.result, {
      protocolVersion: expected,
      capabilities: { tools: {}, logging: {} },
      serverInfo: { name: "engine", version: "1" },
    });
    assert.equal(server.getProtocolVersion(), expected);
    assert.deepEqual(server.getClientCapabilities(), { roots: {} });
    assert.equal(server.getClientVersion()?.name, "test");
  }
});

test("MCP engine: an unknown method gets -32601, bad params -32602 per field, a thrown error its code or -32603", async () => {
  const { server, wire } = await connected();
  server.setRequestHandler("fails/plain", () => {
    throw new Error("plain failure");
  });
  server.setRequestHandler("fails/coded", () => {
    throw new McpError(-32002, "coded failure");
  });
  wire.deliver({ id: 1, method: "resources/list" });
  wire.deliver({ id: 2, method: "initialize", params: { protocolVersion: 3 } });
  wire.deliver({ id: 3, method: "fails/plain" });
  wire.deliver({ id: 4, method: "fails/coded" });
  assert.deepEqual((await wire.reply(1)).error, { code: -32601, message: "Method not found" });
  const params = (await wire.reply(2)).error as { code: number; message: string };
  assert.equal(params.code, -32602);
  assert.match(params.message, /^Invalid params for initialize:\n/);
  assert.match(params.message, /params\.protocolVersion: /);
  assert.match(params.message, /params\.capabilities: /);
  assert.match(params.message, /params\.clientInfo: /);
  assert.deepEqual((await wire.reply(3)).error, { code: -32603, message: "plain failure" });
  assert.deepEqual((await wire.reply(4)).error, { code: -32002, message: "coded failure" });
});

test("MCP engine: notifications/cancelled aborts the running handler, and no answer is sent", async () => {
  const { server, wire } = await connected();
  let aborted: unknown = undefined;
  let started = false;
  server.setRequestHandler("slow", (_params, context) =>
    new Promise((resolve) => {
      started = true;
      context.signal.addEventListener("abort", () => {
        aborted = context.signal.reason;
        resolve({ late: true });
      });
    }));
  wire.deliver({ id: "slow-1", method: "slow" });
  await until(() => started, "the handler started");
  wire.deliver({
    method: "notifications/cancelled",
    params: { requestId: "slow-1", reason: "no" },
  });
  wire.deliver({ id: "after", method: "ping" });
  assert.deepEqual((await wire.reply("after")).result, {});
  assert.equal(aborted, "no");
  assert.equal(wire.sent.find((s) => s.message.id === "slow-1"), undefined);
});

test("MCP engine: progress notifications go with their request, and stop once it is cancelled", async () => {
  const { server, wire } = await connected();
  let notify: ((n: number) => Promise<void>) | undefined;
  server.setRequestHandler("work", (_params, context) => {
    notify = (n) => context.notify("notifications/progress", { progressToken: "t", progress: n });
    return new Promise(() => {});
  });
  wire.deliver({ id: 5, method: "work" });
  await until(() => notify !== undefined, "the handler started");
  await notify!(1);
  const progress = wire.sent.filter((s) => s.message.method === "notifications/progress");
  assert.equal(progress.length, 1);
  assert.deepEqual(progress[0].options, { relatedRequestId: 5 });
  wire.deliver({ method: "notifications/cancelled", params: { requestId: 5 } });
  await notify!(2);
  assert.equal(
    wire.sent.filter((s) => s.message.method === "notifications/progress").length,
    1,
    "nothing is sent for a cancelled request",
  );
});

test("MCP engine: a request to the client resolves its result, rejects its error, and is cancelled on abort and on timeout", async () => {
  const { server, wire } = await connected();
  const listed = server.request("roots/list", undefined, { relatedRequestId: "call-1" });
  const asked = await wire.next((m) => m.method === "roots/list");
  assert.equal(wire.sent.find((s) => s.message === asked)?.options?.relatedRequestId, "call-1");
  wire.deliver({ id: asked.id, result: { roots: [] } });
  assert.deepEqual(await listed, { roots: [] });

  const refused = server.request("elicitation/create", { message: "ok?" });
  const question = await wire.next((m) => m.method === "elicitation/create");
  assert.notEqual(question.id, asked.id, "each request has its own id");
  wire.deliver({ id: question.id, error: { code: -32601, message: "no elicitation here" } });
  await assert.rejects(refused, (error: McpError) => {
    assert.equal(error.code, -32601);
    assert.equal(error.message, "no elicitation here");
    return true;
  });

  const controller = new AbortController();
  const cancelled = server.request("roots/list", undefined, { signal: controller.signal });
  const third = await wire.next((m) => m.method === "roots/list" && m.id !== asked.id);
  controller.abort("changed my mind");
  await assert.rejects(cancelled, McpError);
  const notice = await wire.next((m) => m.method === "notifications/cancelled");
  assert.deepEqual(notice.params, { requestId: third.id, reason: "changed my mind" });

  const timedOut = server.request("roots/list", undefined, { timeoutMs: 20 });
  await assert.rejects(timedOut, /timed out/);
  const cancels = wire.sent.filter((s) => s.message.method === "notifications/cancelled");
  assert.equal(cancels.length, 2, "the timed-out request is withdrawn too");
  // A late answer to a withdrawn request is reported, not delivered anywhere.
  const errors: Error[] = [];
  server.onerror = (error) => errors.push(error);
  wire.deliver({ id: third.id, result: { roots: [] } });
  assert.match(errors[0]?.message ?? "", /unknown request/);
});

test("MCP engine: logging/setLevel holds back less severe messages", async () => {
  const { server, wire } = await connected();
  await server.sendLoggingMessage({ level: "debug", data: "before any level" });
  wire.deliver({ id: "lvl", method: "logging/setLevel", params: { level: "error" } });
  assert.deepEqual((await wire.reply("lvl")).result, {});
  await server.sendLoggingMessage({ level: "warning", data: "held back" });
  await server.sendLoggingMessage({ level: "critical", logger: "x", data: "sent" });
  const logged = wire.sent.filter((s) => s.message.method === "notifications/message")
    .map((s) => s.message.params);
  assert.deepEqual(logged, [
    { level: "debug", data: "before any level" },
    { level: "critical", logger: "x", data: "sent" },
  ]);
});

test("MCP engine: a close aborts running handlers, fails open requests and chains the transport's onclose", async () => {
  const server = new McpServer({ info: { name: "e", version: "1" }, capabilities: {} });
  const wire = new Wire();
  const heard: string[] = [];
  wire.onclose = () => heard.push("transport");
  server.onclose = () => heard.push("server");
  await server.connect(wire);
  let signal: AbortSignal | undefined;
  server.setRequestHandler("hang", (_params, context) => {
    signal = context.signal;
    return new Promise(() => {});
  });
  wire.deliver({ id: 1, method: "hang" });
  const open = server.request("roots/list", undefined);
  await until(() => signal !== undefined, "the handler started");
  await server.close();
  assert.equal(signal?.aborted, true);
  await assert.rejects(open, /Connection closed/);
  assert.deepEqual(heard, ["transport", "server"]);
  await assert.rejects(server.request("ping", undefined), /Not connected/);
  // Closed, it connects again.
  const again = new Wire();
  await server.connect(again);
  again.deliver({ id: "p", method: "ping" });
  assert.deepEqual((await again.reply("p")).result, {});
});

test("MCP engine: a request reusing the id of a running one gets -32600, and the running one stays cancellable", async () => {
  const { server, wire } = await connected();
  const signals: AbortSignal[] = [];
  server.setRequestHandler("slow", (_params, context) =>
    new Promise((resolve) => {
      signals.push(context.signal);
      context.signal.addEventListener("abort", () => resolve({}));
    }));
  wire.deliver({ id: 1, method: "slow" });
  await until(() => signals.length > 0, "the handler started");
  wire.deliver({ id: 1, method: "slow" });
  const refused = await wire.reply(1);
  assert.equal((refused.error as { code: number }).code, -32600);
  assert.match((refused.error as { message: string }).message, /1 is already running/);
  // The same id as a string is another request.
  wire.deliver({ id: "1", method: "ping" });
  assert.deepEqual((await wire.reply("1")).result, {});
  assert.equal(signals.length, 1, "the second request never reached its handler");
  wire.deliver({ method: "notifications/cancelled", params: { requestId: 1 } });
  assert.equal(signals[0].aborted, true, "the first request is the one cancelled");
  // Once it has ended (its handler settles within the next turn), its id may be used again.
  await new Promise((resolve) => setTimeout(resolve, 0));
  wire.deliver({ id: 1, method: "ping" });
  await wire.next((m) => m.id === 1 && m.result !== undefined);
  await server.close();
});
