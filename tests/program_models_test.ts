/**
 * The argument models of the read-only classifier (`src/permissions/programs.ts`)
 * against the installed programs: each program's own option parser is the
 * oracle for how each option of its model takes its value.
 *
 * Each option is given to the real program in the few ways its parser
 * answers differently for an option that takes no value, a required value or
 * an optional one:
 *
 * - `--name` as the last word: a required value is missing ("requires an
 *   argument"); an unknown name is "unrecognized".
 * - `--name=x`: an option that takes no value "doesn't allow an argument".
 * - `-X` as the last word: a required value is missing.
 * - `-X%`: for an option that takes no value `%` is the next option of the
 *   cluster, and no program has a `-%`, so getopt says "invalid option --
 *   '%'"; an option that takes a value, optional or required, takes `%` as
 *   that value. This is also how the obsolete `head -5c FILE` shows: `-5`
 *   takes the rest of its word, as an optional value would. An option that
 *   ends the program inside its option loop (`cmp -v` prints the version,
 *   `id -Z` fails without SELinux) never lets the parser reach the `%`: when
 *   `-X` and `-X%` end alike, no value and an optional one cannot be told
 *   apart, and the test says so in a note instead of failing.
 * - `zzz -%`: a permuting parser still sees the option after an operand, a
 *   POSIX-mode one (`+`, getopts) does not.
 *
 * Only options of the models are given, with the values `x` and `%`, and no
 * operand except `zzz`; date gets no operand at all. Each probe runs in an
 * empty directory nobody may write to, with standard input from /dev/null,
 * standard output discarded, the C locale and a bare environment, under a
 * timeout (`tail -f` waits for ever: a probe still running is an option
 * accepted), and as the unprivileged user 65534 (setpriv) when the test runs
 * as root. One bash runs a few dozen probes of a program, two at a time.
 *
 * Parser dialects: GNU getopt_long (coreutils, grep, diffutils, file, the
 * util-linux programs); `sh` getopts for Debian's `which` (a shell script:
 * "Illegal option -X", "No arg for -X option"); clap 2 for ripgrep 13 ("Found
 * argument '--x' which wasn't expected", "requires a value but none was
 * supplied"). clap 2 accepts `--flag=x` for a flag and ignores the value (the
 * model's refusal only refuses what rg would run), so a long option takes a
 * value when `--name=x` draws a complaint about the value of `'--name <…>'`;
 * one that also runs without a value has a default (`--engine`), and takes
 * the next word as its value unless that starts with `-`, which the model's
 * optional `name[=]` reads as an operand, checked like any other.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { OptionSyntax, ValueKind } from "../src/permissions/arguments.ts";
import { GATE_PROGRAMS, READ_ONLY_PROGRAMS } from "../src/permissions/programs.ts";

/** Seconds a probe may run before it counts as accepted. */
const TIMEOUT_SECONDS = 3;
/** Batches of probes run at once. */
const PARALLEL = 2;
/** Probes in one bash, about. */
const BATCH_PROBES = 40;
/** The unprivileged user and group the probes run as when the test runs as root. */
const NOBODY = "65534";
const ENV = { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", LC_ALL: "C" };

/** What a probe left behind. */
interface Outcome {
  readonly args: readonly string[];
  readonly stderr: string;
  readonly status: number;
  /** Still running at the timeout, and killed. */
  readonly timedOut: boolean;
}

type Observed = ValueKind | "unknown" | "inconsistent" | "undetermined";

/** How a program's parser reports what the probes look for. */
interface Dialect {
  /** Words before the option (rg needs its pattern first, or it complains of that instead). */
  readonly prefix: readonly string[];
  /** What `--name` and `--name=x` say of how the long option takes its value. */
  long(name: string, bare: Outcome, attached: Outcome): Observed;
  /** Whether stderr says that `-X` is not an option. */
  unknownShort(letter: string, stderr: string): boolean;
  /** Whether stderr says that `-X` is missing its value. */
  needsValueShort(letter: string, stderr: string): boolean;
}

const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** glibc getopt_long, and the messages of `sh` getopts (dash) and bash's getopts. */
const GETOPT: Dialect = {
  prefix: [],
  long(name, bare, attached) {
    const n = quote(name);
    const unknown = new RegExp(
      `unrecognized option '--${n}(=[^']*)?'|option '--${n}(=[^']*)?' is ambiguous`,
    );
    if (unknown.test(bare.stderr) || unknown.test(attached.stderr)) return "unknown";
    const needs = new RegExp(`option '--${n}' requires an argument`).test(bare.stderr);
    const refuses = new RegExp(`option '--${n}' doesn't allow an argument`).test(attached.stderr);
    if (needs) return refuses ? "inconsistent" : "required";
    return refuses ? "none" : "optional";
  },
  unknownShort: (c, stderr) =>
    new RegExp(
      `invalid option -- '${quote(c)}'|Illegal option -${quote(c)}|illegal option -- ${quote(c)}`,
    ).test(stderr),
  needsValueShort: (c, stderr) =>
    new RegExp(`option requires an argument -- '?${quote(c)}'?|No arg for -${quote(c)} option`)
      .test(stderr),
};

const CLAP_NEEDS_VALUE = /requires a value but none was supplied|requires \d+ values?, but 0 were/;

/** clap 2, as in ripgrep 13. */
const CLAP2: Dialect = {
  prefix: ["zzz"],
  long(name, bare, attached) {
    const n = quote(name);
    const unknown = new RegExp(`Found argument '--${n}(=[^']*)?' which wasn't expected`);
    if (unknown.test(bare.stderr) || unknown.test(attached.stderr)) return "unknown";
    if (CLAP_NEEDS_VALUE.test(bare.stderr)) return "required";
    // `--flag=x` runs as `--flag`; an option with a value (and a default) complains of `x`.
    return new RegExp(`'--${n} <`).test(attached.stderr) ? "optional" : "none";
  },
  unknownShort: (c, stderr) =>
    new RegExp(`Found argument '-${quote(c)}' which wasn't expected`).test(stderr),
  needsValueShort: (_c, stderr) => CLAP_NEEDS_VALUE.test(stderr),
};

/**
 * Runs each probe (a program and its words) in `dir`, in one bash: root drops to nobody
 * (bash's EUID: Deno would need --allow-sys to ask), each probe's stderr and status come
 * back NUL-separated.
 */
function runProbes(dir: string, probes: readonly (readonly string[])[]): Promise<Outcome[]> {
  const script = `cd -- "$1" || exit 97; shift
set -f; IFS=$'\\x1f'
as=(); if [ "$EUID" = 0 ]; then
  as=(setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups --no-new-privs --)
fi
for probe in "$@"; do
  words=($probe)
  err=$(timeout -k 1 ${TIMEOUT_SECONDS} "\${as[@]}" "\${words[@]}" 2>&1 >/dev/null </dev/null)
  printf '%s\\0%s\\0' "$?" "$err"
done`;
  const encoded = probes.map((words) => {
    assert.ok(words.every((w) => w !== "" && !w.includes("\x1f") && !w.includes("\0")));
    return words.join("\x1f");
  });
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script, "bash", dir, ...encoded], {
      stdio: ["ignore", "pipe", "pipe"],
      env: ENV,
    });
    let out = "";
    let err = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => out += chunk);
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => err += chunk);
    // A guard against a hung batch; each probe has its own timeout.
    const guard = setTimeout(
      () => child.kill("SIGKILL"),
      (probes.length * (TIMEOUT_SECONDS + 2) + 10) * 1000,
    );
    child.on("error", (error) => {
      clearTimeout(guard);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(guard);
      const fields = out.split("\0");
      const outcomes = probes.map((args, i): Outcome => {
        const status = Number(fields[2 * i]);
        return { args, status, stderr: fields[2 * i + 1] ?? "", timedOut: status === 124 };
      });
      const failed = outcomes.find((o) => /^(setpriv|timeout|bash): /m.test(o.stderr));
      if (code !== 0 || fields.length !== 2 * probes.length + 1) {
        reject(new Error(`the probes of ${probes[0]?.[0]} did not run (${code}): ${err}`));
      } else if (failed !== undefined) {
        reject(new Error(`the probe ${failed.args.join(" ")} did not run: ${failed.stderr}`));
      } else {
        resolve(outcomes);
      }
    });
  });
}

/** Runs `jobs` at most {@link PARALLEL} at a time. */
async function inParallel(jobs: readonly (() => Promise<void>)[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, jobs.length) }, worker));
}

/** The standard output of a bash script run as the test's own user (no program of a model). */
function stdoutOf(script: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script, "bash", ...args], {
      stdio: ["ignore", "pipe", "ignore"],
      env: ENV,
    });
    let out = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => out += chunk);
    child.on("error", reject);
    child.on("close", () => resolve(out));
  });
}

/** One disagreement between a model and its program. */
interface Mismatch {
  readonly program: string;
  readonly option: string;
  readonly model: string;
  readonly programSays: string;
  readonly evidence: readonly Outcome[];
}

function excerpt(outcome: Outcome): string {
  const text = outcome.stderr.replace(/\s+/g, " ").trim().slice(0, 160);
  return `$ ${outcome.args.join(" ")} -> ${outcome.timedOut ? "(still running) " : ""}${
    JSON.stringify(text)
  }`;
}

/** Probes to run, and what to conclude from their outcomes. */
interface Check {
  readonly probes: readonly (readonly string[])[];
  judge(outcomes: readonly Outcome[]): void;
}

/** Every check of one program's model: disagreements go to `mismatches`, what cannot be told to `notes`. */
function checksFor(
  program: string,
  model: OptionSyntax,
  dialect: Dialect,
  mismatches: Mismatch[],
  notes: string[],
): Check[] {
  const probe = (...words: string[]) => [program, ...dialect.prefix, ...words];
  const report = (option: string, said: string, programSays: string, evidence: Outcome[]) =>
    mismatches.push({ program, option, model: said, programSays, evidence });
  const checks: Check[] = [];

  for (const [name, option] of model.long) {
    checks.push({
      probes: [probe(`--${name}`), probe(`--${name}=x`)],
      judge: ([bare, attached]) => {
        const observed = dialect.long(name, bare, attached);
        if (observed !== option.value) {
          report(`--${name}`, option.value, observed, [bare, attached]);
        }
      },
    });
  }

  for (const [letter, option] of model.short) {
    checks.push({
      probes: [probe(`-${letter}`), probe(`-${letter}%`)],
      judge: ([bare, clustered]) => {
        let observed: Observed;
        if (
          dialect.unknownShort(letter, bare.stderr) ||
          dialect.unknownShort(letter, clustered.stderr)
        ) {
          observed = "unknown";
        } else if (dialect.needsValueShort(letter, bare.stderr)) {
          observed = dialect.unknownShort("%", clustered.stderr) ? "inconsistent" : "required";
        } else if (dialect.unknownShort("%", clustered.stderr)) {
          observed = "none";
        } else if (bare.stderr === clustered.stderr && bare.status === clustered.status) {
          // The program ended at -X, before its parser looked at the `%`.
          observed = "undetermined";
        } else {
          observed = "optional";
        }
        if (observed === "undetermined" && option.value !== "required") {
          notes.push(
            `${program} -${letter}: ends the program before the rest of its word is read, ` +
              `so "${option.value}" cannot be checked (${excerpt(clustered)})`,
          );
        } else if (observed !== option.value) {
          report(`-${letter}`, option.value, observed, [bare, clustered]);
        }
      },
    });
  }

  // date is never given an operand: one sets the clock.
  if (program !== "date") {
    checks.push({
      probes: [[program, "zzz", "-%"]],
      judge: ([after]) => {
        const permutes = dialect.unknownShort("%", after.stderr);
        if (permutes === model.stopAtOperand) {
          report(
            "an option after an operand",
            model.stopAtOperand ? "an operand (options stop)" : "an option",
            permutes ? "an option" : "an operand (options stop)",
            [after],
          );
        }
      },
    });
  }
  return checks;
}

test("classifier: every option of every argument model takes its value as the installed program does", async () => {
  const started = Date.now();
  const models: [string, OptionSyntax | null][] = [
    ...[...READ_ONLY_PROGRAMS].map(([p, m]): [string, OptionSyntax | null] => [p, m.syntax]),
    ...[...GATE_PROGRAMS].map(([p, m]): [string, OptionSyntax | null] => [p, m.syntax]),
  ];
  const dir = await mkdtemp(join(tmpdir(), "program-models-"));
  const notes: string[] = [];
  const mismatches: Mismatch[] = [];
  try {
    await chmod(dir, 0o555);
    const jobs: (() => Promise<void>)[] = [];
    let probes = 0;
    let probed = 0;
    for (const [program, model] of models) {
      if (model === null) {
        notes.push(`${program}: no option syntax in its model (its words are checked whole)`);
        continue;
      }
      const kind = (await stdoutOf('type -t -- "$1" || true', program)).trim();
      if (kind !== "file") {
        notes.push(`${program}: skipped, ${kind === "" ? "not installed" : `a bash ${kind}`}`);
        continue;
      }
      let dialect = GETOPT;
      if (program === "rg") {
        // --version is in rg's model.
        if (!/^ripgrep 13\./.test(await stdoutOf("exec rg --version </dev/null"))) {
          notes.push("rg: skipped, its model and these probes are for ripgrep 13 (clap 2)");
          continue;
        }
        dialect = CLAP2;
      }
      probed++;
      // Batches of checks, a few dozen probes each, so that the two at a time stay busy.
      const checks = checksFor(program, model, dialect, mismatches, notes);
      while (checks.length > 0) {
        const batch: Check[] = [];
        let size = 0;
        while (checks.length > 0 && size < BATCH_PROBES) {
          batch.push(checks.shift()!);
          size += batch.at(-1)!.probes.length;
        }
        probes += size;
        jobs.push(async () => {
          const outcomes = await runProbes(dir, batch.flatMap((c) => c.probes));
          let i = 0;
          for (const check of batch) check.judge(outcomes.slice(i, i += check.probes.length));
        });
      }
    }
    await inParallel(jobs);
    notes.push(
      `${probed} programs, ${probes} probes in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  for (const note of notes) console.log(`program models: ${note}`);
  const described = mismatches
    .sort((a, b) => a.program.localeCompare(b.program) || a.option.localeCompare(b.option))
    .map((m) =>
      `${m.program} ${m.option}: the model says ${m.model}, the program says ${m.programSays}\n` +
      m.evidence.map((e) => `    ${excerpt(e)}`).join("\n")
    );
  assert.deepEqual(described, [], `\n${described.join("\n")}`);
});
