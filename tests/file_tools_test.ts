/**
 * The spec's §11 "工具语义" lines for read, list and edit, and "结果与
 * Artifact", on every file-system backend.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  type FileChangeArtifact,
  finalizeToolset,
  type ReadOutput,
  type ToolResult,
  undoFileChanges,
} from "../mod.ts";
import { realpath, rename } from "node:fs/promises";
import { MAX_TEXT_BYTES } from "../src/artifacts/file_change.ts";
import { type BackendFixture, backendFixtures, memorySession, workspace } from "./helpers.ts";

const fixtures = await backendFixtures();
const lines = (n: number, prefix = "line") =>
  Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join("\n") + "\n";

for (const fixture of fixtures) {
  const name = fixture.name;

  test(`工具语义 (${name}): edit fails when old_text is missing, repeated, or equal to new_text`, async () => {
    const ws = await workspace(fixture, {
      "a.ts": "function f() {\n  return 1;\n}\nconst x = 1;\nconst x = 1;\n",
    });
    try {
      const missing = await ws.call("edit", {
        path: "a.ts",
        old_text: "return 2;",
        new_text: "return 3;",
      });
      assert.equal(missing.error?.code, "old_text_not_found");
      const nearMiss = await ws.call("edit", {
        path: "a.ts",
        old_text: "function f() {\n    return 1;",
        new_text: "x",
      });
      assert.equal(nearMiss.error?.code, "old_text_not_found");
      assert.match(nearMiss.output, /Lines 1–2 match it except for whitespace/);
      assert.ok(
        nearMiss.output.endsWith("\n```\nfunction f() {\n  return 1;\n```"),
        nearMiss.output,
      );
      const repeated = await ws.call("edit", {
        path: "a.ts",
        old_text: "const x = 1;",
        new_text: "const x = 2;",
      });
      assert.equal(repeated.error?.code, "old_text_not_unique");
      assert.match(repeated.output, /occurs 2 times in a\.ts/);
      assert.match(repeated.output, /At line 4:\n.*\n {5}4\tconst x = 1;\n/);
      assert.match(repeated.output, /At line 5:\n.*\n {5}5\tconst x = 1;\n?/);
      const same = await ws.call("edit", {
        path: "a.ts",
        old_text: "return 1;",
        new_text: "return 1;",
      });
      assert.equal(same.error?.code, "no_change");
      const createOverExisting = await ws.call("edit", {
        path: "a.ts",
        old_text: "",
        new_text: "x",
      });
      assert.equal(createOverExisting.error?.code, "already_exists");
      // Nothing was written by any failure.
      assert.equal(
        await fixture.readText(ws.filesystem, `${ws.root}/a.ts`),
        "function f() {\n  return 1;\n}\nconst x = 1;\nconst x = 1;\n",
      );
      const ok = await ws.call("edit", {
        path: "a.ts",
        old_text: "return 1;",
        new_text: "return 2;",
      });
      assert.equal(ok.ok, true, ok.output);
      assert.match(ok.output, /line 2/);
    } finally {
      await ws.cleanup();
    }
  });

  test(`工具语义 (${name}): edit keeps CRLF line endings and creates new files with empty old_text`, async () => {
    const ws = await workspace(fixture, { "win.txt": "one\r\ntwo\r\nthree\r\n" });
    try {
      const edit = await ws.call("edit", {
        path: "win.txt",
        old_text: "one\ntwo",
        new_text: "uno\ndos",
      });
      assert.equal(edit.ok, true, edit.output);
      assert.equal(
        await fixture.readText(ws.filesystem, `${ws.root}/win.txt`),
        "uno\r\ndos\r\nthree\r\n",
      );
      const created = await ws.call("edit", {
        path: "new/file.txt",
        old_text: "",
        new_text: "fresh\n",
      });
      assert.equal(created.ok, true, created.output);
      assert.equal((created.artifacts[0] as FileChangeArtifact).change, "created");
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/new/file.txt`), "fresh\n");
    } finally {
      await ws.cleanup();
    }
  });

  test(`工具语义 (${name}): a concurrent change makes edit return stale and nothing is overwritten`, async () => {
    const ws = await workspace(fixture, { "shared.txt": "alpha\nbeta\n" });
    try {
      // A real writer changes the file between edit's first read and its commit.
      const original = ws.filesystem.readFile.bind(ws.filesystem);
      let reads = 0;
      ws.filesystem.readFile = async (path, options) => {
        const bytes = await original(path, options);
        if (path.display === "shared.txt" && ++reads === 1) {
          await fixture.writeText(
            ws.filesystem,
            `${ws.root}/shared.txt`,
            "alpha\nBETA FROM SOMEONE ELSE\n",
          );
        }
        return bytes;
      };
      const result = await ws.call("edit", {
        path: "shared.txt",
        old_text: "alpha",
        new_text: "ALPHA",
      });
      assert.equal(result.error?.code, "stale_edit", result.output);
      assert.equal(result.artifacts.length, 0);
      assert.equal(
        await fixture.readText(ws.filesystem, `${ws.root}/shared.txt`),
        "alpha\nBETA FROM SOMEONE ELSE\n",
      );
    } finally {
      await ws.cleanup();
    }
  });

  test(
    `工具语义 (${name}): an edit that arrives while another commits waits for it, and does not find the file missing`,
    {
      skip: name === "memory" && "the file is moved aside on disk, as the disk backends commit",
    },
    async () => {
      // The first edit's commit moves the file aside (as the disk backends' compare-and-swap does
      // for an instant); the second edit looks the path up in that moment, then the commit goes on.
      let aside: { file: string; moved: string } | null = null;
      let lookedUp = () => {};
      const secondLooked = new Promise<void>((resolve) => (lookedUp = resolve));
      let second: Promise<ToolResult> | null = null;
      let startSecond = (): Promise<ToolResult> => Promise.reject(new Error("not started"));
      const holding: BackendFixture = {
        ...fixture,
        async make(layout) {
          const made = await fixture.make(layout);
          const inner = made.filesystem;
          const file = `${await realpath(made.root)}/many.txt`;
          const filesystem = new Proxy(inner, {
            get(target, key) {
              const value = Reflect.get(target, key);
              if (typeof value !== "function") return value;
              if (key === "writeFileAtomic") {
                return async (...args: unknown[]) => {
                  if (second === null) {
                    aside = { file, moved: `${file}.aside` };
                    await rename(aside.file, aside.moved);
                    second = startSecond();
                    await secondLooked;
                    await rename(aside.moved, aside.file);
                    aside = null;
                  }
                  return await value.apply(target, args);
                };
              }
              // The resolver's last look at a missing name is its lstat: once that has answered,
              // the second edit has seen the moment (and, unlocked, found no file).
              if (key === "lstat") {
                return async (...args: unknown[]) => {
                  const looking = aside !== null && args[0] === aside.file;
                  try {
                    return await value.apply(target, args);
                  } finally {
                    if (looking) lookedUp();
                  }
                };
              }
              return value.bind(target);
            },
          });
          return { ...made, filesystem };
        },
      };
      const ws = await workspace(holding, { "many.txt": lines(3, "item") });
      try {
        const edit = (n: number) =>
          ws.call("edit", { path: "many.txt", old_text: `item ${n}\n`, new_text: `done ${n}\n` });
        startSecond = () => edit(2);
        const first = await edit(1);
        assert.equal(first.ok, true, first.output);
        const late = await second!;
        assert.equal(late.ok, true, late.output);
        assert.equal(
          await fixture.readText(ws.filesystem, `${ws.root}/many.txt`),
          "done 1\ndone 2\nitem 3\n",
        );
      } finally {
        await ws.cleanup();
      }
    },
  );

  test(`工具语义 (${name}): 50 concurrent edits of distinct lines of one file all land`, async () => {
    const ws = await workspace(fixture, { "many.txt": lines(50, "item") });
    try {
      const results = await Promise.all(
        Array.from(
          { length: 50 },
          (_, i) =>
            ws.call("edit", {
              path: "many.txt",
              old_text: `item ${i + 1}\n`,
              new_text: `done ${i + 1}\n`,
            }),
        ),
      );
      for (const result of results) assert.equal(result.ok, true, result.output);
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/many.txt`), lines(50, "done"));
    } finally {
      await ws.cleanup();
    }
  });

  test(`工具语义 (${name}): read pages over stable lines and says where to continue`, async () => {
    const ws = await workspace(fixture, { "long.txt": lines(25) });
    try {
      const page = await ws.call("read", { path: "long.txt", offset: 10, limit: 5 });
      assert.equal(page.ok, true);
      assert.match(page.output, /^\s+11\tline 11$/m);
      assert.match(page.output, /^\s+15\tline 15$/m);
      assert.doesNotMatch(page.output, /line 16/);
      assert.match(page.output, /continue with offset=15/);
      const data = page.data as ReadOutput;
      assert.equal(data.nextOffset, 15);
      // Paging through the whole file gives every line once, in order.
      const seen: string[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const r = (await ws.call("read", { path: "long.txt", offset, limit: 7 }))
          .data as ReadOutput;
        seen.push(...r.lines);
        offset = r.nextOffset;
      }
      assert.deepEqual(seen, lines(25).trimEnd().split("\n"));
      const past = await ws.call("read", { path: "long.txt", offset: 99 });
      assert.match(past.output, /past the end .* 25 lines/);
    } finally {
      await ws.cleanup();
    }
  });

  test(`工具语义 (${name}): read reports binary, invalid UTF-8 and directories clearly`, async () => {
    const ws = await workspace(fixture, { "dir/x.txt": "x" });
    try {
      const put = async (path: string, bytes: Uint8Array) => {
        const checked = await ws.session.resolvePath(path, "write", "may_create");
        await ws.filesystem.writeFileAtomic(checked, bytes);
      };
      await put("bin.dat", new Uint8Array([0x50, 0x4b, 0x00, 0x01]));
      await put("latin1.txt", new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]));
      await put("empty.txt", new Uint8Array());
      assert.equal((await ws.call("read", { path: "bin.dat" })).error?.code, "binary_file");
      assert.equal((await ws.call("read", { path: "latin1.txt" })).error?.code, "invalid_utf8");
      assert.equal((await ws.call("read", { path: "dir" })).error?.code, "is_directory");
      assert.match((await ws.call("read", { path: "empty.txt" })).output, /empty/);
      assert.equal(
        (await ws.call("write", { path: "bin.dat", content: "x" })).error?.code,
        "binary_file",
      );
      assert.equal(
        (await ws.call("edit", { path: "latin1.txt", old_text: "caf", new_text: "x" })).error?.code,
        "invalid_utf8",
      );
    } finally {
      await ws.cleanup();
    }
  });

  test(`工具语义 (${name}): read and list page over a stable sort`, async () => {
    const names = ["b", "a", "C", "_x", "a0", "dir", "z.txt", "ä"];
    const layout = Object.fromEntries(names.map((n) => [n === "dir" ? "dir/inner" : n, "x"]));
    const ws = await workspace(fixture, layout);
    try {
      const full = await ws.call("list", {});
      const expected = ["C", "_x", "a", "a0", "b", "dir/", "z.txt", "ä"];
      assert.deepEqual(full.output.split("\n").slice(1), expected);
      const pages: string[] = [];
      for (let offset = 0; offset < 8; offset += 3) {
        const page = await ws.call("list", { offset, limit: 3 });
        pages.push(...page.output.split("\n").slice(1).filter((l) => !l.startsWith("[")));
      }
      assert.deepEqual(pages, expected);
      assert.equal((await ws.call("list", { limit: 2001 })).error?.code, "invalid_input");
      assert.match(
        (await ws.call("list", { offset: 50 })).output,
        /offset 50 is past the last entry of \. \(8 entries\)/,
      );
      assert.equal((await ws.call("list", { path: "z.txt" })).error?.code, "not_a_directory");
    } finally {
      await ws.cleanup();
    }
  });

  test(`结果与 Artifact (${name}): artifacts never appear in the model's text`, async () => {
    const ws = await workspace(fixture, { "a.txt": lines(10) });
    try {
      const result = await ws.call("edit", {
        path: "a.txt",
        old_text: "line 5\n",
        new_text: "LINE FIVE\n",
      });
      const artifact = result.artifacts[0] as FileChangeArtifact;
      assert.equal(artifact.kind, "file_change");
      for (
        const secret of [artifact.changeId, artifact.sha256After, "@@", "-line 5", "+LINE FIVE"]
      ) {
        assert.ok(!result.output.includes(secret), `output leaks ${secret}`);
      }
      assert.ok(!JSON.stringify(result.data).includes(artifact.changeId));
    } finally {
      await ws.cleanup();
    }
  });

  test(`结果与 Artifact (${name}): the diff is still exact after the artifact is stored as JSON and reloaded`, async () => {
    const ws = await workspace(fixture, { "a.txt": lines(20) });
    try {
      const result = await ws.call("edit", {
        path: "a.txt",
        old_text: "line 9\nline 10\n",
        new_text: "nine\nten\nten and a half\n",
      });
      const stored = JSON.stringify(result.artifacts);
      const [reloaded] = JSON.parse(stored) as FileChangeArtifact[];
      assert.deepEqual(reloaded, result.artifacts[0]);
      assert.equal(reloaded.change, "modified");
      assert.equal(reloaded.added, 3);
      assert.equal(reloaded.removed, 2);
      assert.equal(reloaded.hunks.length, 1);
      const hunk = reloaded.hunks[0];
      assert.deepEqual([hunk.oldStart, hunk.oldLines, hunk.newStart, hunk.newLines], [6, 8, 6, 9]);
      assert.deepEqual(hunk.lines, [
        " line 6",
        " line 7",
        " line 8",
        "-line 9",
        "-line 10",
        "+nine",
        "+ten",
        "+ten and a half",
        " line 11",
        " line 12",
        " line 13",
      ]);
      // Applying the reloaded hunk to the prior content gives the current file.
      const before = reloaded.priorContent!.split("\n");
      const after = [
        ...before.slice(0, hunk.oldStart - 1),
        ...hunk.lines.filter((l) => !l.startsWith("-")).map((l) => l.slice(1)),
        ...before.slice(hunk.oldStart - 1 + hunk.oldLines),
      ];
      assert.equal(after.join("\n"), await fixture.readText(ws.filesystem, `${ws.root}/a.txt`));
      // An undo from the reloaded artifact works as well.
      const report = await undoFileChanges(ws.session, [reloaded]);
      assert.equal(report.ok, true);
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/a.txt`), lines(20));
    } finally {
      await ws.cleanup();
    }
  });

  test(`结果与 Artifact (${name}): undo returns conflict when the hash does not match, and overwrites nothing`, async () => {
    const ws = await workspace(fixture, { "a.txt": "one\ntwo\n" });
    try {
      const result = await ws.call("edit", { path: "a.txt", old_text: "two", new_text: "TWO" });
      await fixture.writeText(ws.filesystem, `${ws.root}/a.txt`, "one\nTWO\nsomeone else's line\n");
      const report = await undoFileChanges(ws.session, result.artifacts);
      assert.equal(report.ok, false);
      assert.equal(report.outcomes[0].status, "conflict");
      assert.equal((report.artifacts[0] as FileChangeArtifact).undone, false);
      assert.equal(
        await fixture.readText(ws.filesystem, `${ws.root}/a.txt`),
        "one\nTWO\nsomeone else's line\n",
      );
    } finally {
      await ws.cleanup();
    }
  });

  test(`结果与 Artifact (${name}): undo returns conflict when the file grew past what any change writes`, async () => {
    const ws = await workspace(fixture, { "a.txt": "one\ntwo\n" });
    try {
      const result = await ws.call("edit", { path: "a.txt", old_text: "two", new_text: "TWO" });
      const grown = "x".repeat(MAX_TEXT_BYTES + 2);
      await fixture.writeText(ws.filesystem, `${ws.root}/a.txt`, grown);
      const report = await undoFileChanges(ws.session, result.artifacts);
      assert.equal(report.outcomes[0].status, "conflict", report.outcomes[0].message);
      assert.equal(
        (await fixture.readText(ws.filesystem, `${ws.root}/a.txt`))?.length,
        grown.length,
      );
    } finally {
      await ws.cleanup();
    }
  });

  test(`结果与 Artifact (${name}): changes of one batch are undone in reverse order`, async () => {
    const ws = await workspace(fixture, { "keep.txt": "k1\n" });
    try {
      const batch = [];
      batch.push(await ws.call("write", { path: "made/new.txt", content: "v1\n" }));
      batch.push(await ws.call("edit", { path: "made/new.txt", old_text: "v1", new_text: "v2" }));
      batch.push(await ws.call("edit", { path: "keep.txt", old_text: "k1", new_text: "k2" }));
      batch.push(await ws.call("write", { path: "made/new.txt", content: "v3\n" }));
      for (const r of batch) assert.equal(r.ok, true, r.output);
      const artifacts = batch.flatMap((r) => r.artifacts);
      const report = await undoFileChanges(ws.session, artifacts);
      assert.equal(report.ok, true, JSON.stringify(report.outcomes));
      assert.deepEqual(
        report.outcomes.map((o) => o.changeId),
        artifacts.map((a) => a.changeId).reverse(),
      );
      assert.ok(report.artifacts.every((a) => a.undone));
      // Create-then-edit undone deletes the file.
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/made/new.txt`), null);
      assert.equal(await fixture.readText(ws.filesystem, `${ws.root}/keep.txt`), "k1\n");
      // Undoing again changes nothing and says so.
      const again = await undoFileChanges(ws.session, report.artifacts);
      assert.ok(again.outcomes.every((o) => o.status === "already_undone"));
    } finally {
      await ws.cleanup();
    }
  });

  test(`工具语义 (${name}): write says created or overwritten and enforces its caps`, async () => {
    const ws = await workspace(fixture, { "old.txt": "old\n" });
    try {
      assert.match(
        (await ws.call("write", { path: "fresh.txt", content: "x" })).output,
        /^Created fresh\.txt/,
      );
      assert.match(
        (await ws.call("write", { path: "old.txt", content: "new\n" })).output,
        /^Overwrote old\.txt/,
      );
      assert.match(
        (await ws.call("write", { path: "old.txt", content: "new\n" })).output,
        /nothing changed/,
      );
      const huge = "x".repeat(1024 * 1024 + 1);
      assert.equal(
        (await ws.call("write", { path: "big.txt", content: huge })).error?.code,
        "too_large",
      );
      assert.equal(
        (await ws.call("write", { path: ".", content: "x" })).error?.code,
        "is_directory",
      );
    } finally {
      await ws.cleanup();
    }
  });
}

test("工具语义: read streams a file larger than its output cap without loading it", async () => {
  const [fixture] = fixtures as [BackendFixture];
  const ws = await workspace(fixture, {});
  try {
    // 3 MiB of lines: output stops at the 1 MiB cap, and offset paging still works past it.
    const body = lines(150_000, "a fairly long line of text, number");
    const checked = await ws.session.resolvePath("big.txt", "write", "may_create");
    await ws.filesystem.writeFileAtomic(checked, new TextEncoder().encode(body));
    const first = await ws.call("read", { path: "big.txt" });
    const data = first.data as ReadOutput;
    assert.equal(data.stoppedBy, "byte_cap");
    assert.ok(first.output.length <= 1024 * 1024 + 200);
    assert.match(first.output, new RegExp(`continue with offset=${data.nextOffset}`));
    const tail = await ws.call("read", { path: "big.txt", offset: 149_998 });
    assert.deepEqual((tail.data as ReadOutput).lines, [
      "a fairly long line of text, number 149999",
      "a fairly long line of text, number 150000",
    ]);
  } finally {
    await ws.cleanup();
  }
});

test("结果与 Artifact: rewriting every line of a large file gives one whole-file hunk with exact counts", async () => {
  const session = await memorySession();
  const lines = 20_000;
  const before = Array.from({ length: lines }, (_, i) => `line ${i} before`).join("\n") + "\n";
  // Without its last line end: the whole-file hunk marks it as the diff does.
  const after = Array.from({ length: lines }, (_, i) => `line ${i} after`).join("\n");
  const toolset = finalizeToolset({ session });
  const approve = () => Promise.resolve(true);
  const first = await toolset.call({
    name: "write",
    input: { path: "big.txt", content: before },
    callId: "1",
    approve,
  });
  assert.equal(first.ok, true, first.output);
  const second = await toolset.call({
    name: "write",
    input: { path: "big.txt", content: after },
    callId: "2",
    approve,
  });
  assert.equal(second.ok, true, second.output);
  const change = second.artifacts[0] as FileChangeArtifact;
  assert.equal(change.hunks.length, 1);
  assert.deepEqual([change.added, change.removed], [lines, lines]);
  assert.equal(change.hunks[0].lines.length, 2 * lines + 1);
  assert.equal(change.hunks[0].lines.at(-1), "\\ No newline at end of file");
  assert.deepEqual([change.hunks[0].oldStart, change.hunks[0].newStart], [1, 1]);
});
