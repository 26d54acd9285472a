/**
 * The conformance baseline: a run's verdicts, their comparison with the
 * checked-in baseline, its update and its file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  type Baseline,
  BaselineError,
  compareWithBaseline,
  formatDifferences,
  parseBaseline,
  REASON_TO_WRITE,
  requiredServerScenarios,
  tallyChecks,
  unwrittenReasons,
  updatedBaseline,
  verdicts,
} from "./conformance_baseline.ts";

const REVISION = "2025-11-25";

/** A baseline expecting `tools-call-image` to fail and nothing else. */
const baseline: Baseline = {
  suite: "@modelcontextprotocol/conformance@1",
  revisions: {
    [REVISION]: {
      "tools-call-image:tools-call-image": { status: "FAILURE", reason: "fixture not offered" },
    },
  },
};

/** A run where `ping` gets `ping` and `image` gets `tools-call-image`. */
function runWith(ping: string, image: string) {
  return verdicts([
    { scenario: "ping", checks: [{ id: "ping", status: ping, errorMessage: "no pong" }] },
    {
      scenario: "tools-call-image",
      checks: [
        { id: "tools-call-image", status: image },
        { id: "wire-schema-valid", status: "SUCCESS" },
      ],
    },
  ]);
}

test("conformance: a run with the baseline's failures and nothing else agrees", () => {
  assert.deepEqual(compareWithBaseline(baseline, REVISION, runWith("SUCCESS", "FAILURE")), []);
});

test("conformance: a check that passed and now fails is a regression", () => {
  const differences = compareWithBaseline(baseline, REVISION, runWith("FAILURE", "FAILURE"));
  assert.deepEqual(differences, [{
    revision: REVISION,
    key: "ping:ping",
    expected: "SUCCESS",
    actual: "FAILURE",
    message: "no pong",
  }]);
  assert.match(formatDifferences(differences), /now fail \(regressions\):\n.*ping:ping/);
});

test("conformance: a check the baseline lists as failing that passes is a difference that asks for an update", () => {
  const differences = compareWithBaseline(baseline, REVISION, runWith("SUCCESS", "SUCCESS"));
  assert.deepEqual(differences.map((d) => [d.key, d.expected, d.actual]), [
    ["tools-call-image:tools-call-image", "FAILURE", "SUCCESS"],
  ]);
  assert.match(formatDifferences(differences), /now pass \(update the baseline\)/);
});

test("conformance: a listed check the run does not report, or one whose status changes, is a difference", () => {
  const absent = compareWithBaseline(
    baseline,
    REVISION,
    verdicts([{ scenario: "ping", checks: [{ id: "ping", status: "SUCCESS" }] }]),
  );
  assert.deepEqual(absent.map((d) => [d.key, d.actual]), [
    ["tools-call-image:tools-call-image", "absent"],
  ]);
  const warned = compareWithBaseline(baseline, REVISION, runWith("SUCCESS", "WARNING"));
  assert.deepEqual(warned.map((d) => [d.key, d.expected, d.actual]), [
    ["tools-call-image:tools-call-image", "FAILURE", "WARNING"],
  ]);
});

test("conformance: repeats of a check id collapse to the most severe; notes count as passes", () => {
  const run = verdicts([{
    scenario: "server-stateless",
    checks: [
      { id: "error-id", status: "SUCCESS" },
      { id: "error-id", status: "FAILURE", errorMessage: "got null" },
      { id: "error-id", status: "SUCCESS" },
      { id: "outgoing-request", status: "INFO" },
    ],
  }]);
  assert.deepEqual(run.get("server-stateless:error-id"), {
    status: "FAILURE",
    message: "got null",
  });
  const differences = compareWithBaseline({ suite: "s", revisions: {} }, REVISION, run);
  assert.deepEqual(differences.map((d) => d.key), ["server-stateless:error-id"]);
});

test("conformance: the update keeps the reasons of entries that stay and marks new ones", () => {
  const next = updatedBaseline(baseline, "@modelcontextprotocol/conformance@2", {
    [REVISION]: runWith("WARNING", "FAILURE"),
  });
  assert.deepEqual(next, {
    suite: "@modelcontextprotocol/conformance@2",
    revisions: {
      [REVISION]: {
        "ping:ping": { status: "WARNING", reason: REASON_TO_WRITE },
        "tools-call-image:tools-call-image": { status: "FAILURE", reason: "fixture not offered" },
      },
    },
  });
  assert.deepEqual(unwrittenReasons(next), [`${REVISION} ping:ping`]);
  assert.deepEqual(unwrittenReasons(baseline), []);
});

test("conformance: a baseline file that is not JSON or not a baseline is refused with what is wrong", () => {
  assert.equal(parseBaseline(JSON.stringify(baseline)).suite, baseline.suite);
  assert.throws(() => parseBaseline("{"), BaselineError);
  assert.throws(() => parseBaseline('{"revisions":{}}'), /needs "suite"/);
  assert.throws(
    () =>
      parseBaseline(JSON.stringify({
        suite: "s",
        revisions: { [REVISION]: { "ping:ping": { status: "PASS", reason: "x" } } },
      })),
    /2025-11-25 ping:ping: an entry is/,
  );
});

test("conformance: the counts are the suite's (every occurrence), over all or the required scenarios", () => {
  const results = [
    { scenario: "ping", checks: [{ id: "ping", status: "SUCCESS" }] },
    {
      scenario: "server-sse-polling",
      checks: [
        { id: "a", status: "FAILURE" },
        { id: "a", status: "FAILURE" },
        { id: "b", status: "WARNING" },
        { id: "c", status: "INFO" },
      ],
    },
  ];
  assert.deepEqual(tallyChecks(results), { passed: 1, failed: 2, warnings: 1 });
  assert.deepEqual(tallyChecks(results, new Set(["ping"])), { passed: 1, failed: 0, warnings: 0 });
});

test("conformance: the required server scenarios are the requirement file's top-level server list", () => {
  const yaml = [
    "# server: not this",
    "server:",
    "  - server-initialize",
    "  - ping # a comment",
    "",
    "client:",
    "  - initialize",
    "not_scored:",
    "  - scenario: server-sse-polling",
    "    leg: server",
  ].join("\n");
  assert.deepEqual([...requiredServerScenarios(yaml)], ["server-initialize", "ping"]);
});
