/**
 * The read-only classifier against bash itself: generated lines the
 * classifier calls read-only are run by real bash with recording stubs (see
 * `shell_oracle.ts`), and what bash ran must be exactly what the classifier
 * read. A first test shows that the oracle records what it should and
 * catches a known difference, so that a clean run means something.
 *
 * The seed changes daily; set CLASSIFIER_ORACLE_SEED to replay a run.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import {
  type ClassifierReading,
  createBashOracle,
  dailySeed,
  disagreement,
  formatDifference,
  generateLines,
  runOracle,
} from "./shell_oracle.ts";

const GENERATED_LINES = 5000;

test("classifier oracle: bash records exactly what it runs, and a wrong reading is caught", async () => {
  const oracle = await createBashOracle();
  try {
    const cases: [string, string[][]][] = [
      ["ls -la", [["ls", "-la"]]],
      [`cat 'a b' "c"`, [["cat", "a b", "c"]]],
      ["ls\npwd", [["ls"], ["pwd"]]],
      ["grep -rn TODO src | wc -l", [["grep", "-rn", "TODO", "src"], ["wc", "-l"]]],
      // Builtins run as stubs too, on both sides of && and || (stubs exit 0, then 1).
      ["echo hi && true || false", [["echo", "hi"], ["false"], ["true"]]],
      // A program with no stub, a builtin and a keyword's command are all recorded.
      ["ls\n\\rm -rf victim", [["ls"], ["rm", "-rf", "victim"]]],
      ["cd dir; eval 'touch x'", [["cd", "dir"], ["eval", "touch x"]]],
      ["if true; then exec cat a.txt; fi", [["exec", "cat", "a.txt"], ["true"]]],
      // The layout gives globs and tilde something to expand to.
      ["ls *.ts ~/dir", [["ls", "b.ts", `${oracle.workingDirectory}/dir`]]],
      ["ls; ls", [["ls"], ["ls"]]],
    ];
    for (const [line, expected] of cases) {
      const execution = await oracle.run(line);
      assert.deepEqual(execution.problems, [], JSON.stringify(line));
      assert.deepEqual(execution.recorded, expected, JSON.stringify(line));
    }
    // Alternatives: each `whoami` runs in one of the two runs, so a reading of both agrees,
    // while a reading of three, or of an `x` never run, does not.
    const alternatives = await oracle.run("false && whoami || whoami");
    assert.deepEqual(alternatives.byStatus, [[["false"], ["whoami"]], [["false"], ["whoami"]]]);
    assert.equal(disagreement([["false"], ["whoami"], ["whoami"]], alternatives), null);
    assert.match(
      disagreement([["false"], ["whoami"], ["whoami"], ["whoami"]], alternatives) ?? "",
      /read 3 times, ran 2 in all/,
    );
    assert.match(
      disagreement([["false"], ["whoami"], ["x"]], alternatives) ?? "",
      /\["x"\] was read but never ran/,
    );
    // A file made by the line is reported, and the next line starts from the layout again.
    const written = await oracle.run("echo x > made.txt");
    assert.deepEqual(written.recorded, [["echo", "x"]]);
    assert.match(written.problems.join("\n"), /created "work\/made.txt"/);
    assert.deepEqual((await oracle.run("ls")).problems, []);
    // Output from bash (here a syntax error) is reported.
    assert.match((await oracle.run("ls )")).problems.join("\n"), /bash printed/);
  } finally {
    await oracle.close();
  }

  // The real classifier on plain lines: all read-only, no difference.
  const plain = [
    "ls -la",
    `cat 'a b' "c"`,
    "ls\npwd",
    "grep -rn TODO src | wc -l",
    "cat a\\ b",
    "false && whoami || whoami",
  ];
  const clean = await runOracle(plain);
  assert.equal(clean.executed, plain.length, "every plain line is called read-only");
  assert.deepEqual(clean.differences.map(formatDifference), []);

  // A classifier that missed the newline before `\rm` is caught.
  const wrong = (line: string): Promise<ClassifierReading> =>
    Promise.resolve({ readOnly: true, commands: line.startsWith("ls\n") ? [["ls"]] : [] });
  const caught = await runOracle(["ls\n\\rm -rf victim"], { classify: wrong });
  assert.equal(caught.differences.length, 1);
  assert.deepEqual(caught.differences[0].classifier, [["ls"]]);
  assert.deepEqual(caught.differences[0].recorded, [["ls"], ["rm", "-rf", "victim"]]);
});

test(
  `classifier: bash itself runs exactly the commands the classifier read (${
    GENERATED_LINES.toLocaleString("en-US")
  } generated lines)`,
  async () => {
    const seed = Number(process.env.CLASSIFIER_ORACLE_SEED ?? dailySeed());
    const report = await runOracle(generateLines(seed, GENERATED_LINES));
    console.log(
      `classifier oracle: seed ${seed}, ${report.lines} lines, ${report.readOnly} read-only, ` +
        `${report.runs} bash runs, ${report.differences.length} differences, ` +
        `${Math.round(report.elapsedMs)} ms`,
    );
    // The generator is meant to make about half its lines plain enough to run.
    assert.ok(
      report.executed >= GENERATED_LINES / 4,
      `only ${report.executed} lines executed`,
    );
    assert.equal(
      report.differences.length,
      0,
      `seed ${seed} (CLASSIFIER_ORACLE_SEED=${seed} replays it):\n` +
        report.differences.slice(0, 5).map(formatDifference).join("\n\n"),
    );
  },
);
