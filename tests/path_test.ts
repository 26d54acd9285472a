/**
 * The spec's §11 "路径安全" (path safety) on every file-system backend, and
 * every bad-path case with its error code.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type AsyncFileSystem, CheckedPath, createSession, ToolError } from "../mod.ts";
import { existingPrefix, isWithin, resolvePath } from "../src/path/mod.ts";
import { unwrapCheckedPath } from "../src/path/checked_path.ts";
import { posix } from "node:path";
import { backendFixtures, type Layout, symlinkOnDisk, workspace } from "./helpers.ts";

const fixtures = await backendFixtures();

const LAYOUT = {
  "src/a.txt": "alpha\n",
  "src/deep/b.txt": "beta\n",
  ".git/config": "[core]\n",
  "link-out": { symlink: "../outside/secret.txt" },
  "dir-out": { symlink: "../outside" },
  "chain1": { symlink: "chain2" },
  "chain2": { symlink: "../outside/secret.txt" },
  "link-in": { symlink: "src/a.txt" },
  "dangling": { symlink: "../outside/new.txt" },
  "srclink": { symlink: "src" },
};

for (const fixture of fixtures) {
  test(`路径安全 (${fixture.name}): a symlink pointing outside the workspace is refused`, async () => {
    const ws = await workspace(fixture, LAYOUT);
    try {
      for (const path of ["link-out", "chain1", "dir-out/secret.txt", "dir-out"]) {
        const read = await ws.call("read", { path });
        assert.equal(read.error?.code, "path_outside_root", path);
        assert.doesNotMatch(read.output, /^secret$/m);
      }
      const write = await ws.call("write", { path: "link-out", content: "pwned" });
      assert.equal(write.error?.code, "path_outside_root");
      const editThroughDir = await ws.call("edit", {
        path: "dir-out/secret.txt",
        old_text: "secret",
        new_text: "x",
      });
      assert.equal(editThroughDir.error?.code, "path_outside_root");
      assert.equal(await fixture.readText(ws.filesystem, `${ws.outside}/secret.txt`), "secret\n");
      // `..` after a symlinked directory: the kernel follows the link first, Deno's permission layer
      // normalizes lexically first. Either way nothing outside the root is reached.
      for (
        const path of [
          "dir-out/../outside/secret.txt",
          "srclink/../../outside/secret.txt",
          "dir-out/../x",
        ]
      ) {
        const up = await ws.call("read", { path });
        assert.ok(!up.ok, path);
        assert.ok(
          ["path_outside_root", "not_found"].includes(up.error.code),
          `${path}: ${up.output}`,
        );
        assert.doesNotMatch(up.output, /^\s*1\tsecret$/m);
      }
      const parent = await ws.call("list", { path: "dir-out/.." });
      if (parent.ok) {
        assert.match(parent.output, /^src\/$/m, "lexically, dir-out/.. is the root itself");
      } else assert.equal(parent.error?.code, "path_outside_root");
      // A link that stays inside is followed; writing through it changes the target and keeps the link.
      assert.equal((await ws.call("read", { path: "link-in" })).ok, true);
      const through = await ws.call("write", { path: "link-in", content: "changed\n" });
      assert.equal(through.ok, true, through.output);
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/src/a.txt`), "changed\n");
      assert.equal((await ws.filesystem.lstat(`${ws.root}/link-in`)).kind, "symlink");
    } finally {
      await ws.cleanup();
    }
  });

  test(`路径安全 (${fixture.name}): a new file whose parent is outside the root is refused`, async () => {
    const ws = await workspace(fixture, LAYOUT);
    try {
      const cases: [string, string][] = [
        ["dir-out/new.txt", "path_outside_root"],
        ["dir-out/sub/new.txt", "path_outside_root"],
        ["../outside/new.txt", "path_outside_root"],
        [`${ws.outside}/new.txt`, "path_outside_root"],
        ["dangling", "invalid_path"],
        ["missing/../../outside/new.txt", "path_outside_root"],
      ];
      for (const [path, code] of cases) {
        const result = await ws.call("write", { path, content: "x" });
        assert.equal(result.error?.code, code, `${path}: ${result.output}`);
      }
      assert.equal(await fixture.readText(ws.filesystem, `${ws.outside}/new.txt`), null);
      const edit = await ws.call("edit", {
        path: "dir-out/created.txt",
        old_text: "",
        new_text: "x",
      });
      assert.equal(edit.error?.code, "path_outside_root");
      // Inside, missing parents are created one level at a time.
      const nested = await ws.call("write", { path: "n1/n2/n3/file.txt", content: "deep\n" });
      assert.equal(nested.ok, true, nested.output);
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/n1/n2/n3/file.txt`), "deep\n");
    } finally {
      await ws.cleanup();
    }
  });

  test(`路径安全 (${fixture.name}): every bad path gets a clear error code`, async () => {
    const ws = await workspace(fixture, LAYOUT);
    try {
      const cases: [unknown, string][] = [
        ["", "invalid_path"],
        ["a\0b", "invalid_path"],
        ["x".repeat(5000), "invalid_path"],
        [`${"y".repeat(300)}/f.txt`, "invalid_path"],
        ["/etc/passwd", "path_outside_root"],
        ["../outside/secret.txt", "path_outside_root"],
        ["src/../../outside/secret.txt", "path_outside_root"],
        [`${ws.root}-evil/x`, "path_outside_root"],
        ["no/such/file.txt", "not_found"],
        ["src", "is_directory"],
      ];
      for (const [path, code] of cases) {
        const result = await ws.call("read", { path });
        assert.equal(result.error?.code, code, `${String(path).slice(0, 40)}: ${result.output}`);
        assert.ok(result.output.length > 20, "the message says what is wrong");
      }
      const protectedWrite = await ws.call("write", {
        path: ".git/hooks/pre-commit",
        content: "#!/bin/sh\n",
      });
      assert.equal(protectedWrite.error?.code, "path_protected");
      const protectedEdit = await ws.call("edit", {
        path: ".git/config",
        old_text: "[core]",
        new_text: "[x]",
      });
      assert.equal(protectedEdit.error?.code, "path_protected");
      // Reading .git is allowed; it is only protected from writes.
      assert.equal((await ws.call("read", { path: ".git/config" })).ok, true);
    } finally {
      await ws.cleanup();
    }
  });

  test(`路径安全 (${fixture.name}): root containment compares whole segments`, async () => {
    const made = await fixture.make({ "a.txt": "a\n" });
    try {
      const session = await createSession({
        workingDirectory: made.root,
        filesystem: made.filesystem,
      });
      // A sibling whose name extends the root's is not inside it.
      await assert.rejects(session.resolvePath(`${made.root}-evil/x.txt`, "write", "may_create"), {
        code: "path_outside_root",
      });
      const inside = await session.resolvePath(`${made.root}/a.txt`, "read", "must_exist");
      assert.equal(inside.display, "a.txt");
    } finally {
      await made.cleanup();
    }
  });

  test(`路径安全 (${fixture.name}): the skill root is readable and refuses writes`, async () => {
    const made = await fixture.make({ "a.txt": "a\n" });
    try {
      await fixture.writeText(made.filesystem, `${made.outside}/skills/demo/SKILL.md`, "# Demo\n")
        .catch(async () => {
          const { mkdir, writeFile } = await import("node:fs/promises");
          await mkdir(`${made.outside}/skills/demo`, { recursive: true });
          await writeFile(`${made.outside}/skills/demo/SKILL.md`, "# Demo\n");
        });
      const ws = await workspace({ ...fixture, make: () => Promise.resolve(made) }, {}, {
        skillRoot: `${made.outside}/skills`,
      });
      const skill = `${made.outside}/skills/demo/SKILL.md`;
      const read = await ws.call("read", { path: skill });
      assert.equal(read.ok, true, read.output);
      assert.match(read.output, /# Demo/);
      assert.equal((await ws.call("list", { path: `${made.outside}/skills` })).ok, true);
      assert.equal(
        (await ws.call("grep", { pattern: "Demo", path: `${made.outside}/skills` })).ok,
        true,
      );
      assert.equal(
        (await ws.call("glob", { pattern: "**/*.md", path: `${made.outside}/skills` })).ok,
        true,
      );
      assert.equal(
        (await ws.call("write", { path: skill, content: "x" })).error?.code,
        "path_protected",
      );
      assert.equal(
        (await ws.call("edit", { path: skill, old_text: "Demo", new_text: "X" })).error?.code,
        "path_protected",
      );
      // Outside both roots stays refused.
      assert.equal(
        (await ws.call("read", { path: `${made.outside}/secret.txt` })).error?.code,
        "path_outside_root",
      );
    } finally {
      await made.cleanup();
    }
  });

  test(`路径安全 (${fixture.name}): the skill root refuses writes also where the working directory holds it, or is inside it`, async () => {
    const made = await fixture.make({ "skills/demo/SKILL.md": "# Demo\n", "notes.txt": "n\n" });
    try {
      const skills = `${made.root}/skills`;
      // The skill root inside the working directory (a session started in the home directory).
      const holding = await workspace({ ...fixture, make: () => Promise.resolve(made) }, {}, {
        mode: "acceptEdits",
        skillRoot: skills,
      });
      for (const path of ["skills/demo/SKILL.md", `${skills}/demo/SKILL.md`, "skills/new.md"]) {
        const write = await holding.call("write", { path, content: "pwned\n" });
        assert.equal(write.error?.code, "path_protected", `${path}: ${write.output}`);
        const edit = await holding.call("edit", { path, old_text: "Demo", new_text: "X" });
        assert.ok(!edit.ok, path);
        assert.ok(["path_protected", "not_found"].includes(edit.error.code), edit.output);
      }
      assert.equal(await fixture.readText(made.filesystem, `${skills}/demo/SKILL.md`), "# Demo\n");
      assert.equal(await fixture.readText(made.filesystem, `${skills}/new.md`), null);
      // Reading there, and writing beside it, are as before.
      assert.equal((await holding.call("read", { path: "skills/demo/SKILL.md" })).ok, true);
      assert.equal((await holding.call("write", { path: "notes.txt", content: "w\n" })).ok, true);

      // The working directory is the skill root itself.
      const inside = await createSession({
        workingDirectory: skills,
        filesystem: made.filesystem,
        skillRoot: skills,
      });
      await assert.rejects(inside.resolvePath("demo/SKILL.md", "write", "must_exist"), {
        code: "path_protected",
      });
      await assert.rejects(inside.resolvePath("other.md", "write", "may_create"), {
        code: "path_protected",
      });
      assert.equal((await inside.resolvePath("demo/SKILL.md", "read", "must_exist")).existed, true);
    } finally {
      await made.cleanup();
    }
  });

  test(`路径安全 (${fixture.name}): a working directory inside .git/ refuses writes as .git/ does`, async () => {
    const made = await fixture.make({ ".git/hooks/README": "hooks\n", "a.txt": "a\n" });
    try {
      const session = await createSession({
        workingDirectory: `${made.root}/.git`,
        filesystem: made.filesystem,
      });
      for (const path of ["hooks/pre-commit", "config", "hooks/README"]) {
        await assert.rejects(session.resolvePath(path, "write", "may_create"), {
          code: "path_protected",
        }, path);
      }
      assert.equal((await session.resolvePath("hooks/README", "read", "must_exist")).existed, true);
    } finally {
      await made.cleanup();
    }
  });
}

test("路径安全: tools cannot bypass CheckedPath to reach a raw path", async () => {
  const [fixture] = fixtures;
  const ws = await workspace(fixture, LAYOUT);
  try {
    // A CheckedPath cannot be made from a string.
    assert.throws(
      () => new CheckedPath("/etc/passwd", "read", "working_directory", true),
      TypeError,
    );
    // Its real path is not among its fields, its JSON or its string form.
    const checked = await ws.session.resolvePath("src/a.txt", "read", "must_exist");
    const shown = JSON.stringify(checked) + String(checked) + Object.values(checked).join(" ");
    assert.doesNotMatch(shown, new RegExp(ws.root.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
    assert.ok(Object.isFrozen(checked));
    // Backends refuse anything that is not a CheckedPath, including a look-alike.
    const fake = Object.assign(Object.create(CheckedPath.prototype), { display: "/etc/passwd" });
    for (const attempt of ["/etc/passwd", fake, { ...checked }]) {
      await assert.rejects(ws.filesystem.readFile(attempt as CheckedPath, { maxBytes: 10 }), {
        code: "invalid_path",
      });
      await assert.rejects(
        ws.filesystem.writeFileAtomic(attempt as CheckedPath, new Uint8Array()),
        {
          code: "invalid_path",
        },
      );
    }
  } finally {
    await ws.cleanup();
  }
});

test("路径安全: Allow cannot bypass the path boundary", async () => {
  const [fixture] = fixtures;
  const ws = await workspace(fixture, LAYOUT, { mode: "acceptEdits" });
  try {
    let asked = 0;
    // The person approves everything; the boundary still holds at execution.
    const approve = () => {
      asked++;
      return Promise.resolve(true);
    };
    for (const path of ["../outside/secret.txt", "link-out", "dir-out/x.txt", "/etc/passwd"]) {
      const result = await ws.toolset.call({
        name: "write",
        input: { path, content: "pwned" },
        callId: "c",
        approve,
      });
      assert.equal(result.ok, false, path);
      assert.equal(result.error?.code, "path_outside_root", path);
    }
    // Even a call prepared while the path was inside is re-resolved at execution.
    const prepared = await ws.toolset.prepare("write", { path: "swap/target.txt", content: "x" });
    assert.equal(prepared.ok, true);
    const { rm } = await import("node:fs/promises");
    if (fixture.name !== "memory") {
      await rm(`${ws.root}/swap`, { recursive: true, force: true });
      await symlinkOnDisk(ws.outside, `${ws.root}/swap`);
    } else {
      (ws.filesystem as ReturnType<typeof import("../mod.ts").createMemoryFileSystem>).symlink(
        ws.outside,
        `${ws.root}/swap`,
      );
    }
    const executed = await ws.toolset.execute(prepared, { callId: "c2" });
    assert.equal(executed.error?.code, "path_outside_root");
    assert.equal(await fixture.readText(ws.filesystem, `${ws.outside}/target.txt`), null);
    assert.equal(
      asked,
      0,
      "acceptEdits allows writes without asking; the boundary refused them anyway",
    );
  } finally {
    await ws.cleanup();
  }
});

/**
 * The longest existing prefix as found one segment at a time, from the
 * longest down: the search before it took doubling steps, kept here as the
 * reference the faster search must agree with.
 */
async function prefixOneByOne(
  filesystem: AsyncFileSystem,
  joined: string,
  input: string,
): Promise<{ real: string; missing: string[] }> {
  const missingCode = (error: unknown) => error instanceof ToolError && error.code === "not_found";
  try {
    return { real: await filesystem.realPath(joined), missing: [] };
  } catch (error) {
    if (!missingCode(error)) throw error;
  }
  const segments = joined.split("/").filter((s) => s !== "" && s !== ".");
  for (let keep = segments.length - 1; keep >= 0; keep--) {
    let real: string;
    try {
      real = await filesystem.realPath("/" + segments.slice(0, keep).join("/"));
    } catch (error) {
      if (missingCode(error)) continue;
      throw error;
    }
    const missing = segments.slice(keep);
    if (missing.includes("..")) {
      throw new ToolError(
        "invalid_path",
        `${input} climbs with '..' through a directory that does not exist.`,
      );
    }
    if (await filesystem.lstat(posix.join(real, missing[0])).catch(() => null)) {
      throw new ToolError(
        "invalid_path",
        `${input} goes through a symbolic link whose target does not exist; give the real path.`,
      );
    }
    return { real, missing };
  }
  throw new ToolError("not_found", `${input} does not exist.`);
}

/** What a resolution gave: its result, or its error's code and message. */
async function outcome(run: () => Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify(await run());
  } catch (error) {
    return `${(error as ToolError).code}: ${(error as Error).message}`;
  }
}

/** Numbers in [0, n) from a fixed seed. */
function seeded(seed: number): (n: number) => number {
  return (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return (seed >>> 8) % n;
  };
}

for (const fixture of fixtures) {
  test(`路径安全 (${fixture.name}): paths through links, '..' and missing parts, hundreds of segments deep, find the same existing prefix as a search one segment at a time`, async () => {
    const random = seeded(fixture.name.length * 7919 + 17);
    const pick = <T>(items: readonly T[]): T => items[random(items.length)];
    const names = ["a", "b", "l", "m", "up", "out"];
    const targets = [
      "..",
      "../..",
      "../../..",
      "../outside",
      "../../outside",
      "a",
      "b/..",
      "nope",
      "self",
      "d/e",
      "../d/e/f",
    ];
    let compared = 0;
    for (let round = 0; round < 12; round++) {
      const layout: Layout = { "d/e/f/g/h/x.txt": "x\n", "d2": { dir: true } };
      const dirs = ["d", "d/e", "d/e/f", "d/e/f/g", "d/e/f/g/h", "d2", ""];
      for (let i = 0; i < 14; i++) {
        const parent = pick(dirs);
        const name = pick(names) + (random(2) === 0 ? "" : String(i));
        const path = parent === "" ? name : `${parent}/${name}`;
        if (path in layout) continue;
        const kind = random(4);
        if (kind === 0) {
          layout[path] = { dir: true };
          dirs.push(path);
        } else if (kind === 1) layout[path] = "f\n";
        else {
          const target = pick(targets);
          layout[path] = { symlink: target === "self" ? name : target };
        }
      }
      const made = await fixture.make(layout);
      try {
        const { root, filesystem } = made;
        const roots = { workingDirectory: root, skillRoot: null, protectedNames: [] };
        const segments = [
          ...names,
          ...dirs.filter((d) => d !== "").map((d) => d.split("/").pop()!),
        ];
        for (let k = 0; k < 40; k++) {
          const parts: string[] = [];
          const deep = random(5) === 0;
          const length = deep ? 100 + random(300) : 1 + random(10);
          for (let i = 0; i < length; i++) {
            const r = random(10);
            parts.push(r < 6 ? pick(segments) : r < 8 ? ".." : r < 9 ? "." : "missing");
          }
          const input = deep && random(2) === 0
            ? `d/e/f/g/h/${"d/e/f/g/h/".repeat(length % 40)}${parts.join("/")}`
            : parts.join("/");
          if (input.length > 4096) continue;
          const joined = `${root}/${input}`;
          assert.equal(
            await outcome(() => existingPrefix(filesystem, joined, input)),
            await outcome(() => prefixOneByOne(filesystem, joined, input)),
            input,
          );
          const resolved = await resolvePath(filesystem, roots, input, "write", "may_create")
            .catch(() => null);
          if (resolved !== null) assert.ok(isWithin(root, unwrapCheckedPath(resolved)), input);
          compared++;
        }
      } finally {
        await made.cleanup();
      }
    }
    assert.ok(compared > 400, `${compared} paths compared`);
  });
}
