/**
 * The spec's §11 "路径安全" where the file backend cannot reach the kernel's
 * `/proc/self/fd` itself (Deno short of `--allow-all`): a host whose flags do
 * not grant its link to it, or whose link is not (or no longer) one to
 * `/proc/self/fd`, is refused with a message saying what is missing; it never
 * goes on with checks that a concurrent swap can beat.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import process from "node:process";
import type { AsyncFileSystem } from "../mod.ts";
import { sh, tempDir, underDeno, workspace } from "./helpers.ts";
import type { BackendFixture } from "./helpers.ts";
import { denoEntry } from "./deno_host.ts";
import { treeState } from "./race_helpers.ts";

interface DenoLike {
  execPath(): string;
  Command: new (
    program: string,
    options: { args: string[]; stdout: "piped"; stderr: "piped" },
  ) => { output(): Promise<{ code: number; stdout: Uint8Array; stderr: Uint8Array }> };
}

interface Call {
  ok: boolean;
  code: string | null;
  output: string;
}

interface Report {
  started: boolean;
  error?: string;
  ready?: [string, string] | null;
  before?: Call;
  replacedBy?: number;
  write?: Call;
  after?: Call;
}

/** Runs tests/fixtures/route_agent.ts in a Deno child under `flags` and nothing else. */
async function host(flags: string[], ...args: string[]): Promise<Report> {
  // Deno.Command, not node:child_process: Deno's Node layer rewrites commands that start Deno.
  const { Deno: deno } = globalThis as unknown as { Deno: DenoLike };
  const agent = fileURLToPath(new URL("./fixtures/route_agent.ts", import.meta.url));
  const child = await new deno.Command("bash", {
    args: ["-c", 'exec "$@"', "bash", deno.execPath(), "run", "--quiet", ...flags, agent, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(child.code, 0, new TextDecoder().decode(child.stderr));
  const lines = new TextDecoder().decode(child.stdout).trim().split("\n");
  return JSON.parse(lines[lines.length - 1]) as Report;
}

/** A root with d/f.txt, and a directory outside it. */
async function layout(): Promise<
  { root: string; outside: string; path: string; cleanup(): Promise<void> }
> {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  const outside = join(dir.path, "outside");
  await fs.mkdir(join(root, "d"), { recursive: true });
  await fs.mkdir(outside);
  await fs.writeFile(join(root, "d/f.txt"), "inside\n");
  await fs.writeFile(join(outside, "secret.txt"), "secret\n");
  return { root, outside, path: dir.path, cleanup: dir.cleanup };
}

test(
  "路径安全 (Deno host): under flags that grant no route to its descriptors, the session is refused naming the flags it needs, never run on best-effort checks unless the host asks",
  { skip: !underDeno && "runs a Deno host" },
  async () => {
    const dir = await layout();
    try {
      const { root } = dir;
      // Deno's permissions alone, as hosts gave them before: the root, and bash.
      const bare = await host(
        [`--allow-read=${root}`, `--allow-write=${root}`, "--allow-run=bash", "--no-prompt"],
        root,
        "start",
      );
      assert.equal(bare.started, false, JSON.stringify(bare));
      assert.match(bare.error!, /^createSession: The file backend cannot verify what it opens/);
      assert.match(bare.error!, /--allow-sys=uid/);
      assert.equal(bare.ready?.[0], "runtime_permission_denied");

      // With the user id but not the link.
      const noLink = await host(
        [
          `--allow-read=${root}`,
          `--allow-write=${root}`,
          "--allow-run=bash",
          "--allow-sys=uid",
          "--no-prompt",
        ],
        root,
        "start",
      );
      assert.equal(noLink.started, false, JSON.stringify(noLink));
      assert.match(
        noLink.error!,
        /\(--allow-read=\/tmp\/openwork-tools-fd-\d+ --allow-write=\/tmp\/openwork-tools-fd-\d+\)/,
      );
      assert.deepEqual(noLink.ready?.[0], "runtime_permission_denied");

      // Only a host that asks for the best effort goes on without a route.
      const bestEffort = await host(
        [`--allow-read=${root}`, `--allow-write=${root}`, "--allow-run=bash", "--no-prompt"],
        root,
        "best-effort",
      );
      assert.deepEqual(bestEffort, { started: true });

      // The flags of denoPermissionFlags are what it needs.
      const flags = (await denoEntry()).denoPermissionFlags({ workingDirectory: root });
      const granted = await host(flags, root, "start");
      assert.deepEqual(granted, { started: true });
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "路径安全 (Deno host): a host's descriptor link is refused when the process cannot tell whose it is (no --allow-sys=uid)",
  { skip: !underDeno && "runs a Deno host" },
  async () => {
    const dir = await layout();
    try {
      const { root } = dir;
      const link = join(dir.path, "fd");
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        descriptorLink: link,
      }).filter((flag) => flag !== "--allow-sys=uid");
      // A link that reads /proc/self/fd, but whose owner this process cannot compare with itself.
      await sh('ln -s /proc/self/fd "$1"', link);
      const found = await host(flags, root, "start", link);
      assert.equal(found.started, false, JSON.stringify(found));
      assert.match(found.error!, /cannot tell its user id/);
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "路径安全 (Deno host): another user's entry in the place of the descriptor link is refused, with advice this user can follow",
  {
    skip: (!underDeno && "runs a Deno host") ||
      (process.getuid?.() !== 0 && "gives an entry to another user (needs root)"),
  },
  async () => {
    const dir = await layout();
    try {
      const { root } = dir;
      const link = join(dir.path, "fd");
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        descriptorLink: link,
      });
      // Another user's link to the right place, then another user's directory: in a shared
      // sticky directory, neither could be removed by this user.
      await sh('ln -s /proc/self/fd "$1" && chown -h 65534 "$1"', link);
      const link65534 = await host(flags, root, "start", link);
      assert.equal(link65534.started, false, JSON.stringify(link65534));
      assert.match(link65534.error!, new RegExp(`${link} belongs to user 65534`));
      assert.match(link65534.error!, /pass another descriptorLink/);
      assert.doesNotMatch(link65534.error!, /remove it/);
      await fs.rm(link);
      await sh('mkdir "$1" && chown 65534 "$1"', link);
      const directory = await host(flags, root, "start", link);
      assert.equal(directory.started, false, JSON.stringify(directory));
      assert.match(directory.error!, /is not a symbolic link but a directory/);
      assert.match(directory.error!, /pass another descriptorLink/);
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "路径安全 (Deno host): a link to elsewhere in the place of the descriptor link is refused, before the session starts and when it is put there during the session",
  { skip: !underDeno && "runs a Deno host" },
  async () => {
    const dir = await layout();
    try {
      const { root, outside } = dir;
      const link = join(dir.path, "fd");
      const flags = (await denoEntry()).denoPermissionFlags({
        workingDirectory: root,
        descriptorLink: link,
      });

      // Found in place when the host starts.
      await sh('ln -s "$1" "$2"', outside, link);
      const found = await host(flags, root, "start", link);
      assert.equal(found.started, false, JSON.stringify(found));
      assert.match(found.error!, new RegExp(`${link} leads to "${outside}", not to /proc/self/fd`));
      // This user's own entry: removing it is the remedy.
      assert.match(found.error!, /remove it, and the backend makes the link anew/);
      assert.equal(found.ready?.[0], "backend_failure");
      await fs.rm(link);

      // Put in place during the session: a directory whose entries 0 to 255 (the descriptor
      // numbers) lead outside, where a write through it would land.
      const fake = join(dir.path, "fake");
      await fs.mkdir(fake);
      for (let n = 0; n < 256; n++) await sh('ln -s "$1" "$2"', outside, join(fake, String(n)));
      const outsideBefore = await treeState(outside);
      const replaced = await host(flags, root, "replaced", link, fake);
      assert.equal(replaced.started, true, JSON.stringify(replaced));
      assert.deepEqual(replaced.before, { ok: true, code: null, output: "     1\tinside" });
      assert.equal(replaced.replacedBy, 0);
      assert.equal(replaced.write?.code, "backend_failure", JSON.stringify(replaced.write));
      assert.match(replaced.write!.output, new RegExp(`${link}.* was replaced or moved`));
      assert.equal(replaced.after?.code, "backend_failure", JSON.stringify(replaced.after));
      assert.match(replaced.after!.output, new RegExp(`${link} leads to "${fake}"`));
      assert.deepEqual(await treeState(outside), outsideBefore);
      assert.equal(await fs.readFile(join(root, "d/f.txt"), "utf8"), "inside\n");
      assert.deepEqual(await fs.readdir(join(root, "d")), ["f.txt"]);
    } finally {
      await dir.cleanup();
    }
  },
);

test(
  "路径安全 (deno): a descriptor link moved away and back between two calls is refused once, then verified anew",
  { skip: !underDeno && "Deno's backend goes through a link under the tests' flags" },
  async () => {
    const links = await tempDir();
    try {
      const link = join(links.path, "fd");
      const { createDenoFileSystem } = await denoEntry();
      const fixture: BackendFixture = {
        name: "deno",
        async make(files) {
          const dir = await tempDir();
          const root = join(dir.path, "repo");
          await fs.mkdir(root);
          for (const [path, text] of Object.entries(files)) {
            await fs.writeFile(join(root, path), text as string);
          }
          const filesystem = createDenoFileSystem({ descriptorLink: link }) as AsyncFileSystem;
          return { root, outside: dir.path, filesystem, cleanup: dir.cleanup };
        },
        readText: () => Promise.resolve(null),
        writeText: () => Promise.resolve(),
      };
      const ws = await workspace(fixture, { "a.txt": "alpha\n" });
      try {
        const first = await ws.call("read", { path: "a.txt" });
        assert.equal(first.ok, true, first.output);
        // The same link, the same inode, the same text: only its change time tells.
        await sh('mv "$1" "$1.away" && mv "$1.away" "$1"', link);
        const moved = await ws.call("read", { path: "a.txt" });
        assert.equal(moved.error?.code, "backend_failure", moved.output);
        assert.match(moved.output, /was replaced or moved/);
        const again = await ws.call("read", { path: "a.txt" });
        assert.equal(again.ok, true, again.output);
        assert.match(again.output, /alpha/);
      } finally {
        await ws.cleanup();
      }
    } finally {
      await links.cleanup();
    }
  },
);
