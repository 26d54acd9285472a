/**
 * The CLI's MCP server against every official MCP client a host may use —
 * the v1 SDK client, the v2 client in legacy negotiation, and the v2 client
 * pinned to 2026-07-28 — over stdio and over Streamable HTTP. The same
 * behaviour is asked of each: only what a client sees is checked.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { ALL_TOOLS, sh, tempDir, until } from "./helpers.ts";
import { type ClientKind, openSession, text, type TransportKind } from "./mcp_clients.ts";

/** Each client a host may use. */
const CLIENTS: ClientKind[] = ["sdk v1", "client v2 legacy", "client v2 pinned 2026-07-28"];
const TRANSPORTS: TransportKind[] = ["stdio", "http"];

/**
 * Whether a `sleep <nap>` is running (a zombie has ended: only its exit
 * status is left), found by its arguments.
 */
async function alive(nap: string): Promise<boolean> {
  const out = await sh(
    "ps -eo stat=,args= | awk '$1 !~ /^Z/ { $1 = \"\"; print substr($0, 2) }' | " +
      'grep -cxF "sleep $1" || true',
    nap,
  );
  return Number(out.trim()) > 0;
}

for (const kind of CLIENTS) {
  for (const transport of TRANSPORTS) {
    const name = `MCP clients: ${kind} over ${transport}`;

    test(
      `${name}: lists the seven tools and calls each once; a call without arguments runs with {}`,
      async () => {
        const dir = await tempDir();
        const session = await openSession(kind, transport, { root: dir.path });
        try {
          assert.deepEqual(await session.toolNames(), ALL_TOOLS);
          const write = await session.call("write", { path: "notes.txt", content: "one\ntwo\n" });
          assert.equal(write.isError, false, text(write));
          assert.equal(await readFile(`${dir.path}/notes.txt`, "utf8"), "one\ntwo\n");
          const read = await session.call("read", { path: "notes.txt" });
          assert.match(text(read), /1\tone\n\s*2\ttwo/);
          const edit = await session.call("edit", {
            path: "notes.txt",
            old_text: "two",
            new_text: "three",
          });
          assert.equal(edit.isError, false, text(edit));
          assert.equal(await readFile(`${dir.path}/notes.txt`, "utf8"), "one\nthree\n");
          const grep = await session.call("grep", { pattern: "thr+ee", mode: "content" });
          assert.equal(text(grep), "notes.txt:2:three");
          const glob = await session.call("glob", { pattern: "*.txt" });
          assert.match(text(glob), /^notes\.txt$/m);
          const list = await session.call("list", { path: "." });
          assert.match(text(list), /notes\.txt/);
          const bash = await session.call("bash", { command: "tail -n 1 notes.txt" });
          assert.equal(bash.isError, false, text(bash));
          assert.match(text(bash), /three/);
          // `arguments` is optional in tools/call: list without it lists the working directory.
          const bare = await session.call("list");
          assert.equal(bare.isError, false, text(bare));
          assert.match(text(bare), /notes\.txt/);
          // A tool with a required field answers a call without arguments as bad input, not -32602.
          const needs = await session.call("read");
          assert.equal(needs.isError, true);
          assert.match(text(needs), /\[invalid_input\]/);
        } finally {
          await session.close();
          await dir.cleanup();
        }
      },
    );

    test(
      `${name}: bash reports progress, and a cancelled call ends its process group`,
      async () => {
        const dir = await tempDir();
        const session = await openSession(kind, transport, { root: dir.path });
        // `cat` reads the FIFO until every process holding its write end has ended: bash and its
        // `sleep` child both hold it, so its end is the event of the process group being gone.
        await sh('mkfifo "$1"', `${dir.path}/held`);
        const released = sh('cat "$1" > /dev/null', `${dir.path}/held`);
        try {
          const cancel = new AbortController();
          // Found by its arguments: in a PID namespace of its own the command sees other pids.
          const nap = (3000 + Math.random()).toFixed(6);
          let sleeping: () => void = () => {};
          const started = new Promise<void>((resolve) => (sleeping = resolve));
          const progress: string[] = [];
          const call = session.call("bash", {
            command: `exec 3> held; sleep ${nap} & echo "sleeping"; wait`,
          }, {
            signal: cancel.signal,
            onprogress: ({ message }) => {
              progress.push(message ?? "");
              if (progress.join("").includes("sleeping")) sleeping();
            },
          });
          await Promise.race([
            started,
            call.then((r) => assert.fail(`the call ended before any progress: ${text(r)}`)),
          ]);
          // Printed once forked; the sleep is there once it has started.
          await until(() => alive(nap), "the sleep runs while the call does");
          cancel.abort("no longer needed");
          await assert.rejects(call);
          await released;
          assert.equal(await alive(nap), false, "the sleep child is gone");
        } finally {
          // Lets `cat` end even when the call never ran (opening a FIFO read-write never blocks).
          await sh('exec 3<> "$1"', `${dir.path}/held`);
          await released.catch(() => {});
          await session.close();
          await dir.cleanup();
        }
      },
    );

    test(
      `${name}: an approval declined through elicitation writes nothing; accepted, it writes`,
      async () => {
        const dir = await tempDir();
        const session = await openSession(kind, transport, {
          root: dir.path,
          mode: "default",
          answers: ["decline", "accept"],
        });
        try {
          const declined = await session.call("write", { path: "asked.txt", content: "no\n" });
          assert.equal(declined.isError, true);
          assert.match(text(declined), /declined/);
          assert.equal(await readFile(`${dir.path}/asked.txt`, "utf8").catch(() => null), null);
          const accepted = await session.call("write", { path: "asked.txt", content: "yes\n" });
          assert.equal(accepted.isError, false, text(accepted));
          assert.equal(await readFile(`${dir.path}/asked.txt`, "utf8"), "yes\n");
          assert.equal(session.asked.length, 2);
          for (const message of session.asked) assert.match(message, /asked\.txt/);
        } finally {
          await session.close();
          await dir.cleanup();
        }
      },
    );

    test(
      `${name}: two sessions on different roots, called at once, do not see each other's files`,
      async () => {
        const [one, two] = [await tempDir(), await tempDir()];
        await writeFile(`${one.path}/only-one.txt`, "one\n");
        await writeFile(`${two.path}/only-two.txt`, "two\n");
        const [a, b] = await Promise.all([
          openSession(kind, transport, { root: one.path }),
          openSession(kind, transport, { root: two.path }),
        ]);
        try {
          const [listedA, listedB, shellA, shellB, crossA, crossB] = await Promise.all([
            a.call("glob", { pattern: "**/*.txt" }),
            b.call("glob", { pattern: "**/*.txt" }),
            a.call("bash", { command: "ls" }),
            b.call("bash", { command: "ls" }),
            a.call("read", { path: `${two.path}/only-two.txt` }),
            b.call("read", { path: `${one.path}/only-one.txt` }),
          ]);
          assert.equal(text(listedA).trim(), "only-one.txt");
          assert.equal(text(listedB).trim(), "only-two.txt");
          assert.match(text(shellA), /only-one\.txt/);
          assert.doesNotMatch(text(shellA), /only-two/);
          assert.match(text(shellB), /only-two\.txt/);
          assert.doesNotMatch(text(shellB), /only-one/);
          for (const cross of [crossA, crossB]) {
            assert.equal(cross.isError, true);
            assert.match(text(cross), /\[path_outside_root\]/);
          }
        } finally {
          await Promise.all([a.close(), b.close()]);
          await one.cleanup();
          await two.cleanup();
        }
      },
    );
  }
}
