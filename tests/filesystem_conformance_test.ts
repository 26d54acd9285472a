/**
 * One conformance suite for every AsyncFileSystem backend: Deno, Node and
 * in-memory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, stat } from "node:fs/promises";
import { createSession, type MemoryFileSystem } from "../mod.ts";
import { backendFixtures, sh, workspace } from "./helpers.ts";

const fixtures = await backendFixtures();

for (const fixture of fixtures) {
  const isMemory = fixture.name === "memory";

  test(`backend ${fixture.name}: atomic write keeps the permission bits of an overwritten file`, async () => {
    const ws = await workspace(fixture, { "run.sh": "#!/bin/sh\necho old\n" });
    try {
      if (isMemory) {
        (ws.filesystem as MemoryFileSystem).writeFile(
          `${ws.root}/run.sh`,
          "#!/bin/sh\necho old\n",
          0o750,
        );
      } else await chmod(`${ws.root}/run.sh`, 0o750);
      const result = await ws.call("write", { path: "run.sh", content: "#!/bin/sh\necho new\n" });
      assert.equal(result.ok, true, result.output);
      const mode = isMemory
        ? (ws.filesystem as MemoryFileSystem).modeOf(`${ws.root}/run.sh`)
        : (await stat(`${ws.root}/run.sh`)).mode & 0o777;
      assert.equal(mode, 0o750);
      assert.equal(
        await fixture.readText(ws.filesystem, `${ws.root}/run.sh`),
        "#!/bin/sh\necho new\n",
      );
      // No temporary file is left behind.
      const listing = await ws.call("list", {});
      assert.doesNotMatch(listing.output, /\.tmp/);
    } finally {
      await ws.cleanup();
    }
  });

  test(`backend ${fixture.name}: a FIFO or other non-regular file is never opened for reading`, async () => {
    const ws = await workspace(fixture, { "a.txt": "a\n" });
    try {
      if (isMemory) (ws.filesystem as MemoryFileSystem).mkfifo(`${ws.root}/pipe`);
      else await sh('mkfifo "$1"', `${ws.root}/pipe`);
      // If the FIFO were opened, these calls would hang: no writer ever comes.
      const read = await ws.call("read", { path: "pipe" });
      assert.equal(read.error?.code, "not_a_regular_file");
      const write = await ws.call("write", { path: "pipe", content: "x" });
      assert.equal(write.error?.code, "not_a_regular_file");
      const edit = await ws.call("edit", { path: "pipe", old_text: "a", new_text: "b" });
      assert.equal(edit.error?.code, "not_a_regular_file");
      const grep = await ws.call("grep", { pattern: "a" });
      assert.equal(grep.ok, true);
      assert.match(grep.output, /a\.txt/);
      const list = await ws.call("list", {});
      assert.match(list.output, /^pipe\|$/m);
      const checked = await ws.session.resolvePath("pipe", "read", "must_exist");
      await assert.rejects(ws.filesystem.readFile(checked, { maxBytes: 100 }), {
        code: "not_a_regular_file",
      });
    } finally {
      await ws.cleanup();
    }
  });

  test(`backend ${fixture.name}: listing, metadata, streaming and removal behave alike`, async () => {
    const ws = await workspace(fixture, {
      "b.txt": "bee\n",
      "a.txt": "ay\n",
      "dir/inner.txt": "in\n",
      "ln": { symlink: "a.txt" },
    });
    try {
      const root = await ws.session.resolvePath(".", "read", "must_exist");
      const entries = (await ws.filesystem.readDir(root)).sort((
        x,
        y,
      ) => (x.name < y.name ? -1 : 1));
      assert.deepEqual(entries, [
        { name: "a.txt", kind: "file" },
        { name: "b.txt", kind: "file" },
        { name: "dir", kind: "directory" },
        { name: "ln", kind: "symlink" },
      ]);
      const link = await ws.session.resolvePath("ln", "read", "must_exist");
      assert.equal(link.display, "a.txt", "a checked link is its real target");
      const big = await ws.session.resolvePath("b.txt", "read", "must_exist");
      assert.equal((await ws.filesystem.stat(big)).size, 4);
      await assert.rejects(ws.filesystem.readFile(big, { maxBytes: 3 }), { code: "too_large" });
      const chunks: number[] = [];
      for await (const chunk of ws.filesystem.readChunks(big, { chunkSize: 3 })) {
        chunks.push(chunk.length);
      }
      assert.deepEqual(chunks, [3, 1]);
      const dir = await ws.session.resolvePath("dir", "read", "must_exist");
      await assert.rejects(ws.filesystem.readFile(dir, { maxBytes: 10 }), { code: "is_directory" });
      const gone = await ws.session.resolvePath("b.txt", "write", "must_exist");
      await ws.filesystem.remove(gone);
      await assert.rejects(ws.session.resolvePath("b.txt", "read", "must_exist"), {
        code: "not_found",
      });
      const fresh = await ws.session.resolvePath("made", "write", "may_create");
      await ws.filesystem.mkdir(fresh);
      await assert.rejects(ws.filesystem.mkdir(fresh), { code: "already_exists" });
    } finally {
      await ws.cleanup();
    }
  });

  test(`backend ${fixture.name}: a write, a removal and undo commit only over the version read (compare-and-swap)`, async () => {
    const ws = await workspace(fixture, { "a.txt": "one\n", "b.txt": "bee\n" });
    const bytes = (text: string) => new TextEncoder().encode(text);
    try {
      const a = await ws.session.resolvePath("a.txt", "write", "must_exist");
      await assert.rejects(
        ws.filesystem.writeFileAtomic(a, bytes("two\n"), { replaces: bytes("other\n") }),
        { code: "stale_edit" },
      );
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/a.txt`), "one\n");
      await assert.rejects(
        ws.filesystem.writeFileAtomic(a, bytes("two\n"), { replaces: null }),
        { code: "stale_edit" },
      );
      await ws.filesystem.writeFileAtomic(a, bytes("two\n"), { replaces: bytes("one\n") });
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/a.txt`), "two\n");
      const b = await ws.session.resolvePath("b.txt", "write", "must_exist");
      await assert.rejects(ws.filesystem.remove(b, { replaces: bytes("bee?\n") }), {
        code: "stale_edit",
      });
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/b.txt`), "bee\n");
      await ws.filesystem.remove(b, { replaces: bytes("bee\n") });
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/b.txt`), null);
      const c = await ws.session.resolvePath("c.txt", "write", "may_create");
      await assert.rejects(
        ws.filesystem.writeFileAtomic(c, bytes("see\n"), { replaces: bytes("") }),
        { code: "stale_edit" },
      );
      await ws.filesystem.writeFileAtomic(c, bytes("see\n"), { replaces: null });
      await assert.rejects(
        ws.filesystem.writeFileAtomic(c, bytes("sea\n"), { replaces: null }),
        { code: "stale_edit" },
      );
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/c.txt`), "see\n");
      // A file changed behind the edit tool's back is kept: the edit is stale.
      const root = await ws.session.resolvePath(".", "read", "must_exist");
      const names = (await ws.filesystem.readDir(root)).map((e) => e.name).sort();
      assert.deepEqual(names, ["a.txt", "c.txt"], "no temporary or moved-aside file is left");
    } finally {
      await ws.cleanup();
    }
  });

  test(
    `backend ${fixture.name}: a path swapped for a link after its check is refused, and nothing outside is read or written`,
    {
      skip: isMemory && "the in-memory backend has no other process",
    },
    async () => {
      const ws = await workspace(fixture, {
        "d/f.txt": "inside\n",
        "d/sub/g.txt": "inside g\n",
        "t.txt": "top\n",
      });
      const outsideTree = () =>
        sh('cd "$1" && find . -printf "%p %y %s %T@\\n" | sort && cat f.txt sub/g.txt', ws.outside);
      try {
        await sh(
          'mkdir "$1/sub" && echo OUTSIDE > "$1/f.txt" && echo OUTSIDE > "$1/sub/g.txt"',
          ws.outside,
        );
        const checked = {
          file: await ws.session.resolvePath("d/f.txt", "read", "must_exist"),
          directory: await ws.session.resolvePath("d", "read", "must_exist"),
          sub: await ws.session.resolvePath("d/sub", "read", "must_exist"),
          created: await ws.session.resolvePath("d/new.txt", "write", "may_create"),
          replaced: await ws.session.resolvePath("d/f.txt", "write", "must_exist"),
          made: await ws.session.resolvePath("d/made", "write", "may_create"),
          top: await ws.session.resolvePath("t.txt", "write", "must_exist"),
        };
        const before = await outsideTree();
        // Another process swaps the directory for a link to outside, and the file for one too.
        await sh(
          'mv "$1/d" "$1/d.moved" && ln -s "$2" "$1/d" && mv "$1/t.txt" "$1/t.moved" && ' +
            'ln -s "$2/f.txt" "$1/t.txt"',
          ws.root,
          ws.outside,
        );
        const fs = ws.filesystem;
        const data = new TextEncoder().encode("written\n");
        const attempts: [string, () => Promise<unknown>][] = [
          ["readFile", () => fs.readFile(checked.file, { maxBytes: 100 })],
          [
            "readChunks",
            async () => {
              for await (const _ of fs.readChunks(checked.file)) { /* drained */ }
            },
          ],
          ["readDir", () => fs.readDir(checked.directory)],
          ["readDir sub", () => fs.readDir(checked.sub)],
          ["stat", () => fs.stat(checked.file)],
          ["create", () => fs.writeFileAtomic(checked.created, data, { replaces: null })],
          ["replace", () => fs.writeFileAtomic(checked.replaced, data)],
          ["mkdir", () => fs.mkdir(checked.made)],
          ["remove", () => fs.remove(checked.replaced)],
          ["read top", () => fs.readFile(checked.top, { maxBytes: 100 })],
          ["replace top", () => fs.writeFileAtomic(checked.top, data)],
        ];
        for (const [what, attempt] of attempts) {
          const outcome = await attempt().then((value) => ({ value }), (error) => ({ error }));
          assert.ok(
            "error" in outcome,
            `${what} went through the link: ${JSON.stringify(outcome)}`,
          );
          assert.doesNotMatch(String((outcome.error as Error).message), /OUTSIDE/);
        }
        assert.equal(await outsideTree(), before, "nothing outside was created or changed");
        const searched = await ws.call("grep", { pattern: "OUTSIDE|inside" });
        assert.doesNotMatch(JSON.stringify(searched), /OUTSIDE/);
      } finally {
        await ws.cleanup();
      }
    },
  );

  test(`backend ${fixture.name}: a session refuses a working directory that is not a directory`, async () => {
    const made = await fixture.make({ "file.txt": "x" });
    try {
      await assert.rejects(
        createSession({ workingDirectory: `${made.root}/file.txt`, filesystem: made.filesystem }),
        /not a directory/,
      );
      // A relative path is taken from the current directory, which holds no relative/path.
      await assert.rejects(
        createSession({ workingDirectory: "relative/path", filesystem: made.filesystem }),
        /workingDirectory relative\/path \(\/.*\/relative\/path\) cannot be resolved/,
      );
    } finally {
      await made.cleanup();
    }
  });
}
