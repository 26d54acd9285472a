/**
 * Long input cannot stall the host: the work a model-supplied string causes
 * before a tool runs is bounded. A command longer than bash can be started
 * with is `invalid_input`; one is classified only up to a length and a
 * number of file-system lookups (past them it asks), and a cancel stops the
 * classification; a grep or glob pattern over its bound
 * is `invalid_input` naming it; a glob that a backtracking engine would
 * take seconds over runs in linear time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import picomatch from "picomatch";
import {
  classifyCommand,
  createMemoryFileSystem,
  createSession,
  decide,
  type FinalizedToolset,
  finalizeToolset,
  MAX_CLASSIFIED_COMMAND_LENGTH,
  MAX_CLASSIFIER_LOOKUPS,
  MAX_COMMAND_BYTES,
} from "../mod.ts";
import { toAISDKTools } from "../ai_sdk.ts";
import { toOpenAIAgentsTools } from "../openai_agents.ts";
import { MAX_PATTERN_LENGTH, MAX_PATTERN_PROGRAM } from "../src/search/pattern_bounds.ts";
import { globFilter, globMatcher, MAX_GLOB_LENGTH } from "../src/search/glob_filter.ts";
import {
  backtracksBounded,
  parseRegex,
  re2Input,
  reversedRe2Source,
} from "../src/search/glob_regex.ts";
import { RE2JS } from "re2js";
import { countedSession, LONG_COMMAND, Lookups, lsCommand, TWO_MB } from "./lookups_fixture.ts";

test("bash: a 94 KB command (ls f0 … f14999) is answered with a decision, and asks, without classifying its operands", async () => {
  assert.ok(LONG_COMMAND.length > MAX_CLASSIFIED_COMMAND_LENGTH);
  assert.ok(LONG_COMMAND.length < MAX_COMMAND_BYTES);
  const lookups = new Lookups();
  const toolset = finalizeToolset({ session: await countedSession(lookups) });
  const prepared = await toolset.prepare("bash", { command: LONG_COMMAND });
  assert.equal(prepared.ok, true);
  const effect = prepared.ok ? prepared.effects[0] : undefined;
  assert.equal(effect?.kind, "execute");
  const classification = effect?.kind === "execute" ? effect.classification : undefined;
  assert.equal(classification?.readOnly, false);
  assert.equal(classification?.fileSystemGate, false);
  assert.match(
    classification?.reason ?? "",
    new RegExp(`longer than ${MAX_CLASSIFIED_COMMAND_LENGTH}`),
  );
  assert.equal(
    decide(toolset.session.permissions, prepared.ok ? prepared.effects : []).decision,
    "ask",
  );
  // The operands were never looked at: the bound is the command's length, checked first.
  assert.equal(lookups.count, 0);

  // A call without an approver is refused for want of approval: it reached the policy.
  const result = await toolset.call({
    name: "bash",
    input: { command: LONG_COMMAND },
    callId: "big",
  });
  assert.equal(result.error?.code, "denied");
  assert.match(result.output, /needs the person's approval/);
  assert.equal(lookups.count, 0);
});

test("bash: a command bash cannot be started with (over 131071 bytes) is invalid_input naming the bound, never classified or asked about", async () => {
  const lookups = new Lookups();
  const toolset = finalizeToolset({ session: await countedSession(lookups) });
  for (
    const command of [
      TWO_MB,
      "x".repeat(MAX_COMMAND_BYTES + 1),
      `echo ${"é".repeat(MAX_COMMAND_BYTES / 2)}`, // fewer characters than the bound, more bytes
    ]
  ) {
    let asked = false;
    const result = await toolset.call({
      name: "bash",
      input: { command },
      callId: "over",
      approve: () => {
        asked = true;
        return Promise.resolve(true);
      },
    });
    assert.equal(result.error?.code, "invalid_input", result.output.slice(0, 200));
    assert.match(result.output, new RegExp(`command: at most ${MAX_COMMAND_BYTES} `));
    assert.match(result.output, /write the script to a file/);
    assert.equal(asked, false, "no approval card shows it");
    assert.ok(result.output.length < 1000, `${result.output.length} characters answered`);
  }
  assert.equal(lookups.count, 0);
  // At the bound it is classified as any long command is, and asks.
  const prepared = await toolset.prepare("bash", { command: "x".repeat(MAX_COMMAND_BYTES) });
  assert.equal(prepared.ok, true);
  // The schema the model sees carries the bound.
  const bash = toolset.definitions.find((d) => d.name === "bash")!;
  const command = bash.inputSchema.properties.command as { maxLength?: number };
  assert.equal(command.maxLength, MAX_COMMAND_BYTES);
  assert.match(bash.description, new RegExp(`at most ${MAX_COMMAND_BYTES} bytes`));
});

test("bash: a command whose operands need more lookups than the budget asks, after at most the budget's lookups", async () => {
  for (
    const command of [
      lsCommand(2000), // ~13 KB: under the length bound, over the lookup budget
      `cat ${"f0/../".repeat(2500)}f1`, // one operand whose `..` each need a lookup
      `cat ${Array(1500).fill("d").join("/")}`, // one operand 1500 segments deep
    ]
  ) {
    assert.ok(command.length <= MAX_CLASSIFIED_COMMAND_LENGTH, `${command.length}`);
    const lookups = new Lookups();
    const session = await countedSession(lookups);
    const classification = await classifyCommand(command, session);
    assert.equal(classification.readOnly, false, command.slice(0, 40));
    assert.match(classification.reason, new RegExp(`more than ${MAX_CLASSIFIER_LOOKUPS}`));
    assert.ok(
      lookups.count <= MAX_CLASSIFIER_LOOKUPS,
      `${lookups.count} lookups for ${command.slice(0, 40)}…`,
    );
  }
  // Within the budget, the same kind of command is still proven read-only.
  const lookups = new Lookups();
  const small = await classifyCommand(lsCommand(10), await countedSession(lookups));
  assert.equal(small.readOnly, true, small.reason);
});

test("bash: a cancel during classification ends the call as cancelled, and no lookup follows it", async () => {
  const lookups = new Lookups();
  const toolset = finalizeToolset({ session: await countedSession(lookups) });
  const turn = new AbortController();
  let atAbort = 0;
  // Each operand is one lookup (it exists): the cancel comes while f2 is looked up.
  lookups.onLookup = (path) => {
    if (path === "/repo/f2") {
      turn.abort();
      atAbort = lookups.count;
    }
  };
  let asked = false;
  const result = await toolset.call({
    name: "bash",
    input: { command: lsCommand(10) },
    callId: "cancelled",
    signal: turn.signal,
    approve: () => {
      asked = true;
      return Promise.resolve(true);
    },
  });
  assert.equal(result.error?.code, "cancelled", result.output);
  assert.equal(asked, false, "a cancelled classification reaches no approval");
  assert.equal(lookups.last, "/repo/f2");
  assert.equal(lookups.count, atAbort, "the classification stopped at the lookup under way");

  // prepare() alone: a prepared call that is a cancelled failure, the same way.
  const again = new AbortController();
  lookups.onLookup = (path) => {
    if (path === "/repo/f5") {
      again.abort();
      atAbort = lookups.count;
    }
  };
  const prepared = await toolset.prepare("bash", { command: lsCommand(10) }, {
    signal: again.signal,
  });
  assert.equal(prepared.ok, false);
  assert.equal(!prepared.ok && prepared.error.code, "cancelled");
  assert.equal(lookups.count, atAbort);
  // A deadline that passes during classification makes it timed_out.
  const late = new AbortController();
  lookups.onLookup = (path) => {
    if (path === "/repo/f1") late.abort(new DOMException("past", "TimeoutError"));
  };
  const timed = await toolset.prepare("bash", { command: lsCommand(10) }, { signal: late.signal });
  assert.equal(!timed.ok && timed.error.code, "timed_out");
});

test("bash: classifyCommand throws the signal's reason when it aborts between lookups", async () => {
  const lookups = new Lookups();
  const session = await countedSession(lookups);
  const controller = new AbortController();
  const reason = new Error("stop here");
  lookups.onLookup = (path) => {
    if (path === "/repo/f3") controller.abort(reason);
  };
  await assert.rejects(
    classifyCommand(lsCommand(10), session, { signal: controller.signal }),
    reason,
  );
  assert.equal(lookups.last, "/repo/f3");
});

test("adapters: the approval check of a 94 KB command answers that it asks, without classifying its operands", async () => {
  const lookups = new Lookups();
  const toolset: FinalizedToolset = finalizeToolset({ session: await countedSession(lookups) });
  const aiSdk = toAISDKTools(toolset).bash.needsApproval!;
  assert.equal(await aiSdk({ command: LONG_COMMAND }, { toolCallId: "a" }), true);
  const agents = toOpenAIAgentsTools(toolset).find((t) => t.name === "bash")!;
  assert.equal(await agents.needsApproval({}, { command: LONG_COMMAND }, "b"), true);
  // A command too long to start is not asked about: the call fails as invalid_input.
  assert.equal(await aiSdk({ command: TWO_MB }, { toolCallId: "c" }), false);
  assert.equal(await agents.needsApproval({}, { command: TWO_MB }, "d"), false);
  assert.equal(lookups.count, 0);
});

test("grep: a pattern longer than the bound is invalid_input naming the bound", async () => {
  const toolset = finalizeToolset({ session: await countedSession(new Lookups()) });
  for (const length of [MAX_PATTERN_LENGTH + 1, 1024 * 1024]) {
    const result = await toolset.call({
      name: "grep",
      input: { pattern: "a".repeat(length) },
      callId: "long",
    });
    assert.equal(result.error?.code, "invalid_input", result.output.slice(0, 200));
    assert.match(
      result.output,
      new RegExp(`pattern: at most ${MAX_PATTERN_LENGTH} characters, not ${length}`),
    );
  }
  // At the bound it runs.
  const atBound = await toolset.call({
    name: "grep",
    input: { pattern: "a".repeat(MAX_PATTERN_LENGTH) },
    callId: "at",
  });
  assert.equal(atBound.ok, true, atBound.output.slice(0, 200));
  // The schema the model sees carries the bound.
  const grep = toolset.definitions.find((d) => d.name === "grep")!;
  const pattern = grep.inputSchema.properties.pattern as { maxLength?: number };
  assert.equal(pattern.maxLength, MAX_PATTERN_LENGTH);
  assert.match(grep.description, new RegExp(`${MAX_PATTERN_LENGTH} characters`));
});

test("grep: a short pattern whose counted repetitions expand past the bound is invalid_input naming it", async () => {
  const toolset = finalizeToolset({ session: await countedSession(new Lookups()) });
  for (
    const pattern of [
      "a{1000}".repeat(30), // 30,000 instructions from 210 characters
      "(?:x{100}){10}".repeat(11),
      "\\pL{200}", // a Unicode class counts as 100
      "(?i)[\\x{100}-\\x{1E900}][\\x{100}-\\x{1E900}][\\x{100}-\\x{1E900}]", // wide folded ranges
    ]
  ) {
    const result = await toolset.call({ name: "grep", input: { pattern }, callId: "rep" });
    assert.equal(result.error?.code, "invalid_input", `${pattern}: ${result.output.slice(0, 200)}`);
    assert.match(result.output, new RegExp(`the most is ${MAX_PATTERN_PROGRAM}`), pattern);
  }
  // Real searches with counted repetitions stay well inside it.
  for (const pattern of ["[0-9a-f]{40}", "^.{1000,}$", "\\d{4}-\\d{2}-\\d{2}", "[\\pL\\pN_]+"]) {
    const result = await toolset.call({ name: "grep", input: { pattern }, callId: "ok" });
    assert.equal(result.ok, true, `${pattern}: ${result.output.slice(0, 200)}`);
  }
});

test("grep and glob: a glob longer than the bound is invalid_input naming the bound", async () => {
  const toolset = finalizeToolset({ session: await countedSession(new Lookups()) });
  const long = "a".repeat(MAX_GLOB_LENGTH + 1);
  const grep = await toolset.call({
    name: "grep",
    input: { pattern: "x", glob: long },
    callId: "g",
  });
  assert.equal(grep.error?.code, "invalid_input");
  assert.match(grep.output, new RegExp(`glob: at most ${MAX_GLOB_LENGTH} characters`));
  const glob = await toolset.call({ name: "glob", input: { pattern: long }, callId: "h" });
  assert.equal(glob.error?.code, "invalid_input");
  assert.match(glob.output, new RegExp(`pattern: at most ${MAX_GLOB_LENGTH} characters`));
  // The matcher refuses it too, for hosts that call the search directly.
  assert.throws(() => globMatcher(long), new RegExp(`the most is ${MAX_GLOB_LENGTH}`));
});

/** Globs whose expressions backtrack past any bound on some names. */
const BACKTRACKING_GLOBS = [
  "*?".repeat(14) + "x",
  "*a".repeat(12) + "*b",
  "**/a/".repeat(6) + "b",
  "+(a*)b",
];

test("glob: a glob that would backtrack for seconds on each name ends at once, with the right answer", async () => {
  const memory = createMemoryFileSystem();
  memory.mkdirp("/repo/src");
  const names = [
    "component_name_file.tsx.map",
    "a".repeat(60),
    "ab".repeat(30),
    "x",
    "very_long_index",
  ];
  for (const name of names) {
    memory.writeFile(`/repo/${name}`, "\n");
    memory.writeFile(`/repo/src/${name}`, "\n");
  }
  memory.writeFile(`/repo/${"a/".repeat(30)}c`, "\n");
  const toolset = finalizeToolset({
    session: await createSession({ workingDirectory: "/repo", filesystem: memory }),
  });
  for (const pattern of BACKTRACKING_GLOBS) {
    const glob = await toolset.call({ name: "glob", input: { pattern }, callId: pattern });
    assert.equal(glob.ok, true, glob.output);
    const grep = await toolset.call({
      name: "grep",
      input: { pattern: "^$", glob: pattern },
      callId: pattern,
    });
    assert.equal(grep.ok, true, grep.output);
  }
  const found = await toolset.call({
    name: "glob",
    input: { pattern: "**/" + "*?".repeat(6) + "x" },
    callId: "found",
  });
  assert.equal(found.output, "src/very_long_index\nvery_long_index");
});

test("glob: a glob whose expression holds a backreference is invalid_input, not run on the backtracking engine", () => {
  assert.throws(() => globMatcher("(a)\\1*"), /pattern is not a valid glob: .*backreference/);
});

test("glob: expressions that can backtrack past a square of the input run on the linear engine, and agree with picomatch", () => {
  for (const pattern of BACKTRACKING_GLOBS) {
    const tree = parseRegex(picomatch.makeRe(pattern, { dot: true }).source);
    assert.equal(backtracksBounded(tree), false, pattern);
  }
  for (const pattern of ["**/*.ts", "*.md", "src/**", "src/{a,b}/*.md", "**/*.{ts,tsx}"]) {
    const tree = parseRegex(picomatch.makeRe(pattern, { dot: true }).source);
    assert.equal(backtracksBounded(tree), true, pattern);
  }
  const patterns = [
    "**/*.ts",
    "src/{a,b}/*.md",
    "*.ts",
    "a?c",
    "**",
    "src/**",
    "!(*.d).ts",
    "+(a|b).ts",
    "@(x|y)",
    "*(a)",
    "?(a).js",
    "[[:alpha:]]*",
    "[!a]*",
    "file[0-9].txt",
    "{1..3}.txt",
    "a/**/b",
    "*test*spec*",
    "\\*.md",
    "**/.git/**",
    "foo/",
    "./a",
    "!*.ts",
    "!**/x/**",
    "**/*.{ts,tsx}",
    "a/**/*",
    ".*",
    "**/.*",
    "*.[jt]s",
    "[^a-c]*",
    "**/test/**/*.ts",
    "?",
    "*/",
    "**/",
    "+(*.ts|*.md)",
    "[\\s]",
    "é*",
    "?.txt",
    "*.😀",
    "\\1..3", // JavaScript reads \1 with no group before it as an octal escape
    "a\\47*",
    "\\8\\c",
    ...BACKTRACKING_GLOBS,
  ];
  const paths = [
    "a",
    "a.ts",
    "src/a.ts",
    "src/a/x.md",
    "src/c/z.md",
    "x.d.ts",
    "abc",
    "a/c",
    ".git/x",
    "x/.git/y/z",
    ".hidden",
    "a/.hidden",
    "foo/",
    "a/x/y/b",
    "1.txt",
    "4.txt",
    "*.md",
    "mytestfilespec",
    "a/./b",
    "a/../b",
    "./a",
    "a//b",
    "..",
    "a\nb.ts",
    "\u2028.ts",
    "é1",
    "😀.txt",
    "a.😀",
    " ",
    "a b",
    "src/x/test/y/z.ts",
    "a.tsx",
    "b.js",
    "component_name_file.tsx.map",
    "aaab",
    "a/a/a/a/a/a/a/b",
    "\u0001..3",
    "a'x",
    "8c",
    "8\\c",
  ];
  for (const pattern of patterns) {
    for (const options of [{ dot: true, strictBrackets: true }, { dot: true }]) {
      const regex = picomatch.makeRe(pattern, options);
      const linear = RE2JS.compile(reversedRe2Source(parseRegex(regex.source)), RE2JS.LOOKBEHINDS);
      for (const path of paths) {
        // The backtracking globs are asked only about short names, where picomatch answers soon.
        if (BACKTRACKING_GLOBS.includes(pattern) && path.length > 12) continue;
        assert.equal(
          linear.test(re2Input(path)),
          regex.test(path),
          `${pattern} on ${JSON.stringify(path)}`,
        );
      }
    }
  }
});

/**
 * Globs whose expressions backtrack exponentially although they hold at
 * most two unbounded wildcards: choices combining inside a negated
 * extglob's lookahead, a repetition nested inside one, and an optional part
 * repeated (`(a)?a` takes one or two `a`s, so a run of them splits in a
 * Fibonacci number of ways).
 */
const HIDDEN_BACKTRACKING_GLOBS = [
  `!(${"@(a|a)".repeat(40)}b)`,
  "!((a|aa)+c)",
  "((a)?a)+c",
];

test("glob: choices inside a negated extglob and optional parts repeated run on the linear engine, with picomatch's answers", async () => {
  for (const pattern of HIDDEN_BACKTRACKING_GLOBS) {
    for (const options of [{ dot: true, strictBrackets: true }, { dot: true, basename: true }]) {
      const regex = picomatch.makeRe(pattern, options);
      const tree = parseRegex(regex.source);
      assert.equal(backtracksBounded(tree), false, pattern);
      const linear = RE2JS.compile(reversedRe2Source(tree), RE2JS.LOOKBEHINDS);
      // Short names, where picomatch's own expression answers soon.
      for (const name of ["a", "aab", "aac", "aaaaaaac", "ab", "c", "b", "aaaab", "x/aac"]) {
        assert.equal(linear.test(re2Input(name)), regex.test(name), `${pattern} on ${name}`);
      }
    }
  }
  const memory = createMemoryFileSystem();
  memory.mkdirp("/repo");
  for (
    const name of ["a".repeat(40) + "b", "a".repeat(60), "a".repeat(60) + "c", "a".repeat(59) + "b"]
  ) {
    memory.writeFile(`/repo/${name}`, "\n");
  }
  const toolset = finalizeToolset({
    session: await createSession({ workingDirectory: "/repo", filesystem: memory }),
  });
  // In walk order (code-unit order).
  const expected = [
    ["a".repeat(60), "a".repeat(60) + "c", "a".repeat(59) + "b"], // all but 40 a's and b
    ["a".repeat(60), "a".repeat(59) + "b", "a".repeat(40) + "b"], // all but (a|aa)+c
    ["a".repeat(60) + "c"],
  ];
  for (const [i, pattern] of HIDDEN_BACKTRACKING_GLOBS.entries()) {
    const glob = await toolset.call({ name: "glob", input: { pattern }, callId: `g${i}` });
    assert.deepEqual((glob.data as { paths: string[] } | undefined)?.paths, expected[i], pattern);
    const grep = await toolset.call({
      name: "grep",
      input: { pattern: "^$", glob: pattern },
      callId: `r${i}`,
    });
    assert.deepEqual(
      (grep.data as { files?: string[] } | undefined)?.files,
      expected[i],
      `grep --glob ${pattern}`,
    );
  }
});

test("glob: a quantified lookahead in picomatch's expression is read as JavaScript reads it, not refused", () => {
  // picomatch makes `(?!…)?` of this malformed glob, which JavaScript accepts (Annex B).
  const pattern = "!({{{}}())?))";
  const options = { dot: true, basename: true };
  assert.match(picomatch.makeRe(pattern, options).source, /\(\?!.*\)\?/);
  const filter = globFilter(`!${pattern}`); // grep's glob, negated
  const reference = picomatch(pattern, options);
  for (const name of ["a", "{{}})", "x/{{}}())", "))", "b.ts"]) {
    assert.equal(filter(name), !reference(name), name);
  }
  // Each quantifier over a lookahead, against JavaScript's own answers.
  for (
    const source of [
      "^(?:(?=a)*b)$",
      "^(?:(?=a)+a)$",
      "^(?:(?!a)?a)$",
      "^(?:(?!a)+a)$",
      "^(?:(?!a){2,3}b)$",
      "^(?:(?=ab)??a.)$",
    ]
  ) {
    const linear = RE2JS.compile(reversedRe2Source(parseRegex(source)), RE2JS.LOOKBEHINDS);
    for (const input of ["", "a", "b", "ab", "aa", "ba"]) {
      assert.equal(linear.test(re2Input(input)), new RegExp(source).test(input), source + input);
    }
  }
});

test("read, list and write: a path thousands of segments deep costs a few dozen lookups, and resolves as before", async () => {
  const lookups = new Lookups();
  const session = await countedSession(lookups);
  const toolset = finalizeToolset({ session, select: ["read", "list", "write"] });
  const deep = Array(2000).fill("a").join("/");
  for (const name of ["read", "list"]) {
    lookups.count = 0;
    const result = await toolset.call({ name, input: { path: deep }, callId: name });
    assert.equal(result.error?.code, "not_found", result.output.slice(0, 100));
    assert.ok(lookups.count <= 64, `${name}: ${lookups.count} lookups`);
  }
  // The longest existing prefix is still found wherever it ends.
  const made = Array(37).fill("d").join("/");
  for (const depth of [0, 1, 5, 6, 7, 9, 20, 36]) {
    const path = `${Array(depth + 1).fill("d").join("/")}/new${depth}.txt`;
    const written = await toolset.call({
      name: "write",
      input: { path, content: `${depth}\n` },
      callId: "w",
      approve: () => Promise.resolve(true),
    });
    assert.equal(written.ok, true, written.output);
  }
  lookups.count = 0;
  const read = await toolset.call({
    name: "read",
    input: { path: `${made}/new36.txt` },
    callId: "r",
  });
  assert.equal(read.ok, true, read.output);
  const missing = await toolset.call({
    name: "read",
    input: { path: `${made}/x/${deep.slice(0, 3000)}` },
    callId: "m",
  });
  assert.equal(missing.error?.code, "not_found");
  assert.ok(lookups.count <= 64, `${lookups.count} lookups`);
  const climbing = await toolset.call({
    name: "write",
    input: { path: `${made}/x/y/../z.txt`, content: "" },
    callId: "c",
    approve: () => Promise.resolve(true),
  });
  assert.equal(climbing.error?.code, "invalid_path");
  assert.match(climbing.output, /climbs with '\.\.' through a directory that does not exist/);
});
