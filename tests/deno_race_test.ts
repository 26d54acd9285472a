/**
 * The spec's §11 "路径安全" for a Deno host run the documented way: a child
 * `deno run` under exactly the flags of `denoPermissionFlags` (and, apart,
 * under the flags of `deno task cli`, which the README's MCP configuration
 * uses), with no link or anything else set up for it, while python3
 * processes swap a directory and a file of its root with links to outside.
 * Deno checks its flags against paths as written, so they do not stop a read
 * or a write through such a link: only the library's own checks do.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { sh, tempDir, underDeno } from "./helpers.ts";
import { denoEntry } from "./deno_host.ts";
import { cliTaskFlags } from "./mcp_helpers.ts";
import {
  finalReport,
  type Helper,
  namesIn,
  startPython,
  SWAPPER,
  treeState,
} from "./race_helpers.ts";

/**
 * How long the host calls the tools at least, and the fewest attempts each tool makes (an undo
 * follows each write or edit that went in, and most are refused while the directory is swapped).
 */
const RUN_MS = 4_000;
const MIN_ATTEMPTS: Record<string, number> = {
  read: 30,
  list: 30,
  glob: 30,
  grep: 30,
  write: 30,
  edit: 30,
  undo: 10,
};
const TOOLS = Object.keys(MIN_ATTEMPTS);
/** Files in d/many: more than the calling thread searches before the search workers go on. */
const MANY = 80;

interface DenoLike {
  execPath(): string;
  Command: new (
    program: string,
    options: { args: string[]; stdout: "piped"; stderr: "piped" },
  ) => { output(): Promise<{ code: number; stdout: Uint8Array; stderr: Uint8Array }> };
}

interface Tally {
  attempts: number;
  succeeded: number;
  refusals: Record<string, number>;
  leaks: number;
  leaked: string[];
}

const hosts: [string, (root: string) => Promise<string[]>][] = [
  [
    "the flags of denoPermissionFlags",
    async (root) => (await denoEntry()).denoPermissionFlags({ workingDirectory: root }),
  ],
  ["the flags of `deno task cli`", () => Promise.resolve(cliTaskFlags())],
];

for (const [label, flagsFor] of hosts) {
  test(
    `路径安全 (Deno host under ${label}): while another process swaps a directory and a file with links to outside, no tool reads or changes anything outside the root`,
    { skip: !underDeno && "runs a Deno host" },
    async () => {
      const marker = `OUTSIDE-SECRET-${randomBytes(8).toString("hex")}`;
      const dir = await tempDir();
      const helpers: Helper[] = [];
      try {
        const root = join(dir.path, "repo");
        const outside = join(dir.path, "outside");
        const swap = join(dir.path, "swap");
        // Inside: the files the host calls the tools on. Outside: the same names, holding the
        // marker, plus names made of it.
        for (const [base, last] of [[root, "inside"], [join(outside), marker]]) {
          await fs.mkdir(join(base, "d/sub"), { recursive: true });
          await fs.mkdir(join(base, "d/many"));
          await fs.writeFile(join(base, "d/f.txt"), `f\nkey: value\n${last}\n`);
          await fs.writeFile(join(base, "d/sub/g.txt"), `g\nkey: value\n${last}\n`);
          await fs.writeFile(join(base, "t.txt"), `t\nkey: value\n${last}\n`);
          for (let i = 0; i < MANY; i++) {
            await fs.writeFile(join(base, `d/many/n${i}.txt`), `n${i}\nkey: value\n${last}\n`);
          }
        }
        await fs.writeFile(join(outside, `d/${marker}.txt`), `${marker}\n`);
        await fs.writeFile(join(outside, `d/sub/${marker}.txt`), `${marker}\n`);
        // The links wait beside the root; each exchange puts one in place of the real entry.
        await fs.mkdir(swap);
        await sh('ln -s "$1" "$2"', join(outside, "d"), join(swap, "d"));
        await sh('ln -s "$1" "$2"', join(outside, "t.txt"), join(swap, "t.txt"));
        const outsideBefore = await treeState(outside);
        const topBefore = await namesIn(dir.path);

        helpers.push(startPython(SWAPPER, join(root, "d"), join(swap, "d")));
        helpers.push(startPython(SWAPPER, join(root, "t.txt"), join(swap, "t.txt")));
        await Promise.all(helpers.map((h) => h.ready));

        // Deno.Command, not node:child_process: Deno's Node layer rewrites commands that start
        // Deno. The flags are all the host gets.
        const { Deno: deno } = globalThis as unknown as { Deno: DenoLike };
        const agent = fileURLToPath(new URL("./fixtures/race_agent.ts", import.meta.url));
        const flags = await flagsFor(root);
        const child = await new deno.Command("bash", {
          args: [
            "-c",
            'exec "$@"',
            "bash",
            deno.execPath(),
            "run",
            "--quiet",
            ...flags,
            agent,
            root,
            marker,
            String(RUN_MS),
            JSON.stringify(MIN_ATTEMPTS),
          ],
          stdout: "piped",
          stderr: "piped",
        }).output();
        for (const helper of helpers) helper.stop();
        const [directorySwaps, fileSwaps] = await Promise.all(
          helpers.map((h) => finalReport<{ swaps: number; failures: Record<string, number> }>(h)),
        );
        const stderr = new TextDecoder().decode(child.stderr);
        assert.equal(child.code, 0, stderr);
        const out = new TextDecoder().decode(child.stdout).trim().split("\n");
        const tallies = JSON.parse(out[out.length - 1]) as Record<string, Tally>;
        const outsideAfter = await treeState(outside);
        const summary = TOOLS.map((tool) => {
          const { attempts, succeeded, refusals, leaks } = tallies[tool];
          return `${tool} ${succeeded}/${attempts} ok, ${leaks} leaks ${JSON.stringify(refusals)}`;
        });
        console.log(
          `路径安全 (Deno host under ${label}): ${summary.join("; ")}; ` +
            `${directorySwaps.swaps} directory swaps, ${fileSwaps.swaps} file swaps`,
        );
        // The test means something only if the exchanges happened and every tool ran meanwhile.
        assert.ok(directorySwaps.swaps > 0, `no directory swap: ${JSON.stringify(directorySwaps)}`);
        assert.ok(fileSwaps.swaps > 0, `no file swap: ${JSON.stringify(fileSwaps)}`);
        for (const tool of TOOLS) {
          const tally = tallies[tool];
          assert.ok(tally.attempts >= MIN_ATTEMPTS[tool], `${tool}: ${tally.attempts} attempts`);
          assert.ok(tally.succeeded > 0, `${tool}: every call was refused`);
        }
        assert.deepEqual(
          Object.fromEntries(TOOLS.map((tool) => [tool, tallies[tool].leaked])),
          Object.fromEntries(TOOLS.map((tool) => [tool, []])),
          "results held bytes or names from outside the root",
        );
        assert.deepEqual(
          outsideAfter.filter((line) => !outsideBefore.includes(line)),
          [],
          "entries outside the root were made or changed",
        );
        assert.deepEqual(outsideAfter, outsideBefore);
        assert.deepEqual(await namesIn(dir.path), topBefore);
        assert.deepEqual(await namesIn(swap), ["d", "t.txt"]);
      } finally {
        for (const helper of helpers) helper.stop();
        await Promise.all(helpers.map((h) => h.done.catch(() => {})));
        await dir.cleanup();
      }
    },
  );
}
