/**
 * Option bags from JavaScript callers and casts: `createSession`, its
 * `permissions` and `searchIndex` options, and the backend factories refuse
 * a name they do not know (listing the ones they do) and a known option of
 * the wrong type, before anything is made.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createMemoryFileSystem, createSession } from "../mod.ts";
import type { SessionOptions, TerminationTiming } from "../mod.ts";
import { createNodeFileSystem, createNodeProcessBackend } from "../node.ts";
import type { DiskFileSystemOptions } from "../node.ts";
import { underDeno } from "./helpers.ts";

/** Options on an in-memory tree with `/repo`, with `extra` added. */
function memoryOptions(extra: Record<string, unknown>): SessionOptions {
  const filesystem = createMemoryFileSystem();
  filesystem.mkdirp("/repo");
  return { workingDirectory: "/repo", filesystem, ...extra } as unknown as SessionOptions;
}

const SESSION_OPTIONS = [
  "workingDirectory",
  "permissions",
  "skillRoot",
  "environment",
  "filesystem",
  "processes",
  "protectedNames",
  "searchIndex",
  "sandbox",
];

test("session options: createSession refuses an unknown option and lists the known ones", async () => {
  for (const unknown of ["sandbx", "searchIndx"]) {
    await assert.rejects(
      createSession(memoryOptions({ [unknown]: true })),
      (error: Error) => {
        assert.equal(error.name, "TypeError");
        assert.match(error.message, new RegExp(`^createSession: unknown option ${unknown}`));
        for (const known of SESSION_OPTIONS) assert.ok(error.message.includes(known), known);
        return true;
      },
    );
  }
  // A typed caller cannot write one: the options type has no such field.
  // @ts-expect-error sandbx is not an option
  await assert.rejects(createSession({ workingDirectory: "/", sandbx: true }), /sandbx/);
});

test("session options: createSession refuses known options of the wrong type, naming each", async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ workingDirectory: 42 }, /^TypeError: createSession: workingDirectory must be a string/],
    [
      { permissions: { mode: "yolo" } },
      /^TypeError: createSession: permissions\.mode must be one of default/,
    ],
    [
      { permissions: { mode: "plan", sandbox: true } },
      /permissions: unknown option sandbox; .*mode/,
    ],
    [{ permissions: "plan" }, /^TypeError: createSession: permissions must be an object/],
    [{ skillRoot: 5 }, /^TypeError: createSession: skillRoot must be a string or null/],
    [{ environment: { PATH: 1 } }, /^TypeError: createSession: environment\.PATH must be a string/],
    [
      { protectedNames: ".git" },
      /^TypeError: createSession: protectedNames must be an array of strings/,
    ],
    [{ filesystem: "disk" }, /^TypeError: createSession: filesystem must be an object/],
    [{ processes: 1 }, /^TypeError: createSession: processes must be an object/],
    [
      { searchIndex: "yes" },
      /^TypeError: createSession: searchIndex must be a boolean or an object/,
    ],
    [
      { searchIndex: { memoryLimt: 1 } },
      /searchIndex: unknown option memoryLimt; .*fenceDirectory, memoryLimit, watch/,
    ],
    [{ searchIndex: { memoryLimit: -1 } }, /searchIndex\.memoryLimit must be a non-negative/],
  ];
  for (const [extra, pattern] of cases) {
    await assert.rejects(createSession(memoryOptions(extra)), pattern, JSON.stringify(extra));
  }
  await assert.rejects(
    createSession(null as unknown as SessionOptions),
    /^TypeError: createSession: the options must be an object/,
  );
});

test("session options: the backend factories refuse an unknown option and a wrong type", async () => {
  const factories: [string, (options: DiskFileSystemOptions) => unknown][] = [
    ["createNodeFileSystem", createNodeFileSystem],
  ];
  const processes: [string, (timing: TerminationTiming) => unknown][] = [
    ["createNodeProcessBackend", createNodeProcessBackend],
  ];
  if (underDeno) {
    // Computed, so that the Node build neither compiles nor resolves the Deno entry.
    const specifier = "../deno.ts";
    const deno = await import(specifier) as {
      createDenoFileSystem(options: DiskFileSystemOptions): unknown;
      createDenoProcessBackend(timing: TerminationTiming): unknown;
    };
    factories.push(["createDenoFileSystem", deno.createDenoFileSystem]);
    processes.push(["createDenoProcessBackend", deno.createDenoProcessBackend]);
  }
  for (const [name, create] of factories) {
    assert.throws(
      () => create({ descriptorlink: "/tmp/fd" } as unknown as DiskFileSystemOptions),
      new RegExp(`^TypeError: ${name}: unknown option descriptorlink; .*descriptorLink`),
    );
    assert.throws(
      () => create({ searchWorker: "worker.js" } as unknown as DiskFileSystemOptions),
      new RegExp(`^TypeError: ${name}: searchWorker must be a URL or null`),
    );
    assert.throws(
      () => create({ descriptorRoute: "off" } as unknown as DiskFileSystemOptions),
      new RegExp(`^TypeError: ${name}: descriptorRoute must be "required" or "best-effort"`),
    );
    assert.throws(
      () => create({ descriptorLink: "fd" }),
      new RegExp(`^TypeError: ${name}: descriptorLink must be an absolute path`),
    );
  }
  for (const [name, create] of processes) {
    assert.throws(
      () => create({ grace: 5 } as unknown as TerminationTiming),
      new RegExp(`^TypeError: ${name}: unknown option grace; .*graceMs, confirmMs`),
    );
    assert.throws(
      () => create({ graceMs: NaN }),
      new RegExp(`^TypeError: ${name}: graceMs must be a finite, non-negative number`),
    );
  }
});
