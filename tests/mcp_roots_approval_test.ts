/**
 * The MCP server's working directory from the client's roots, and its three
 * approval modes, against the official MCP client over stdio.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { sh, tempDir, until } from "./helpers.ts";
import { createSession, type FinalizedToolset, finalizeToolset } from "../mod.ts";
import { ClientRoots } from "../src/mcp/roots.ts";
import { cliCommand, ENV } from "./mcp_helpers.ts";

/** Starts the server with `flags`; a client with `roots` answers `roots/list` from `roots.current`. */
async function start(
  flags: string[],
  roots?: { current: string[] },
): Promise<Client> {
  const { command, args } = cliCommand();
  const transport = new StdioClientTransport({
    command,
    args: [...args, "mcp", ...flags],
    env: ENV,
    stderr: "ignore",
  });
  const client = new Client({ name: "openwork-test", version: "1.0.0" }, {
    capabilities: roots === undefined ? {} : { roots: { listChanged: true } },
  });
  if (roots !== undefined) {
    client.setRequestHandler(ListRootsRequestSchema, () =>
      Promise.resolve({
        roots: roots.current.map((path) => ({ uri: pathToFileURL(path).href, name: path })),
      }));
  }
  await client.connect(transport);
  return client;
}

function text(result: object): string {
  return (result as { content: { text: string }[] }).content.map((c) => c.text).join("\n");
}

/** Reads `name` through the server until it answers with `expected` (roots are read asynchronously). */
async function readUntil(client: Client, name: string, expected: RegExp): Promise<string> {
  let last = "";
  await until(async () => {
    last = text(await client.callTool({ name: "read", arguments: { path: name } }));
    return expected.test(last);
  }, `${name} reads ${expected}`).catch(() => {});
  return last;
}

test("MCP: without --root, the client's first file:// root is the working directory, and list_changed moves it", async () => {
  const dir = await tempDir();
  const [first, second] = [`${dir.path}/first`, `${dir.path}/second`];
  await mkdir(first);
  await mkdir(second);
  await writeFile(`${first}/which.txt`, "the first root\n");
  await writeFile(`${second}/which.txt`, "the second root\n");
  const roots = { current: [first, second] };
  const client = await start(["--mode", "default"], roots);
  try {
    assert.match(await readUntil(client, "which.txt", /the first root/), /the first root/);
    roots.current = [second];
    await client.sendRootsListChanged();
    assert.match(await readUntil(client, "which.txt", /the second root/), /the second root/);
    // The second root's neighbour is outside it.
    const outside = await client.callTool({
      name: "read",
      arguments: { path: `${first}/which.txt` },
    });
    assert.equal(outside.isError, true);
    assert.match(text(outside), /path_outside_root/);
  } finally {
    await client.close();
    await dir.cleanup();
  }
});

test("MCP: --root wins over the client's roots", async () => {
  const dir = await tempDir();
  const [fixed, offered] = [`${dir.path}/fixed`, `${dir.path}/offered`];
  await mkdir(fixed);
  await mkdir(offered);
  await writeFile(`${fixed}/which.txt`, "the fixed root\n");
  await writeFile(`${offered}/which.txt`, "the offered root\n");
  const client = await start(["--root", fixed], { current: [offered] });
  try {
    // Long enough for a roots/list to have happened, had the server asked.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const read = await client.callTool({ name: "read", arguments: { path: "which.txt" } });
    assert.match(text(read), /the fixed root/);
  } finally {
    await client.close();
    await dir.cleanup();
  }
});

test("MCP: approval modes: elicit refuses without elicitation and names --approval client, client runs, policy refuses", async () => {
  const dir = await tempDir();
  // Not provably read-only: the policy asks about it in the default mode.
  const command = "touch made-by-bash.txt";
  try {
    const outcomes: Record<string, { isError: boolean; text: string; made: boolean }> = {};
    for (const approval of ["elicit", "client", "policy"]) {
      const client = await start(["--root", dir.path, "--approval", approval]);
      try {
        const result = await client.callTool({ name: "bash", arguments: { command } });
        const made = await readFile(`${dir.path}/made-by-bash.txt`).then(() => true, () => false);
        outcomes[approval] = { isError: result.isError === true, text: text(result), made };
      } finally {
        await client.close();
        await rm(`${dir.path}/made-by-bash.txt`, { force: true });
      }
    }
    assert.equal(outcomes.elicit.isError, true);
    assert.match(outcomes.elicit.text, /denied/);
    assert.match(outcomes.elicit.text, /--approval client/);
    assert.equal(outcomes.elicit.made, false);
    assert.equal(outcomes.client.isError, false, outcomes.client.text);
    assert.equal(outcomes.client.made, true);
    assert.equal(outcomes.policy.isError, true);
    assert.match(outcomes.policy.text, /--approval policy/);
    assert.equal(outcomes.policy.made, false);
    // A read-only command needs no approval in any mode.
    const client = await start(["--root", dir.path, "--approval", "policy"]);
    try {
      const result = await client.callTool({ name: "bash", arguments: { command: "pwd" } });
      assert.equal(result.isError, false, text(result));
    } finally {
      await client.close();
    }
  } finally {
    await dir.cleanup();
  }
});

test("MCP roots: a directory named in several spellings, or through a link, makes one toolset; past 64 directories a new root is refused and the working directory stays", async () => {
  const dir = await tempDir();
  try {
    const repo = `${dir.path}/repo`;
    await mkdir(repo);
    await sh('ln -s "$1" "$2"', repo, `${dir.path}/link`);
    let named = `${repo}`;
    const warnings: string[] = [];
    let made = 0;
    const make = async (root: string) => {
      made++;
      return finalizeToolset({ session: await createSession({ workingDirectory: root }) });
    };
    const fallback = await make(dir.path);
    const roots = new ClientRoots(
      { declared: () => true, list: () => Promise.resolve({ roots: [{ uri: named }] }) },
      fallback,
      make,
      (message) => warnings.push(message),
    );
    const spellings = [
      pathToFileURL(repo).href,
      `${pathToFileURL(repo).href}/`,
      pathToFileURL(`${dir.path}/link`).href,
      pathToFileURL(`${repo}/.`).href,
    ];
    const toolsets: unknown[] = [];
    for (const spelling of spellings) {
      named = spelling;
      roots.refresh();
      toolsets.push(await roots.current());
    }
    assert.equal(made, 2, "the fallback and one toolset for the repository");
    assert.ok(toolsets.every((toolset) => toolset === toolsets[0]));
    assert.equal(roots.all().length, 2);

    // Up to 64 directories in all (the fallback's among them); the 65th is refused.
    for (let i = 0; i < 62; i++) {
      await mkdir(`${dir.path}/d${i}`);
      named = pathToFileURL(`${dir.path}/d${i}`).href;
      roots.refresh();
      await roots.current();
    }
    assert.equal(roots.all().length, 64);
    const before = await roots.current();
    await mkdir(`${dir.path}/one-more`);
    named = pathToFileURL(`${dir.path}/one-more`).href;
    roots.refresh();
    assert.equal(await roots.current(), before);
    assert.equal(roots.all().length, 64);
    assert.match(warnings.join("\n"), /at most 64 working directories/);
    await Promise.all(roots.all().map((toolset) => toolset.session.processes.shutdown()));
  } finally {
    await dir.cleanup();
  }
});

/** A toolset with only what ClientRoots uses of one: its directory, realPath and shutdown. */
function fake(workingDirectory: string): FinalizedToolset {
  return {
    session: {
      workingDirectory,
      filesystem: { realPath: (path: string) => Promise.resolve(path) },
      processes: { shutdown: () => Promise.resolve() },
    },
  } as unknown as FinalizedToolset;
}

test("MCP roots: two list_changed refreshes at once make one toolset for their root, and every toolset made ends with the server", async () => {
  // Made by hand so that the interleaving is fixed: each step is a resolved promise.
  const made: FinalizedToolset[] = [];
  const make = async (root: string) => {
    for (let i = 0; i < 5; i++) await null;
    const toolset = fake(root);
    made.push(toolset);
    return toolset;
  };
  const roots = new ClientRoots(
    { declared: () => true, list: () => Promise.resolve({ roots: [{ uri: "file:///repo" }] }) },
    fake("/fallback"),
    make,
    () => {},
  );
  roots.refresh();
  roots.refresh();
  const current = await roots.current();
  assert.equal(made.length, 1);
  assert.equal(current, made[0]);
  for (const toolset of made) assert.ok(roots.all().includes(toolset));
});

test("MCP roots: a burst of list_changed while a read is under way costs one more read, and the calls after it get the last roots", async () => {
  let reads = 0;
  let answer = "file:///first";
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const roots = new ClientRoots(
    {
      declared: () => true,
      list: async () => {
        reads++;
        // The first read waits: the burst comes while it is under way.
        if (reads === 1) await held;
        return { roots: [{ uri: answer }] };
      },
    },
    fake("/fallback"),
    (root) => Promise.resolve(fake(root)),
    () => {},
  );
  roots.refresh();
  for (let i = 0; i < 2000; i++) roots.refresh();
  answer = "file:///last";
  release();
  // Settles once both reads are done.
  while (reads < 2) await new Promise((resolve) => setTimeout(resolve, 1));
  assert.equal((await roots.current()).session.workingDirectory, "/last");
  assert.equal(reads, 2);
});
