/**
 * What a host passes besides the tool's input (`callId`, `signal`,
 * `deadline`, `progress`, `approve`) is checked before anything runs: a
 * value that is not one is an `invalid_input` result naming the field.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { inspect } from "node:util";
import { createSession, finalizeToolset } from "../mod.ts";
import type { CallOptions, CallRequest, FinalizedToolset, ToolResult } from "../mod.ts";
import { tempDir } from "./helpers.ts";

/** Whether `path` exists. */
const exists = (path: string) => stat(path).then(() => true, () => false);

/** A toolset on a fresh temporary directory, and the path a `touch` in it makes. */
async function touchWorkspace(): Promise<
  { toolset: FinalizedToolset; made: string; cleanup: () => Promise<void> }
> {
  const dir = await tempDir();
  const session = await createSession({ workingDirectory: dir.path });
  return {
    toolset: finalizeToolset({ session }),
    made: `${dir.path}/made`,
    cleanup: async () => {
      await session.processes.shutdown();
      await dir.cleanup();
    },
  };
}

/** Request fields that are not what a call takes, each with the field it names. */
const BAD_FIELDS: readonly [string, Record<string, unknown>][] = [
  ["deadline", { deadline: NaN }],
  ["deadline", { deadline: Infinity }],
  ["deadline", { deadline: -1 }],
  ["deadline", { deadline: "soon" }],
  ["signal", { signal: {} }],
  ["signal", { signal: "abort" }],
  ["progress", { progress: "x" }],
  ["approve", { approve: true }],
  ["callId", { callId: 7 }],
  ["callId", { callId: undefined }],
];

test("call request: a deadline, signal, progress, approve or callId that is not one is invalid_input naming the field, and nothing runs", async () => {
  const { toolset, made, cleanup } = await touchWorkspace();
  try {
    for (const [field, bad] of BAD_FIELDS) {
      const request = {
        name: "bash",
        input: { command: `touch ${made}` },
        callId: "c1",
        approve: () => Promise.resolve(true),
        ...bad,
      } as unknown as CallRequest;
      const result = await toolset.call(request);
      const shown = `${field}: ${inspect(bad)}`;
      assert.equal(result.ok, false, shown);
      assert.equal(result.error?.code, "invalid_input", `${shown}: ${result.output}`);
      assert.match(result.error!.message, new RegExp(`^${field}: `, "m"), shown);
      assert.equal(await exists(made), false, `${shown}: the command did not run`);
    }
  } finally {
    await cleanup();
  }
});

test("call request: execute refuses options that are not a call's, and runs nothing", async () => {
  const { toolset, made, cleanup } = await touchWorkspace();
  try {
    const prepared = await toolset.prepare("bash", { command: `touch ${made}` });
    assert.equal(prepared.ok, true);
    for (const [field, bad] of BAD_FIELDS.filter(([field]) => field !== "approve")) {
      const options = { callId: "c2", ...bad } as unknown as CallOptions;
      const result: ToolResult = await toolset.execute(prepared, options);
      const shown = `${field}: ${inspect(bad)}`;
      assert.equal(result.error?.code, "invalid_input", `${shown}: ${result.output}`);
      assert.match(result.error!.message, new RegExp(`^${field}: `, "m"), shown);
      assert.equal(await exists(made), false, `${shown}: the command did not run`);
    }
    const missing = await toolset.execute(prepared, undefined as unknown as CallOptions);
    assert.equal(missing.error?.code, "invalid_input", missing.output);
    const none = await toolset.call(undefined as unknown as CallRequest);
    assert.equal(none.error?.code, "invalid_input", none.output);
    assert.equal(await exists(made), false);
  } finally {
    await cleanup();
  }
});

test("call request: a deadline beyond the timer range does not stop the call, and a valid one still runs it", async () => {
  const { toolset, made, cleanup } = await touchWorkspace();
  try {
    // 2^32 ms ahead: past the 2^31 - 1 ms a timer can wait, which a runtime would cut to 1 ms.
    const result = await toolset.call({
      name: "bash",
      input: { command: `sleep 0.1; touch ${made}` },
      callId: "c3",
      deadline: Date.now() + 2 ** 32,
      signal: new AbortController().signal,
      progress: () => {},
      approve: () => Promise.resolve(true),
    });
    assert.equal(result.ok, true, result.output);
    assert.equal(await exists(made), true);
  } finally {
    await cleanup();
  }
});
