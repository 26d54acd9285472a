/**
 * The ignore rules of `grep` and `glob`'s walk, as git and ripgrep apply
 * them: `.git/info/exclude`, the user's `core.excludesFile`, patterns matched
 * case-sensitively; and the walk against git itself: on a tree with many
 * nested `.gitignore` files they visit exactly the files that
 * `git ls-files --cached --others --exclude-standard` lists (symbolic links
 * aside: git lists them, the walk never follows them), on every backend.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { GlobOutput, GrepOutput, MemoryFileSystem } from "../mod.ts";
import { excludesFileOf } from "../src/search/git_config.ts";
import { hostGitExcludes, hostGitExcludesPaths } from "../src/backends/host_text.ts";
import { IGNORE_FILE_MAX_BYTES } from "../src/search/walk.ts";
import {
  type BackendFixture,
  backendFixtures,
  type Layout,
  tempDir,
  workspace,
} from "./helpers.ts";

const fixtures = await backendFixtures();
const run = promisify(execFile);

/** Runs a bash script (the tests may start only bash) with arguments and environment variables. */
async function bash(
  script: string,
  cwd: string,
  env: Record<string, string> = {},
  ...args: string[]
): Promise<string> {
  const { stdout } = await run("bash", ["-c", script, "bash", ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

const hasGit = await bash("command -v git", "/").then(() => true, () => false);

/** Rules of the working directory's `.gitignore`: one case per line. */
const ROOT_RULES = [
  "# a comment, then a blank line",
  "",
  "*.log",
  "!keep.log",
  "/build/",
  "tmp/",
  "!tmp/rescued.txt",
  "*.s",
  "\\#hash.txt",
  "\\!bang.txt",
  "doc/**/*.txt",
  "**/cache",
  "a/**/z",
  "[abc]x.dat",
  "[!q]y.dat",
  "file\\ with\\ space.txt",
  "trailing.txt   ",
  "escaped-trailing\\ ",
  "*.o",
  "!important.o",
  "dironly/",
  "/anchored.txt",
  "nested/deep/*.md",
  "foo/**",
  "!foo/bar",
  "Case.TXT",
  "*.[oa]bj",
  "ch?.c",
  "!special.gi-neg",
  "!kept.glob-ign",
  "**/gen/**/*.js",
  "range[0-3].txt",
].join("\n") + "\n";

/** A tree that exercises git's ignore rules, large enough for the backends' workers to take over. */
function oracleLayout(): Layout {
  const layout: Layout = { ".gitignore": ROOT_RULES };
  const files = [
    "a.log",
    "keep.log",
    "build/out.txt",
    "src/build/kept.txt",
    "tmp/t.txt",
    "tmp/rescued.txt",
    "src/tmp/t.txt",
    "start.s",
    "X.S",
    "arch/entry.S",
    "arch/entry.s",
    "#hash.txt",
    "!bang.txt",
    "doc/a.txt",
    "doc/x/y/a.txt",
    "doc/b.md",
    "src/doc/a.txt",
    "cache/c.txt",
    "deep/er/cache/c.txt",
    "cachefile.txt",
    "a/z",
    "a/b/c/z",
    "a/zz",
    "ax.dat",
    "dx.dat",
    "qy.dat",
    "ry.dat",
    "file with space.txt",
    "file.txt",
    "trailing.txt",
    "escaped-trailing ",
    "escaped-trailing",
    "x.o",
    "important.o",
    "dironly",
    "sub/dironly/f.txt",
    "anchored.txt",
    "sub/anchored.txt",
    "nested/deep/n.md",
    "x/nested/deep/n.md",
    "foo/a.txt",
    "foo/bar",
    "foo/baz/q.txt",
    "Case.TXT",
    "case.txt",
    "CASE.TXT",
    "x.obj",
    "x.abj",
    "x.OBJ",
    "ch1.c",
    "ch12.c",
    "é.txt",
    "Ä.log",
    "ign.txt",
    "sub/ign.txt",
    "excluded-dir/e.txt",
    "one.excl",
    "special.gi-neg",
    "other.gi-neg",
    "overridden.log",
    "one.glob-ign",
    "kept.glob-ign",
    "global-dir/g.txt",
    "one.xdg-default",
    "web/gen/a/b.js",
    "web/gen/b.ts",
    "web/a.js",
    "range2.txt",
    "range5.txt",
    "sub/x.log",
    "sub/local.txt",
    "sub/deeper/local.txt",
    "sub/deeper/important.txt",
    "sub/a.tmp",
    "sub/inner/i.txt",
    "sub/deeper/inner/i.txt",
    "sub/keep-me.o",
    "sub/drop.o",
    "Perf/lib/x.pm",
    "perf/p.c",
  ];
  for (const file of files) layout[file] = "x\n";
  Object.assign(layout, {
    "sub/.gitignore": "!*.log\n/local.txt\n*.tmp\ninner/\n!/keep-me.o\n",
    "sub/deeper/.gitignore": "*.txt\n!important.txt\n",
    "tools/.gitignore": "perf\n",
    "tools/perf/p.c": "x\n",
    "tools/lib/Perf/x.pm": "x\n",
    ".git/info/exclude": "ign.txt\nexcluded-dir/\n*.excl\n*.gi-neg\n!overridden.log\n",
    "link.txt": { symlink: "a.log" },
    "linkdir": { symlink: "sub" },
  });
  // Many files in nested directories with their own rules: past the files and entries the
  // tools walk on the calling thread before a backend's workers take over.
  layout["bulk/.gitignore"] = "*7.txt\n!/p03/f17.txt\np05/\n*.LOG\n";
  layout["bulk/p02/.gitignore"] = "!f*7.txt\n";
  for (let p = 0; p < 10; p++) {
    for (let f = 0; f < 40; f++) {
      layout[`bulk/p${String(p).padStart(2, "0")}/f${String(f).padStart(2, "0")}.txt`] = "x\n";
    }
    layout[`bulk/p${String(p).padStart(2, "0")}/X.LOG`] = "x\n";
    layout[`bulk/p${String(p).padStart(2, "0")}/x.log`] = "x\n";
  }
  return layout;
}

/** The user's git configuration: `core.excludesFile` in ~/.gitconfig wins over the XDG file's. */
const HOME_FILES: Record<string, string> = {
  ".gitconfig": '[user]\n\tname = x\n[core]\n\texcludesFile = "~/custom-ignore" ; comment\n',
  "custom-ignore": "*.glob-ign\nglobal-dir/\n",
  ".config/git/config": "[core]\n\texcludesfile = ~/wrong-ignore\n",
  "wrong-ignore": "*.txt\n",
  ".config/git/ignore": "*.xdg-default\n",
};

/** Writes the user's git configuration files into a home directory on disk. */
async function writeHome(home: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(home, path)), { recursive: true });
    await writeFile(join(home, path), text);
  }
}

/** The files git lists for a layout, symbolic links left out. */
async function gitFiles(layout: Layout): Promise<string[]> {
  const dir = await tempDir();
  try {
    const root = join(dir.path, "repo");
    const home = join(dir.path, "home");
    await writeHome(home, HOME_FILES);
    for (const [path, entry] of Object.entries(layout)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      if (typeof entry === "string") await writeFile(join(root, path), entry);
      else if ("symlink" in entry) await bash('ln -s "$1" "$2"', root, {}, entry.symlink, path);
    }
    // The user's configuration only from the home directory made here.
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), GIT_CONFIG_NOSYSTEM: "1" };
    await bash("git init -q .", root, env);
    const listed = await bash(
      "git -c core.quotepath=off ls-files -z --cached --others --exclude-standard",
      root,
      env,
    );
    const links = new Set(
      Object.entries(layout).filter(([, entry]) => typeof entry === "object").map(([p]) => p),
    );
    return listed.split("\0").filter((path) => path !== "" && !links.has(path)).sort();
  } finally {
    await dir.cleanup();
  }
}

/** A workspace whose user has the given git configuration files in the home directory. */
async function withHome(
  fixture: BackendFixture,
  layout: Layout,
  homeFiles: Record<string, string>,
  body: (ws: Awaited<ReturnType<typeof workspace>>) => Promise<void>,
): Promise<void> {
  // On disk for the disk backends; inside the in-memory file system for it.
  const disk = fixture.name === "memory" ? null : await tempDir();
  const home = disk?.path ?? "/work/home";
  if (disk !== null) await writeHome(home, homeFiles);
  const ws = await workspace(fixture, layout, {
    environment: { HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
  });
  try {
    if (disk === null) {
      for (const [path, text] of Object.entries(homeFiles)) {
        (ws.filesystem as MemoryFileSystem).writeFile(`${home}/${path}`, text);
      }
    }
    await body(ws);
  } finally {
    await ws.cleanup();
    await disk?.cleanup();
  }
}

/** The files grep visits (every file holds a character) and the paths glob lists. */
async function visited(
  ws: Awaited<ReturnType<typeof workspace>>,
): Promise<{ grep: string[]; glob: string[] }> {
  const grep = await ws.call("grep", { pattern: ".", max_results: 2000 });
  assert.equal(grep.ok, true, grep.output);
  const glob = await ws.call("glob", { pattern: "**/*", max_results: 2000 });
  assert.equal(glob.ok, true, glob.output);
  return { grep: [...(grep.data as GrepOutput).files], glob: [...(glob.data as GlobOutput).paths] };
}

test("git config: core.excludesFile is read as git reads it: sections, quotes, comments, the last value", () => {
  assert.equal(excludesFileOf("[core]\n\texcludesFile = ~/a\n"), "~/a");
  assert.equal(excludesFileOf("[Core]\nEXCLUDESFILE=/x/y ; note\n"), "/x/y");
  assert.equal(
    excludesFileOf('[core]\n  excludesfile = "/with space/#not a comment" # note\n'),
    "/with space/#not a comment",
  );
  assert.equal(excludesFileOf("[core] excludesfile = /inline\n"), "/inline");
  assert.equal(
    excludesFileOf(
      "[core]\nexcludesfile = /first\n[user]\nname = x\n[core]\nexcludesfile = /last\n",
    ),
    "/last",
  );
  assert.equal(excludesFileOf("[user]\nexcludesfile = /not-core\n"), null);
  assert.equal(excludesFileOf('[core "sub"]\nexcludesfile = /subsection\n'), null);
  assert.equal(excludesFileOf("[core]\n# excludesfile = /commented\n"), null);
  assert.equal(excludesFileOf('[core]\nexcludesfile = "/a\\"b"\n'), '/a"b');
});

/**
 * A file of more than the ignore files' limit whose size the kernel reports
 * as 0 (Deno reads it only with --allow-all: the test runs under Node, or
 * Deno with all permissions).
 */
const UNSIZED = "/proc/kallsyms";
const unsizedLength = await readFile(UNSIZED).then((bytes) => bytes.length, () => 0);

test(
  "git config: an excludes file that reports no size (a /proc file) is read no further than the ignore files' limit, and not granted",
  { skip: unsizedLength <= IGNORE_FILE_MAX_BYTES && `${UNSIZED} is not readable here, or small` },
  async () => {
    const dir = await tempDir();
    try {
      await writeFile(join(dir.path, ".gitconfig"), `[core]\n\texcludesFile = ${UNSIZED}\n`);
      const environment = { HOME: dir.path };
      assert.equal(await hostGitExcludes(environment), null);
      assert.deepEqual(hostGitExcludesPaths(environment), [join(dir.path, ".gitconfig")]);
    } finally {
      await dir.cleanup();
    }
  },
);

for (const fixture of fixtures) {
  test(`grep and glob (${fixture.name}): patterns match case-sensitively, as git does on Linux`, async () => {
    const layout: Layout = {
      ".git/HEAD": "x\n",
      ".gitignore": "*.s\nCase.txt\n",
      "entry.S": "x\n",
      "entry.s": "x\n",
      "case.txt": "x\n",
      "Case.txt": "x\n",
      "tools/.gitignore": "perf\n",
      "tools/perf/p.c": "x\n",
      "tools/lib/Perf/x.pm": "x\n",
    };
    await withHome(fixture, layout, {}, async (ws) => {
      const { grep, glob } = await visited(ws);
      const files = [
        ".gitignore",
        "case.txt",
        "entry.S",
        "tools/.gitignore",
        "tools/lib/Perf/x.pm",
      ];
      assert.deepEqual(grep, files);
      assert.deepEqual(glob.filter((path) => path in layout), files);
    });
  });

  test(`grep and glob (${fixture.name}): .git/info/exclude applies in its repository, beneath the .gitignore files`, async () => {
    const layout: Layout = {
      ".git/info/exclude": "ign.txt\n*.excl\nbuild/\n!overridden.log\n",
      ".gitignore": "*.log\n!kept.excl\n",
      "ign.txt": "x\n",
      "sub/ign.txt": "x\n",
      "a.excl": "x\n",
      "kept.excl": "x\n",
      "build/out.txt": "x\n",
      "overridden.log": "x\n",
      "main.ts": "x\n",
    };
    await withHome(fixture, layout, {}, async (ws) => {
      const { grep, glob } = await visited(ws);
      assert.deepEqual(grep, [".gitignore", "kept.excl", "main.ts"]);
      assert.deepEqual(glob, [".gitignore", "kept.excl", "main.ts", "sub"]);
      // Searching below the repository's root: its exclude file still applies.
      const sub = await ws.call("glob", { pattern: "*", path: "sub" });
      assert.deepEqual((sub.data as GlobOutput).paths, []);
    });
  });

  test(`grep and glob (${fixture.name}): the user's core.excludesFile applies inside a repository, as in git and ripgrep`, async () => {
    const layout: Layout = {
      ".git/HEAD": "x\n",
      ".gitignore": "!kept.glob-ign\n",
      "a.glob-ign": "x\n",
      "kept.glob-ign": "x\n",
      "global-dir/g.txt": "x\n",
      "a.xdg": "x\n",
      "main.ts": "x\n",
      "outside/.gitignore": "!*\n",
    };
    const expected = [".gitignore", "a.xdg", "kept.glob-ign", "main.ts", "outside/.gitignore"];
    await withHome(fixture, layout, {
      ".gitconfig": "[core]\n\texcludesFile = ~/.global-ignore\n",
      ".global-ignore": "*.glob-ign\nglobal-dir/\n",
      ".config/git/ignore": "*.xdg\n",
    }, async (ws) => {
      assert.deepEqual((await visited(ws)).grep, expected);
    });
    // Without core.excludesFile, git's default file: $XDG_CONFIG_HOME/git/ignore.
    await withHome(fixture, layout, { ".config/git/ignore": "*.xdg\n" }, async (ws) => {
      assert.deepEqual((await visited(ws)).grep, [
        ".gitignore",
        "a.glob-ign",
        "global-dir/g.txt",
        "kept.glob-ign",
        "main.ts",
        "outside/.gitignore",
      ]);
    });
    // Outside a repository, no ignore rule applies, the user's neither.
    const bare = { ...layout };
    delete bare[".git/HEAD"];
    await withHome(fixture, bare, { ".config/git/ignore": "*\n" }, async (ws) => {
      assert.equal((await visited(ws)).grep.length, 7);
    });
  });

  test(
    `grep and glob (${fixture.name}): visit exactly the files git ls-files --cached --others --exclude-standard lists`,
    {
      skip: !hasGit && "git is not installed",
    },
    async () => {
      const layout = oracleLayout();
      const expected = await gitFiles(layout);
      await withHome(fixture, layout, HOME_FILES, async (ws) => {
        const { grep, glob } = await visited(ws);
        assert.deepEqual(grep.sort(), expected);
        assert.deepEqual(glob.filter((path) => path in layout).sort(), expected);
      });
    },
  );
}
