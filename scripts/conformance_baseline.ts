/**
 * The conformance suite's results for one protocol revision, and the
 * checked-in baseline they are compared with: every check that does not pass,
 * with its status and the reason it does not. A check that starts failing is a
 * regression; a check listed as failing that passes means the baseline is to
 * be updated. Both are differences, and either fails the run.
 *
 * @module
 */

/** The statuses the suite gives a check. */
export type CheckStatus = "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";

/** The statuses a baseline lists: every verdict but a pass. */
export type ExpectedStatus = "FAILURE" | "WARNING" | "SKIPPED";

/** One check as the suite writes it to a scenario's `checks.json`. */
export interface SuiteCheck {
  /** The check's id; ids repeat within a scenario (a loop, a retried flow). */
  readonly id: string;
  /** What the suite found. */
  readonly status: string;
  /** Why it failed, when it did. */
  readonly errorMessage?: string;
}

/** One scenario's checks, as one run of the suite reported them. */
export interface ScenarioResult {
  /** The scenario's name, e.g. `tools-list`. */
  readonly scenario: string;
  /** Its checks, in the suite's order. */
  readonly checks: readonly SuiteCheck[];
}

/** The verdict on one check id of a scenario: its repeats collapsed, most severe first. */
export interface Verdict {
  /** The most severe status among the id's occurrences. */
  readonly status: CheckStatus;
  /** The error message of the occurrence that gave the status. */
  readonly message?: string;
}

/** One expected non-pass in the baseline. */
export interface ExpectedFailure {
  /** The verdict the check is expected to get. */
  readonly status: ExpectedStatus;
  /** Why it does not pass, in one line. */
  readonly reason: string;
}

/** The checked-in baseline: per revision, each check that does not pass, keyed `scenario:check-id`. */
export interface Baseline {
  /** The suite the baseline was taken with, `name@version`. */
  readonly suite: string;
  /** Per revision (`2025-11-25`, `2026-07-28`), the expected non-passes. */
  readonly revisions: Readonly<Record<string, Readonly<Record<string, ExpectedFailure>>>>;
}

/** One way a run differs from the baseline. */
export interface Difference {
  /** The revision whose run differs. */
  readonly revision: string;
  /** The check, `scenario:check-id`. */
  readonly key: string;
  /** What the baseline expects: a listed status, or `SUCCESS` for a check it does not list. */
  readonly expected: CheckStatus;
  /** What the run found; `absent` for a listed check the run did not report. */
  readonly actual: CheckStatus | "absent";
  /** The suite's error message, when the run gave one. */
  readonly message?: string;
}

/** The reason a new baseline entry gets until someone writes the real one. */
export const REASON_TO_WRITE = "reason to write";

/** How severe a status is: repeats of an id collapse to the most severe. */
const SEVERITY: Readonly<Record<CheckStatus, number>> = {
  FAILURE: 4,
  WARNING: 3,
  SUCCESS: 2,
  SKIPPED: 1,
  INFO: 0,
};

/** Whether `status` is one the suite gives; an unknown one counts as a failure. */
function knownStatus(status: string): CheckStatus {
  return status in SEVERITY ? status as CheckStatus : "FAILURE";
}

/** Whether a verdict is listed in a baseline: anything but a pass or a mere note. */
function listed(status: CheckStatus): status is ExpectedStatus {
  return status === "FAILURE" || status === "WARNING" || status === "SKIPPED";
}

/**
 * The verdicts of a run, keyed `scenario:check-id`, each id's occurrences
 * collapsed to the most severe (as the suite's own expected-failures do).
 *
 * @example
 * ```ts
 * const verdict = verdicts([{ scenario: "ping", checks: [{ id: "ping", status: "SUCCESS" }] }]);
 * console.log(verdict.get("ping:ping")?.status); // SUCCESS
 * ```
 */
export function verdicts(results: readonly ScenarioResult[]): Map<string, Verdict> {
  const found = new Map<string, Verdict>();
  for (const { scenario, checks } of results) {
    for (const check of checks) {
      const key = `${scenario}:${check.id}`;
      const status = knownStatus(check.status);
      const before = found.get(key);
      if (before !== undefined && SEVERITY[before.status] >= SEVERITY[status]) continue;
      found.set(key, check.errorMessage ? { status, message: check.errorMessage } : { status });
    }
  }
  return found;
}

/** A run's counts of checks, as the suite counts them (every occurrence). */
export interface Tally {
  /** Checks that passed. */
  readonly passed: number;
  /** Checks that failed. */
  readonly failed: number;
  /** Checks that found a SHOULD unmet. */
  readonly warnings: number;
}

/**
 * Counts the checks of `results` (of the scenarios in `only`, when given), as
 * the suite's summary does.
 *
 * @example
 * ```ts
 * const tally = tallyChecks([{ scenario: "ping", checks: [{ id: "ping", status: "SUCCESS" }] }]);
 * console.log(tally.passed); // 1
 * ```
 */
export function tallyChecks(
  results: readonly ScenarioResult[],
  only?: ReadonlySet<string>,
): Tally {
  let passed = 0, failed = 0, warnings = 0;
  for (const { scenario, checks } of results) {
    if (only !== undefined && !only.has(scenario)) continue;
    for (const check of checks) {
      if (check.status === "SUCCESS") passed++;
      else if (check.status === "FAILURE") failed++;
      else if (check.status === "WARNING") warnings++;
    }
  }
  return { passed, failed, warnings };
}

/**
 * How the run of `revision` differs from what `baseline` expects of it: checks
 * that do not pass and are not listed (or listed with another status), and
 * listed checks that pass or were not reported.
 *
 * @example
 * ```ts
 * const baseline = { suite: "s@1", revisions: { "2025-11-25": {} } };
 * const run = verdicts([{ scenario: "ping", checks: [{ id: "ping", status: "FAILURE" }] }]);
 * console.log(compareWithBaseline(baseline, "2025-11-25", run)[0].key); // ping:ping
 * ```
 */
export function compareWithBaseline(
  baseline: Baseline,
  revision: string,
  run: ReadonlyMap<string, Verdict>,
): Difference[] {
  const expected = baseline.revisions[revision] ?? {};
  const differences: Difference[] = [];
  for (const [key, verdict] of run) {
    const wanted: CheckStatus = expected[key]?.status ?? "SUCCESS";
    const got = listed(verdict.status) ? verdict.status : "SUCCESS";
    if (got === wanted) continue;
    differences.push({
      revision,
      key,
      expected: wanted,
      actual: verdict.status,
      ...(verdict.message ? { message: verdict.message } : {}),
    });
  }
  for (const [key, entry] of Object.entries(expected)) {
    if (!run.has(key)) {
      differences.push({ revision, key, expected: entry.status, actual: "absent" });
    }
  }
  return differences.sort((a, b) => a.key.localeCompare(b.key));
}

/**
 * The baseline `runs` call for: every check that does not pass, keeping the
 * reasons `previous` gives for checks still listed with the same status, and
 * {@link REASON_TO_WRITE} for the others.
 *
 * @example
 * ```ts
 * const previous = { suite: "s@1", revisions: {} };
 * const run = verdicts([{ scenario: "ping", checks: [{ id: "ping", status: "FAILURE" }] }]);
 * const next = updatedBaseline(previous, "s@1", { "2025-11-25": run });
 * console.log(next.revisions["2025-11-25"]["ping:ping"].reason); // reason to write
 * ```
 */
export function updatedBaseline(
  previous: Baseline,
  suite: string,
  runs: Readonly<Record<string, ReadonlyMap<string, Verdict>>>,
): Baseline {
  const revisions: Record<string, Record<string, ExpectedFailure>> = {};
  for (const [revision, run] of Object.entries(runs)) {
    const before = previous.revisions[revision] ?? {};
    const entries: Record<string, ExpectedFailure> = {};
    for (const key of [...run.keys()].sort()) {
      const { status } = run.get(key)!;
      if (!listed(status)) continue;
      const kept = before[key]?.status === status ? before[key].reason : REASON_TO_WRITE;
      entries[key] = { status, reason: kept };
    }
    revisions[revision] = entries;
  }
  return { suite, revisions };
}

/** A baseline file that cannot be used: the message says what is wrong in it. */
export class BaselineError extends Error {
  /** The error's name, stable for callers that tell errors apart. */
  override readonly name = "BaselineError";
}

/**
 * Reads a baseline from its JSON text, checking its shape.
 *
 * @throws {BaselineError} when the text is not JSON or not a baseline.
 * @example
 * ```ts
 * const baseline = parseBaseline('{"suite":"s@1","revisions":{}}');
 * console.log(baseline.suite); // s@1
 * ```
 */
export function parseBaseline(text: string): Baseline {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new BaselineError(`the baseline is not JSON: ${(error as Error).message}`);
  }
  const object = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (!object(value) || typeof value.suite !== "string" || !object(value.revisions)) {
    throw new BaselineError('the baseline needs "suite" (a string) and "revisions" (an object)');
  }
  for (const [revision, entries] of Object.entries(value.revisions)) {
    if (!object(entries)) throw new BaselineError(`revision ${revision}: not an object`);
    for (const [key, entry] of Object.entries(entries)) {
      if (
        !object(entry) || typeof entry.reason !== "string" || typeof entry.status !== "string" ||
        !listed(entry.status as CheckStatus)
      ) {
        throw new BaselineError(
          `${revision} ${key}: an entry is { "status": "FAILURE" | "WARNING" | "SKIPPED", "reason": "…" }`,
        );
      }
    }
  }
  return value as unknown as Baseline;
}

/**
 * The entries of `baseline` whose reason is still {@link REASON_TO_WRITE}, as
 * `revision scenario:check-id`.
 *
 * @example
 * ```ts
 * const baseline = {
 *   suite: "s@1",
 *   revisions: { "2025-11-25": { "ping:ping": { status: "FAILURE", reason: "reason to write" } } },
 * } as const;
 * console.log(unwrittenReasons(baseline)); // ["2025-11-25 ping:ping"]
 * ```
 */
export function unwrittenReasons(baseline: Baseline): string[] {
  return Object.entries(baseline.revisions).flatMap(([revision, entries]) =>
    Object.entries(entries)
      .filter(([, entry]) => entry.reason.trim() === "" || entry.reason === REASON_TO_WRITE)
      .map(([key]) => `${revision} ${key}`)
  );
}

/**
 * The differences as lines to print: regressions first, then checks that now
 * pass, then the rest, each with what the baseline expected and what ran.
 *
 * @example
 * ```ts
 * console.log(formatDifferences([
 *   { revision: "2025-11-25", key: "ping:ping", expected: "SUCCESS", actual: "FAILURE" },
 * ]));
 * ```
 */
export function formatDifferences(differences: readonly Difference[]): string {
  const regressions = differences.filter((d) =>
    d.actual !== "absent" && SEVERITY[d.actual] > SEVERITY[d.expected]
  );
  const passing = differences.filter((d) => d.actual === "SUCCESS" || d.actual === "INFO");
  const other = differences.filter((d) => !regressions.includes(d) && !passing.includes(d));
  const line = (d: Difference) =>
    `  ${d.revision} ${d.key}: expected ${d.expected}, got ${d.actual}` +
    (d.message ? ` (${d.message.replace(/\s+/g, " ").slice(0, 200)})` : "");
  const parts: string[] = [];
  if (regressions.length > 0) {
    parts.push("Checks that now fail (regressions):", ...regressions.map(line));
  }
  if (passing.length > 0) {
    parts.push(
      "Checks the baseline lists as not passing that now pass (update the baseline):",
      ...passing.map(line),
    );
  }
  if (other.length > 0) {
    parts.push(
      "Checks whose verdict changed otherwise, or that were not reported:",
      ...other.map(line),
    );
  }
  return parts.join("\n");
}

/**
 * The server scenarios a requirement file of the suite
 * (`requirements/<revision>.yaml`) lists as required: its top-level `server:`
 * list (the `not_scored` ones run but do not count).
 *
 * @example
 * ```ts
 * console.log(requiredServerScenarios("server:\n  - ping\nclient:\n  - initialize\n")); // Set { "ping" }
 * ```
 */
export function requiredServerScenarios(yaml: string): Set<string> {
  const required = new Set<string>();
  let inServer = false;
  for (const line of yaml.split("\n")) {
    if (/^\S/.test(line) && !line.startsWith("#")) inServer = /^server:\s*$/.test(line);
    else if (inServer) {
      const item = /^\s+-\s+([^\s#]+)/.exec(line);
      if (item !== null) required.add(item[1]);
    }
  }
  return required;
}
