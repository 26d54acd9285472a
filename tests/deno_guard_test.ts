/**
 * Deno's permission flags as the outer guard: the tools work under the flags
 * `denoPermissionFlags` returns for a root, and a path the logical boundary
 * allows but the flags do not is `runtime_permission_denied`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { tempDir, underDeno } from "./helpers.ts";
import { denoEntry } from "./deno_host.ts";

interface DenoLike {
  execPath(): string;
  Command: new (
    program: string,
    options: { args: string[]; stdout: "piped"; stderr: "piped" },
  ) => { output(): Promise<{ code: number; stdout: Uint8Array; stderr: Uint8Array }> };
}

test(
  "runtime guard: the flags of denoPermissionFlags let the tools work and refuse the rest as runtime_permission_denied",
  {
    skip: !underDeno && "runs a Deno subprocess",
  },
  async () => {
    const dir = await tempDir();
    try {
      const root = `${dir.path}/root`;
      const second = `${dir.path}/second`;
      await mkdir(root);
      await mkdir(second);
      await writeFile(`${root}/a.txt`, "alpha\n");
      await writeFile(`${second}/secret.txt`, "secret\n");
      await mkdir(`${root}/many`);
      for (let i = 0; i < 100; i++) await writeFile(`${root}/many/n${i}.txt`, `needle ${i}\n`);
      // Deno.Command, not node:child_process: Deno's Node layer rewrites commands that start Deno.
      const { Deno: deno } = globalThis as unknown as { Deno: DenoLike };
      const agent = fileURLToPath(new URL("./fixtures/guard_agent.ts", import.meta.url));
      const flags = (await denoEntry()).denoPermissionFlags({ workingDirectory: root });
      const script = '"$0" run --quiet "${@:4}" "$2" "$1" "$3"';
      const child = await new deno.Command("bash", {
        args: ["-c", script, deno.execPath(), root, agent, second, ...flags],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const out = new TextDecoder().decode(child.stdout);
      assert.equal(child.code, 0, new TextDecoder().decode(child.stderr));
      const results = JSON.parse(out.trim().split("\n").pop()!) as Record<
        string,
        [boolean, string | null, string, number]
      >;
      for (const tool of ["read", "write", "edit", "grep", "glob", "list", "bash"]) {
        assert.equal(results[tool][0], true, `${tool}: ${results[tool][2]}`);
      }
      assert.match(results.bash[2], /ALPHA[\s\S]*bg/);
      assert.equal(results.grep_many[0], true, results.grep_many[2]);
      assert.equal(results.grep_many[3], 100);
      assert.deepEqual(results.second_root_read.slice(0, 2), [false, "runtime_permission_denied"]);
      assert.deepEqual(results.second_root_list.slice(0, 2), [false, "runtime_permission_denied"]);
      assert.deepEqual(results.outside_read.slice(0, 2), [false, "path_outside_root"]);
    } finally {
      await dir.cleanup();
    }
  },
);
