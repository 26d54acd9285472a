/**
 * The search index lists the tree in a worker while its watcher starts:
 * a change made after a directory was listed and before the watcher was in
 * place (a file made, a file removed, an ignore file rewritten) is never
 * lost, nor one of a repository's exclude file. The watcher here is the runtime's own, started only once the
 * listing is in and the tree has changed, so that no event reports those
 * changes: only the stamps taken with the listing can tell them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs/promises";
import { join } from "node:path";
import { defaultWatchTree as watchTree } from "#default-backends";
import { createSession, finalizeToolset } from "../mod.ts";
import type { ToolSessionContext } from "../mod.ts";
import { tempDir } from "./helpers.ts";
import {
  assertSameAnswer,
  type IndexBackend,
  linkedIndexBackends,
  pastRacyWindow,
  put,
} from "./search_index_tree.ts";

const backends: IndexBackend[] = await linkedIndexBackends();

/**
 * A session with the index on `root` whose watcher starts only once the
 * tree was listed in a worker and `change` was made: no event reports it.
 */
async function changedBetweenListingAndWatch(
  backend: IndexBackend,
  root: string,
  change: () => Promise<void>,
): Promise<ToolSessionContext> {
  const filesystem = backend.create();
  const workers = filesystem.indexWorkers!;
  let listed!: () => void;
  const listing = new Promise<void>((resolve) => (listed = resolve));
  return await createSession({
    workingDirectory: root,
    filesystem: {
      ...filesystem,
      indexWorkers: {
        ...workers,
        listTree: async (job) => {
          const answer = await workers.listTree!(job);
          listed();
          return answer;
        },
      },
    },
    skillRoot: null,
    searchIndex: {
      cacheDirectory: null,
      watch: async (path, handlers, options) => {
        await listing;
        await change();
        return await watchTree(path, handlers, options);
      },
    },
  });
}

for (const backend of backends) {
  test(
    `search index: a change made after the tree was listed and before the watcher was in place is seen (${backend.name})`,
    async () => {
      const dir = await tempDir();
      try {
        const root = join(dir.path, "repo");
        await put(join(root, "src/a.ts"), "alpha one\n");
        await put(join(root, "docs/b.md"), "alpha two\n");
        await put(join(root, "docs/deep/c.txt"), "alpha three\n");
        await put(join(root, ".gitignore"), "*.log\n");
        await put(join(root, "noise.log"), "alpha ignored\n");
        await put(join(root, "docs/e.md"), "alpha five\n");
        // A repository, whose ignore rules apply: `.gitignore` and `.git/info/exclude`.
        await put(join(root, ".git/info/exclude"), "# nothing\n");
        // Stamps of what is older than the racy window are known: only a real change tells.
        await pastRacyWindow();
        assert.ok(backend.create().indexWorkers!.listTree !== undefined, "a listing in a worker");
        const session = await changedBetweenListingAndWatch(backend, root, async () => {
          await put(join(root, "src/new.ts"), "alpha new\n");
          await fs.rm(join(root, "docs/b.md"));
          await fs.writeFile(join(root, ".gitignore"), "*.txt\n");
          await fs.writeFile(join(root, ".git/info/exclude"), "*.md\n");
        });
        const index = session.searchIndex!;
        await index.ready;
        const indexed = finalizeToolset({ session });
        const plain = finalizeToolset({
          session: await createSession({
            workingDirectory: root,
            filesystem: backend.create(),
            skillRoot: null,
          }),
        });
        const grep = await assertSameAnswer(
          indexed,
          plain,
          "grep",
          { pattern: "alpha", mode: "files_with_matches" },
          () => "after changes between the listing and the watch",
        );
        assert.deepEqual(
          [...(grep.data as { readonly files: readonly string[] }).files].sort(),
          ["noise.log", "src/a.ts", "src/new.ts"],
        );
        await assertSameAnswer(indexed, plain, "glob", { pattern: "**/*" }, () => "glob");
        assert.equal(index.stats().searches.indexed, 2);
        await index.close();
      } finally {
        await dir.cleanup();
      }
    },
  );
}

for (const backend of backends) {
  test(
    `search index: workers that cannot list the tree leave the walk to the calling thread, and the answers are the same (${backend.name})`,
    async () => {
      const dir = await tempDir();
      try {
        const root = join(dir.path, "repo");
        await put(join(root, "src/a.ts"), "alpha one\n");
        await put(join(root, "docs/deep/c.txt"), "alpha three\n");
        await put(join(root, ".gitignore"), "*.log\n");
        await put(join(root, "noise.log"), "alpha ignored\n");
        await put(join(root, ".git/info/exclude"), "*.md\n");
        await put(join(root, "docs/e.md"), "alpha five\n");
        const filesystem = backend.create();
        const { listTree: _unused, ...workers } = filesystem.indexWorkers!;
        const session = await createSession({
          workingDirectory: root,
          filesystem: { ...filesystem, indexWorkers: workers },
          skillRoot: null,
          searchIndex: { cacheDirectory: null },
        });
        const index = session.searchIndex!;
        await index.ready;
        const indexed = finalizeToolset({ session });
        const plain = finalizeToolset({
          session: await createSession({
            workingDirectory: root,
            filesystem: backend.create(),
            skillRoot: null,
          }),
        });
        await put(join(root, "src/new.ts"), "alpha new\n");
        const grep = await assertSameAnswer(
          indexed,
          plain,
          "grep",
          { pattern: "alpha", mode: "files_with_matches" },
          () => "walked on the calling thread",
        );
        assert.deepEqual(
          [...(grep.data as { readonly files: readonly string[] }).files].sort(),
          ["docs/deep/c.txt", "src/a.ts", "src/new.ts"],
        );
        await assertSameAnswer(indexed, plain, "glob", { pattern: "**/*" }, () => "glob");
        assert.equal(index.stats().searches.indexed, 2);
        await index.close();
      } finally {
        await dir.cleanup();
      }
    },
  );
}

/** Changes made between the listing and the watch that change the ignore rules below a directory. */
const RULE_CHANGES: readonly {
  readonly name: string;
  readonly repository: boolean;
  readonly change: (root: string) => Promise<void>;
}[] = [
  {
    name: "an ignore file made in a directory",
    repository: true,
    change: (root) => put(join(root, "sub/.gitignore"), "*.md\n"),
  },
  {
    name: "a repository made at the top",
    repository: false,
    change: (root) => fs.mkdir(join(root, ".git")),
  },
];

for (const backend of backends) {
  for (const { name, repository, change } of RULE_CHANGES) {
    test(
      `search index: ${name} after the tree was listed and before the watcher was in place rules below it as a walk would (${backend.name})`,
      async () => {
        const dir = await tempDir();
        try {
          const root = join(dir.path, "repo");
          await put(join(root, ".gitignore"), "*.log\n");
          await put(join(root, "top.md"), "alpha top\n");
          await put(join(root, "sub/deep/c.md"), "alpha c\n");
          await put(join(root, "sub/deep/deeper/z.md"), "alpha z\n");
          await put(join(root, "sub/deep/x.log"), "alpha x\n");
          await put(join(root, "sub/deep/kept.ts"), "alpha kept\n");
          if (repository) await fs.mkdir(join(root, ".git"));
          await pastRacyWindow();
          const session = await changedBetweenListingAndWatch(backend, root, () => change(root));
          const index = session.searchIndex!;
          await index.ready;
          const indexed = finalizeToolset({ session });
          const plain = finalizeToolset({
            session: await createSession({
              workingDirectory: root,
              filesystem: backend.create(),
              skillRoot: null,
            }),
          });
          for (const mode of ["files_with_matches", "count"]) {
            await assertSameAnswer(indexed, plain, "grep", { pattern: "alpha", mode }, () => name);
          }
          await assertSameAnswer(indexed, plain, "glob", { pattern: "**/*" }, () => name);
          assert.equal(index.stats().searches.indexed, 3);
          await index.close();
        } finally {
          await dir.cleanup();
        }
      },
    );
  }
}
