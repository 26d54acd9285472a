/**
 * The approval card shows exactly what would run: every question a person
 * reads (the toolset's, the MCP elicitation, the framework adapters') shows
 * the model's command with its control, bidi and invisible characters
 * escaped, one way back, and states the length of a long one. (The CLI's
 * terminal question is tested on a real terminal in `cli_test.ts`.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { generateText, stepCountIs } from "ai";
import type { MockLanguageModelV4 } from "ai/test";
import { Agent, Runner } from "@openai/agents";
import { approvalQuestion, LONG_EFFECT_CHARS, type ToolEffect, visibleText } from "../mod.ts";
import { createMcpServer, type McpTransport } from "../mcp.ts";
import { describeApprovalRequest, toAISDKTools } from "../ai_sdk.ts";
import { describeInterruption, toOpenAIAgentsTools } from "../openai_agents.ts";
import { callsOnceLanguageModel, CallsOnceModel, diskToolset } from "./adapter_fixtures.ts";
import { FORGED_CARD, FORGED_CARD_SHOWN } from "./helpers.ts";

/** The question every face must ask about {@link FORGED_CARD}. */
const FORGED_QUESTION = `Allow bash: run \`${FORGED_CARD_SHOWN}\`? (bash.not_proven_read_only)`;

/** Undoes {@link visibleText}: each escape it writes, back to its character. */
function unescape(shown: string): string {
  const short: Record<string, string> = { "\\": "\\", n: "\n", r: "\r", t: "\t" };
  return shown.replace(
    /\\(?:([\\nrt])|u\{([0-9a-f]+)\})/g,
    (_, letter: string | undefined, hex: string | undefined) =>
      letter !== undefined ? short[letter] : String.fromCodePoint(parseInt(hex!, 16)),
  );
}

/** Characters a terminal or a text view acts on, hides or reorders, by kind. */
const HIDDEN_KINDS: Record<string, string> = {
  "C0 controls and DEL": "\u0000\u0007\b\t\n\u000b\f\r\u001b\u007f",
  "C1 controls (next line, the one-byte CSI)": "\u0085\u009b",
  "bidi embeddings and overrides": "\u202a\u202b\u202c\u202d\u202e",
  "bidi isolates and marks": "\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
  "zero-width characters and the soft hyphen": "\u200b\u200c\u200d\u2060\ufeff\u00ad",
  "separators and spaces other than U+0020": "\u2028\u2029\u00a0\u3000\u2007",
  "ignorables, a tag, private use": "\ufe0f\u034f\u3164\u{e0041}\ue000",
  "a surrogate standing alone": String.fromCharCode(0xd800),
};

/** Each character of {@link HIDDEN_KINDS}. */
const HIDDEN: readonly string[] = [...Object.values(HIDDEN_KINDS).join("")];

test("approval card: visibleText escapes every control, bidi, invisible and separator character, and the backslash", () => {
  for (const char of HIDDEN) {
    const shown = visibleText(`a${char}b`);
    assert.match(shown, /^a\\(?:[nrt]|u\{[0-9a-f]+\})b$/, JSON.stringify(char));
    assert.equal(unescape(shown), `a${char}b`);
  }
  // What a person reads as-is stays as-is: ASCII, accented Latin letters (composed, or an ASCII
  // letter and its accents), Chinese, Japanese and Korean letters, a single space.
  const plain = "ls -la 'nai\u0308ve' été Ångström Việt Nam 日本語 カタカナ ひらがな が 한국어 x";
  assert.equal(visibleText(plain), plain);
});

/**
 * Commands that read as harmless and run `touch pwned`: each holds a character that passes for
 * ASCII shell syntax or a Latin letter, so the person reads another command than the one bash runs.
 */
const LOOK_ALIKES: Record<string, [command: string, shown: string]> = {
  "a Cyrillic e: `true` that fails, so `||` runs the rest": [
    "tru\u0435 || touch pwned",
    "tru\\u{435} || touch pwned",
  ],
  "a whole word of Cyrillic letters that reads `ps`": [
    "\u0440\u0455 || touch pwned",
    "\\u{440}\\u{455} || touch pwned",
  ],
  "a Latin letter that reads as g (U+0261)": [
    "\u0261it status || touch pwned",
    "\\u{261}it status || touch pwned",
  ],
  "a modifier letter colon that reads as the `:` command": [
    "\ua789 || touch pwned",
    "\\u{a789} || touch pwned",
  ],
  "a fullwidth colon": ["\uff1a || touch pwned", "\\u{ff1a} || touch pwned"],
  "a music sharp sign that reads as a comment's #": [
    "ls \u266f; touch pwned",
    "ls \\u{266f}; touch pwned",
  ],
  "a modifier double prime that reads as a quote": [
    "echo \u02ba; touch pwned; \u02ba",
    "echo \\u{2ba}; touch pwned; \\u{2ba}",
  ],
  "a set minus that reads as a backslash escaping the `;`": [
    "echo ok \u2216; touch pwned",
    "echo ok \\u{2216}; touch pwned",
  ],
  "a braille blank before #, so # starts no comment": [
    "ls \u2800#; touch pwned",
    "ls \\u{2800}#; touch pwned",
  ],
  "a combining dot on a space before #, so # starts no comment": [
    "ls \u0307#; touch pwned",
    "ls \\u{307}#; touch pwned",
  ],
};

test("approval card: visibleText escapes every character that passes for ASCII syntax or a Latin letter, so a harmless-looking card cannot run another command", async () => {
  for (const [kind, [command, shown]] of Object.entries(LOOK_ALIKES)) {
    assert.equal(visibleText(command), shown, kind);
    assert.equal(unescape(visibleText(command)), command, kind);
  }
  // What the card then says is what bash runs: `touch pwned`, in the open.
  const { root, toolset, cleanup } = await diskToolset();
  try {
    for (const [kind, [command, shown]] of Object.entries(LOOK_ALIKES)) {
      const questions: string[] = [];
      const result = await toolset.call({
        name: "bash",
        input: { command },
        callId: "c",
        approve: ({ question }) => (questions.push(question), Promise.resolve(true)),
      });
      assert.equal(questions[0], `Allow bash: run \`${shown}\`? (bash.not_proven_read_only)`, kind);
      assert.equal(await readFile(join(root, "pwned"), "utf8"), "", `${kind}: ${result.output}`);
      await rm(join(root, "pwned"));
    }
  } finally {
    await cleanup();
  }
});

test("approval card: visibleText escapes letters that reorder the line around them (Hebrew, Arabic), so `>` cannot show as `<`", () => {
  // A bidi-aware view shows `cat ב > א` as `cat א < ב`: it reads as a read, and it truncates א.
  assert.equal(visibleText("cat \u05d1 > \u05d0"), "cat \\u{5d1} > \\u{5d0}");
  assert.equal(visibleText("cp \u0627 \u0628"), "cp \\u{627} \\u{628}");
});

test("approval card: visibleText escapes combining marks that have no letter to sit on, overlay or span characters, or stack", () => {
  const cases: [written: string, shown: string][] = [
    // On the card's opening backquote, or on a space, quote or #.
    ["\u0300rm -rf ~", "\\u{300}rm -rf ~"],
    ["echo '\u0301' \u0308#", "echo '\\u{301}' \\u{308}#"],
    // Overlays and enclosures that make a letter read as another (o as ø, = as ≠), a double
    // accent spanning the next character.
    ["o\u0338 =\u0338 a\u20dd x\u0361y", "o\\u{338} =\\u{338} a\\u{20dd} x\\u{361}y"],
    // A stack taller than a line, drawn over the lines above and below.
    ["a\u0301\u0301\u0301\u0301", "a\u0301\u0301\\u{301}\\u{301}"],
  ];
  for (const [written, shown] of cases) {
    assert.equal(visibleText(written), shown, JSON.stringify(written));
    assert.equal(unescape(visibleText(written)), written);
  }
});

test("approval card: a run of spaces is shown as escapes after its first, so no stretch of a long command reads as blank", () => {
  // The dangerous head scrolls off a terminal above thousands of blank columns; `ls -la` stays.
  const command = `rm -rf ~/work #${" ".repeat(4000)}ls -la`;
  const question = approvalQuestion({ name: "bash", effects: [execute(command)] }, ASK);
  const shown = question.split("\n")[1];
  assert.ok(!shown.includes("  "), "no two spaces in a row");
  assert.equal(shown, `rm -rf ~/work # ${"\\u{20}".repeat(3999)}ls -la`);
  assert.equal(unescape(shown), command);
  assert.equal(visibleText("a  b"), "a \\u{20}b");
});

test("approval card: visibleText is one way back: a backslash the command holds never reads as an escape", () => {
  const written = ["a\\nb", "a\nb", "\\u{1b}", "\u001b", "\\\\", "\\", "C:\\temp\\new"];
  const shown = written.map(visibleText);
  assert.deepEqual(shown, [
    "a\\\\nb",
    "a\\nb",
    "\\\\u{1b}",
    "\\u{1b}",
    "\\\\\\\\",
    "\\\\",
    "C:\\\\temp\\\\new",
  ]);
  assert.equal(new Set(shown).size, written.length);
  const everything = written.join("") + HIDDEN.join("") + "plain";
  assert.equal(unescape(visibleText(everything)), everything);
  for (const char of HIDDEN) assert.ok(!visibleText(everything).includes(char));
});

/** The execute effect of `command`, as the bash tool declares it. */
function execute(command: string): ToolEffect {
  return {
    kind: "execute",
    command,
    classification: { readOnly: false, fileSystemGate: false, reason: "not proven read-only" },
  };
}

const ASK = { decision: "ask", source: "bash.not_proven_read_only" } as const;

test("approval card: a short command is one line, escaped; a long one is shown whole on its own line and the question states its length", () => {
  assert.equal(
    approvalQuestion({ name: "bash", effects: [execute(FORGED_CARD)] }, ASK),
    FORGED_QUESTION,
  );
  // Pushed off the card by length rather than by newlines: the question names the length.
  const long = `ls ${"x".repeat(4194)}\u202e; rm -rf ~/work`;
  const question = approvalQuestion({ name: "bash", effects: [execute(long)] }, ASK);
  const lines = question.split("\n");
  assert.deepEqual(lines, [
    "bash: run this command (4,213 characters, shown in full on the next line):",
    `ls ${"x".repeat(4194)}\\u{202e}; rm -rf ~/work`,
    "Allow bash: run the command above (4,213 characters)? (bash.not_proven_read_only)",
  ]);
  assert.equal(unescape(lines[1]), long, "nothing of it is left out");
  // Up to the limit, a command stays on the question's line.
  const edge = "x".repeat(LONG_EFFECT_CHARS);
  assert.equal(
    approvalQuestion({ name: "bash", effects: [execute(edge)] }, ASK),
    `Allow bash: run \`${edge}\`? (bash.not_proven_read_only)`,
  );
});

test("approval card: the MCP elicitation message shows the command escaped, and accepting runs exactly that command", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer(toolset);
  const client = new Client({ name: "openwork-test", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  const messages: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request: { params: { message: string } }) => {
    messages.push(request.params.message);
    return Promise.resolve({ action: "accept" as const, content: { approve: true } });
  });
  try {
    // The SDK's in-memory transport carries the SDK's message type; the server takes any JSON-RPC.
    await server.connect(serverSide as unknown as McpTransport);
    await client.connect(clientSide);
    const result = await client.callTool({ name: "bash", arguments: { command: FORGED_CARD } });
    assert.equal(result.isError, false, JSON.stringify(result.content));
    assert.deepEqual(messages, [FORGED_QUESTION]);
    assert.equal(await readFile(join(root, "pwned"), "utf8"), "");
    assert.equal(await readFile(join(root, "b\u202eidi"), "utf8"), "");
  } finally {
    await client.close();
    await toolset.session.processes.shutdown();
    await cleanup();
  }
});

/** An AI SDK mock model that calls bash with `command` once, then answers in text. */
function bashOnceAISDK(command: string): MockLanguageModelV4 {
  return callsOnceLanguageModel([{ name: "bash", args: { command } }]);
}

test("approval card: ai-sdk: describeApprovalRequest of the SDK's request, and the question an `approve` option gets, show the command escaped", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const paused = await generateText({
      model: bashOnceAISDK(FORGED_CARD),
      tools: toAISDKTools(toolset),
      prompt: "Go",
    });
    const request = paused.content.find((part) => part.type === "tool-approval-request");
    assert.ok(request, "the command waits for approval");
    assert.equal(await describeApprovalRequest(toolset, request), FORGED_QUESTION);

    const questions: string[] = [];
    await generateText({
      model: bashOnceAISDK(FORGED_CARD),
      tools: toAISDKTools(toolset, {
        approve: ({ question }) => (questions.push(question), Promise.resolve(true)),
      }),
      prompt: "Go",
      stopWhen: stepCountIs(2),
    });
    assert.deepEqual(questions, [FORGED_QUESTION]);
    assert.equal(await readFile(join(root, "pwned"), "utf8"), "");
  } finally {
    await cleanup();
  }
});

test("approval card: openai-agents: describeInterruption of the run's interruption, and the question an `approve` option gets, show the command escaped", async () => {
  const { root, toolset, cleanup } = await diskToolset();
  try {
    const paused = await new Runner().run(
      new Agent({
        name: "coder",
        tools: toOpenAIAgentsTools(toolset),
        model: new CallsOnceModel([{ name: "bash", args: { command: FORGED_CARD } }]),
      }),
      "Go",
    );
    assert.equal(paused.interruptions.length, 1);
    assert.equal(await describeInterruption(toolset, paused.interruptions[0]), FORGED_QUESTION);

    const questions: string[] = [];
    const tools = toOpenAIAgentsTools(toolset, {
      approve: ({ question }) => (questions.push(question), Promise.resolve(true)),
    });
    const agent = new Agent({
      name: "coder",
      tools,
      model: new CallsOnceModel([{ name: "bash", args: { command: FORGED_CARD } }]),
    });
    const run = await new Runner().run(agent, "Go");
    assert.equal(run.finalOutput, "done");
    assert.deepEqual(questions, [FORGED_QUESTION]);
    assert.equal(await readFile(join(root, "pwned"), "utf8"), "");
  } finally {
    await cleanup();
  }
});
