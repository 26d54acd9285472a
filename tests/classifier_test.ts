/**
 * The read-only classifier, the acceptEdits file-system gate, and the
 * reference policy `decide`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { classifyCommand, createSession, decide, finalizeToolset } from "../mod.ts";
import type { ToolEffect, ToolSessionContext } from "../mod.ts";
import { memorySession, sh, tempDir } from "./helpers.ts";

function session(
  mode: "default" | "acceptEdits" | "plan" = "default",
): Promise<ToolSessionContext> {
  return memorySession(mode, {
    "repo/src/a.ts": "x\n",
    "repo/.git/config": "[core]\n",
    "elsewhere": { dir: true },
    "repo/out": { symlink: "/elsewhere" },
  });
}

/** Commands that must never be called read-only. */
export const NOT_READ_ONLY: readonly string[] = [
  "printf x > ../out",
  "echo hi > file.txt",
  "cat a >> b",
  "cat < /etc/passwd > copy",
  "tee /abs/path",
  "ls | tee out.txt",
  "ln -s /outside target",
  "find . -exec rm {} \\;",
  "find . -execdir rm {} +",
  "find . -ok rm {} \\;",
  "find . -delete",
  "find . -fprint out.txt",
  "find . -fls out.txt",
  "find . -e\\xec rm {} \\;",
  "find . '-exec' rm {} \\;",
  'find . "-del""ete"',
  "git status",
  "git -c core.pager=evil log",
  "git log",
  "./cat x",
  "/tmp/x/sed -n 1p a",
  "/bin/ls",
  "rg -z pattern",
  "rg --search-zip pattern",
  "rg --pre ./script pattern",
  "rg --pre=./script pattern",
  "rg --hostname-bin ./x pattern",
  "rg -iz pattern",
  "sed -n 1p x w out",
  "sed -i s/a/b/ file",
  "sed 's/a/b/w out' file",
  "sed -n '1p;w out' file",
  "sed -n 1e file",
  "cat $(echo /etc/passwd)",
  "cat `id`",
  "cat <(ls)",
  "diff <(ls) b",
  "ls $HOME",
  'echo "$PATH"',
  "cat ${FILE}",
  "FOO=1 cat x",
  "PAGER=evil ls",
  "command cat x",
  "builtin echo x",
  "exec cat x",
  "env cat x",
  "sudo cat x",
  "xargs rm",
  "ls; rm -rf /",
  "ls\nrm -rf /",
  "ls && touch x",
  "ls || curl example.invalid",
  "cat x | sh",
  "(ls)",
  "{ ls; }",
  "ls &",
  "cat *.ts",
  "ls ~/secret",
  "cat {a,b}",
  "ls -l --hyperlink=always --some-unknown-flag",
  "sort -o out in",
  "sort --compress-program=./evil in",
  "uniq in out",
  "date -s 2020-01-01",
  "date 0101000020",
  "hostname newname",
  "file -C -m magic",
  "awk '{print}' x",
  "python3 -c 'print(1)'",
  "echo $'\\x41'",
  "if true; then ls; fi",
  "for f in a; do cat $f; done",
  "f() { ls; }; f",
  "ls 2>/dev/null",
  "cat <<EOF\nhi\nEOF",
  "echo unterminated 'quote",
  "alias ls=rm",
  "rm -rf build",
  "touch new.txt",
  "ls # a comment",
  "tree -aL 2",
  "tree -Lo 1 pwned",
  "tree -o out.txt",
];

/** Commands that must be called read-only. */
export const READ_ONLY: readonly string[] = [
  "ls",
  "ls -la",
  "ls -la src/",
  "cat README.md",
  "cat -n a b",
  "head -n 20 file",
  "head -20 file",
  "tail -n 5 file",
  "wc -l src/a.ts",
  "grep -rn TODO src",
  "grep -e -exec file",
  "rg -n 'fn main' --type rust",
  "rg --files",
  "rg -g '*.ts' -i pattern",
  "find . -name '*.ts' -type f",
  "find src -maxdepth 2 -newer x -print",
  "sed -n 5p file",
  "sed -n '10,20p' file",
  "pwd",
  "echo hello world",
  "ls -la | grep x && wc -l a; cat b",
  "ls\npwd",
  "git_like_name_is_not_git",
  "stat -c %s file",
  "du -sh .",
  "diff -u a b",
  "sort -n file | uniq -c",
  "cat 'a file' \"another file\"",
  "cat a\\ b",
  "which ls",
  "uname -a",
  "date +%Y",
  "basename /a/b.txt .txt",
  "sha256sum file",
  "cut -d: -f1 file",
  "tr a-z A-Z",
  "true",
  "echo '$HOME' is literal",
  "tree -L 2",
  "tree -a -I node_modules src",
];

test("classifier: at least 40 adversarial commands are not called read-only", async () => {
  const s = await session();
  assert.ok(NOT_READ_ONLY.length >= 40, `${NOT_READ_ONLY.length} cases`);
  for (const command of NOT_READ_ONLY) {
    const verdict = await classifyCommand(command, s);
    assert.equal(verdict.readOnly, false, `${JSON.stringify(command)} was called read-only`);
    assert.notEqual(verdict.reason, "every command is on the read-only whitelist", command);
  }
});

test("classifier: at least 20 plain read-only commands are called read-only", async () => {
  const s = await session();
  const readOnly = READ_ONLY.filter((c) => c !== "git_like_name_is_not_git");
  assert.ok(readOnly.length >= 20, `${readOnly.length} cases`);
  for (const command of readOnly) {
    const verdict = await classifyCommand(command, s);
    assert.equal(verdict.readOnly, true, `${JSON.stringify(command)}: ${verdict.reason}`);
  }
  assert.equal(
    (await classifyCommand("git_like_name_is_not_git", s)).readOnly,
    false,
    "unknown programs fail closed",
  );
});

test("classifier: the acceptEdits file-system gate admits literal paths inside writable roots only", async () => {
  const s = await session("acceptEdits");
  for (
    const command of [
      "mkdir -p build/out",
      "touch src/new.ts",
      "cp src/a.ts src/b.ts",
      "mv src/a.ts src/c.ts",
    ]
  ) {
    const verdict = await classifyCommand(command, s);
    assert.equal(verdict.fileSystemGate, true, `${command}: ${verdict.reason}`);
    assert.equal(verdict.readOnly, false);
  }
  for (
    const command of [
      "mkdir ../outside",
      "touch /tmp/x",
      "cp src/a.ts out/x",
      "mv src/a.ts .git/hooks/pre-commit",
      "cp src/a.ts $TARGET",
      "touch *.ts",
      "mkdir -p build > log",
      "rm -rf src",
      "cp --preserve=all -Z src/a.ts b",
      "mkdir",
      "mkdir a && cp src/a.ts a/",
    ]
  ) {
    const verdict = await classifyCommand(command, s);
    assert.equal(verdict.fileSystemGate, false, `${command} passed the gate`);
  }
});

test("policy: decide returns allow, ask or deny with the rule that decided", async () => {
  const read: ToolEffect = { kind: "read", path: "a", root: "working_directory" };
  const write: ToolEffect = { kind: "write", path: "a", root: "working_directory" };
  const s = await session();
  const ro: ToolEffect = {
    kind: "execute",
    command: "ls",
    classification: await classifyCommand("ls", s),
  };
  const rw: ToolEffect = {
    kind: "execute",
    command: "rm x",
    classification: await classifyCommand("rm x", s),
  };
  const gate: ToolEffect = {
    kind: "execute",
    command: "mkdir x",
    classification: await classifyCommand("mkdir x", await session("acceptEdits")),
  };
  const table: [string, ToolEffect[], string, string][] = [
    ["default", [read], "allow", "read.inside_roots"],
    ["default", [write], "ask", "default.write_asks"],
    ["default", [ro], "allow", "bash.read_only_whitelist"],
    ["default", [rw], "ask", "bash.not_proven_read_only"],
    ["default", [gate], "ask", "bash.not_proven_read_only"],
    ["acceptEdits", [write], "allow", "accept_edits.write_in_working_directory"],
    ["acceptEdits", [gate], "allow", "accept_edits.file_system_gate"],
    ["acceptEdits", [rw], "ask", "bash.not_proven_read_only"],
    ["plan", [write], "deny", "plan.read_only"],
    ["plan", [rw], "deny", "plan.read_only"],
    ["plan", [ro], "allow", "bash.read_only_whitelist"],
    ["default", [read, write], "ask", "default.write_asks"],
    ["default", [], "allow", "no_effects"],
  ];
  for (const [mode, effects, decision, source] of table) {
    assert.deepEqual(
      decide({ mode: mode as "default" }, effects),
      { decision, source },
      `${mode} ${JSON.stringify(effects)}`,
    );
  }
});

test("policy: call with approve asks only where the policy says ask", async () => {
  const s = await session();
  const toolset = finalizeToolset({ session: s });
  const asked: string[] = [];
  const approve = (request: { prepared: { name: string } }) => {
    asked.push(request.prepared.name);
    return Promise.resolve(false);
  };
  const read = await toolset.call({
    name: "read",
    input: { path: "src/a.ts" },
    callId: "1",
    approve,
  });
  assert.equal(read.ok, true);
  const write = await toolset.call({
    name: "write",
    input: { path: "b.txt", content: "x" },
    callId: "2",
    approve,
  });
  assert.equal(write.error?.code, "denied");
  assert.deepEqual(asked, ["write"]);
  const failing = await toolset.call({
    name: "write",
    input: { path: "b.txt", content: "x" },
    callId: "3",
    approve: () => Promise.reject(new Error("ui crashed")),
  });
  assert.equal(failing.error?.code, "denied", "an approver that fails refuses");
  const careless = await toolset.call({
    name: "write",
    input: { path: "b.txt", content: "x" },
    callId: "4",
    approve: () => Promise.resolve(null as unknown as boolean),
  });
  assert.equal(careless.error?.code, "denied", "an approver that answers null refuses");
});

test("policy: call without approve refuses ask verdicts, says how to approve, and runs allow", async () => {
  const s = await session();
  const toolset = finalizeToolset({ session: s });
  const write = await toolset.call({
    name: "write",
    input: { path: "pwned.txt", content: "x" },
    callId: "1",
  });
  assert.equal(write.error?.code, "denied");
  assert.match(write.output, /pass `approve` to call\(\), or use prepare\(\) and execute\(\)/);
  assert.equal(await s.filesystem.lstat("/repo/pwned.txt").catch(() => null), null);
  const bash = await toolset.call({ name: "bash", input: { command: "touch pwned" }, callId: "2" });
  assert.equal(bash.error?.code, "denied");
  const read = await toolset.call({ name: "read", input: { path: "src/a.ts" }, callId: "3" });
  assert.equal(read.ok, true, read.output);
});

test("classifier: printf %n, writes through links at a directory destination, lines that change their own paths, and loader lists are refused", async () => {
  const dir = await tempDir();
  try {
    const wd = join(dir.path, "wd");
    const outside = join(dir.path, "outside");
    // Links are made by ln: Deno's symlink needs unscoped permissions.
    const link = (target: string, path: string) => sh('ln -s "$1" "$2"', target, path);
    await mkdir(join(wd, "d2"), { recursive: true });
    await mkdir(join(wd, ".git"));
    await mkdir(join(wd, "docs"));
    await mkdir(join(wd, "tree"));
    await mkdir(outside);
    await writeFile(join(outside, "victim.txt"), "victim\n");
    await writeFile(join(wd, "a"), "a\n");
    await writeFile(join(wd, "config"), "[core]\n");
    await writeFile(join(wd, ".git", "config"), "[core]\n");
    await link(join(outside, "victim.txt"), join(wd, "d2", "a"));
    await link("../.git/config", join(wd, "docs", "config"));
    await link("../../outside", join(wd, "tree", "up"));
    const environment = { PATH: "/usr/bin:/bin" };
    const session = await createSession({
      workingDirectory: wd,
      permissions: { mode: "acceptEdits" },
      environment,
    });
    for (
      const command of [
        "printf 'abc%n' PATH; ls",
        "printf %n PATH",
        "printf -- %n PATH",
        "printf '%5n' PATH",
        "printf %s%n x PATH",
        "printf '%((%n)T' PATH; ls",
        "printf -- '%((%n)T' PATH",
        "printf '%(a(b)T'",
        "printf '%(%Y'",
        "touch -d 'TZ=\"/etc/localtime\" now' a",
        "touch --date=TZ=/etc/localtime a",
        "cp a d2",
        "cp a d2/",
        "cp -t d2 a",
        "cp --remove-destination a d2",
        "cp config docs/",
        "cp -r tree tree2",
        "cp -P tree/up r",
        "mv tree/up r",
        "mv tree tree2",
        "mkdir e && cp a e/x",
        "cp a x && cat x",
      ]
    ) {
      const verdict = await classifyCommand(command, session);
      assert.equal(
        verdict.readOnly || verdict.fileSystemGate,
        false,
        `${command}: ${verdict.reason}`,
      );
    }
    for (const command of ["cp a b", "cp a docs/", "mv a d3", "printf '%s %d%%\\n' x 1"]) {
      const verdict = await classifyCommand(command, session);
      assert.ok(verdict.readOnly || verdict.fileSystemGate, `${command}: ${verdict.reason}`);
    }
    for (
      const extra of <Record<string, string>[]> [
        { LD_LIBRARY_PATH: "/usr/local/lib;" },
        { LD_LIBRARY_PATH: "/opt/lib;." },
        { LD_LIBRARY_PATH: "$ORIGIN/lib" },
        { GCONV_PATH: "." },
        { TMPDIR: wd },
        { PATH: `${join(dir.path, "dangling")}:/usr/bin:/bin` },
      ]
    ) {
      if ("PATH" in extra) await link(join(wd, "bin"), join(dir.path, "dangling"));
      const s = await createSession({
        workingDirectory: wd,
        environment: { ...environment, ...extra },
      });
      const verdict = await classifyCommand("ls", s);
      assert.equal(verdict.readOnly, false, `${JSON.stringify(extra)}: ${verdict.reason}`);
    }
  } finally {
    await dir.cleanup();
  }
});
