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
 *
 * tree parses its words itself ("Invalid argument -`X'", "Missing argument
 * to -X option"), and its model has no clusters: each option is a word of
 * its own. Its short options get two more probes instead of `-X%`: `-X% 1`
 * (tree reads the `%` as the next option and takes a value from the next
 * word, so the rest of a word is never a value) and `-X -%` (a letter that
 * takes a value takes the next word even when it starts with `-`); its long
 * options get `--name -%` too. A second test runs every option of the model
 * on a real directory with a link out of it, and the options left out of it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  NotAdmitted,
  type OptionSyntax,
  parseArguments,
  type ValueKind,
} from "../src/permissions/arguments.ts";
import { GATE_PROGRAMS, READ_ONLY_PROGRAMS } from "../src/permissions/programs.ts";
import { symlinkOnDisk } from "./helpers.ts";

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

/** tree's own parser (tree 2.x). */
const TREE: Dialect = {
  prefix: [],
  long(name, bare, attached) {
    const n = quote(name);
    if (new RegExp(`Invalid argument \`--${n}'`).test(bare.stderr)) return "unknown";
    const needs = new RegExp(`Missing argument to --${n}$`, "m").test(bare.stderr);
    const refuses = new RegExp(`Invalid argument \`--${n}=x'`).test(attached.stderr);
    if (needs) return refuses ? "inconsistent" : "required";
    return refuses ? "none" : "optional";
  },
  unknownShort: (c, stderr) => new RegExp(`Invalid argument -\`${quote(c)}'`).test(stderr),
  needsValueShort: (c, stderr) =>
    new RegExp(`Missing argument to -${quote(c)} option`).test(stderr),
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
    // Without clusters, also whether a value is the next word even when it starts with `-`.
    const dashValue = model.clusters ? [] : [probe(`--${name}`, "-%")];
    checks.push({
      probes: [probe(`--${name}`), probe(`--${name}=x`), ...dashValue],
      judge: ([bare, attached, dashed]) => {
        let observed: Observed = dialect.long(name, bare, attached);
        if (
          dashed !== undefined && observed === "required" &&
          dialect.unknownShort("%", dashed.stderr)
        ) {
          observed = "inconsistent";
        }
        if (observed !== option.value) {
          report(`--${name}`, option.value, observed, [
            bare,
            attached,
            ...(dashed ? [dashed] : []),
          ]);
        }
      },
    });
  }

  for (const [letter, option] of model.short) {
    if (!model.clusters) {
      checks.push(oneWordShortCheck(letter, option.value));
      continue;
    }
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

  /**
   * A short option of a syntax without clusters: `-X` alone says whether it takes a value;
   * `-X% 1` must read `%` as the next option (the rest of a word is never a value), and
   * `-X -%` whether the next word is the value even when it starts with `-`.
   */
  function oneWordShortCheck(letter: string, value: ValueKind): Check {
    return {
      probes: [probe(`-${letter}`), probe(`-${letter}%`, "1"), probe(`-${letter}`, "-%")],
      judge: ([bare, clustered, dashed]) => {
        let observed: Observed | "its value from the rest of its word";
        const rest = dialect.unknownShort("%", clustered.stderr);
        const takesDashed = !dialect.unknownShort("%", dashed.stderr);
        if (dialect.unknownShort(letter, bare.stderr)) observed = "unknown";
        else if (!rest) observed = "its value from the rest of its word";
        else if (dialect.needsValueShort(letter, bare.stderr)) {
          observed = takesDashed ? "required" : "inconsistent";
        } else observed = takesDashed ? "inconsistent" : "none";
        if (observed !== value) report(`-${letter}`, value, observed, [bare, clustered, dashed]);
      },
    };
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
      let dialect = program === "tree" ? TREE : GETOPT;
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

/** A value tree accepts for each option of its model that takes one. */
const TREE_VALUES: Readonly<Record<string, string>> = {
  "-H": ".",
  "-I": "deep",
  "-L": "2",
  "-P": "*.ts",
  "-T": "title",
  "--charset": "UTF-8",
  "--filelimit": "9",
  "--hintro": "intro.html",
  "--houtro": "intro.html",
  "--sort": "name",
  "--timefmt": "%Y",
};

/** What one run of tree printed (standard output and error together) and its status. */
interface TreeRun {
  readonly args: readonly string[];
  readonly status: number;
  readonly output: string;
}

/** Runs tree in `dir` once with each list of words, one run after another, in one bash. */
function runTree(dir: string, runs: readonly (readonly string[])[]): Promise<TreeRun[]> {
  const script = `cd -- "$1" || exit 97; shift
set -f; IFS=$'\\x1f'
for run in "$@"; do
  words=($run)
  out=$(timeout -k 1 ${TIMEOUT_SECONDS} tree "\${words[@]}" 2>&1 </dev/null)
  printf '%s\\0%s\\0' "$?" "$out"
done`;
  return stdoutOf(script, dir, ...runs.map((words) => words.join("\x1f"))).then((out) => {
    const fields = out.split("\0");
    assert.equal(fields.length, 2 * runs.length + 1, `the runs of tree did not all run: ${out}`);
    return runs.map((args, i) => ({
      args,
      status: Number(fields[2 * i]),
      output: fields[2 * i + 1],
    }));
  });
}

/** Every entry below `root`: kind, size, mtime, and a content hash or link target. */
async function snapshot(root: string): Promise<string[]> {
  const lines: string[] = [];
  const walk = async (dir: string, prefix: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const path = join(dir, name);
      const info = await lstat(path);
      const head = `${prefix}${name} size=${info.size} mtime=${info.mtimeMs}`;
      if (info.isSymbolicLink()) lines.push(`${head} -> ${await readlink(path)}`);
      else if (info.isDirectory()) {
        lines.push(`${head} dir`);
        await walk(path, `${prefix}${name}/`);
      } else {
        lines.push(
          `${head} sha256=${createHash("sha256").update(await readFile(path)).digest("hex")}`,
        );
      }
    }
  };
  await walk(root, "");
  return lines;
}

test("classifier: tree's model takes each option as a word of its own, and every option of it leaves the installed tree reading only inside the tree it lists", async () => {
  const model = READ_ONLY_PROGRAMS.get("tree");
  assert.ok(model?.syntax, "tree is on the read-only whitelist with an option syntax");
  const syntax = model.syntax;
  assert.equal(syntax.clusters, false, "tree's options do not cluster");
  const admits = (words: readonly string[]) => {
    try {
      parseArguments("tree", syntax, words);
      return true;
    } catch (error) {
      if (error instanceof NotAdmitted) return false;
      throw error;
    }
  };
  // tree takes a letter's value from the next word even inside a cluster (`-Lo 1 FILE` writes
  // FILE) and matches a long option with a value by its prefix (`--sortx name`).
  const letters = [...syntax.short.keys()];
  const clusters = letters.flatMap((a) => letters.map((b) => [`-${a}${b}`, "1", "2"]));
  for (
    const words of [...clusters, ["-L2"], ["-Lo", "1", "x"], ["--sortx", "name"], ["--so", "name"]]
  ) {
    assert.equal(admits(words), false, `the model admits ${words.join(" ")}`);
  }
  // What tree does with the options left out of the model, each refused by it.
  const leftOut: [words: string[], shows: (run: TreeRun, work: string) => Promise<boolean>][] = [
    [
      ["-o", "listing.txt"],
      async (_run, work) => (await snapshot(work)).some((l) => l.startsWith("listing.txt ")),
    ],
    [
      ["-R", "-L", "1"],
      async (_run, work) => (await snapshot(work)).some((l) => l.startsWith("src/00Tree.html ")),
    ],
    [["-l"], (run) => Promise.resolve(run.output.includes("secret.txt"))],
    [["--info"], (run) => Promise.resolve(run.output.includes("NOTE FROM OUTSIDE"))],
    [["--gitignore"], (run) => Promise.resolve(!run.output.includes("a.ts"))],
  ];
  // Also left out: listings made from names in files, and .gitignore and .info files named.
  const named = [["--fromfile", "x"], ["--fflinks"], ["--gitfile", "x"], ["--infofile", "x"]];
  for (const words of [...leftOut.map(([words]) => words), ...named]) {
    assert.equal(admits(words), false, `the model admits ${words.join(" ")}`);
  }

  // The words tree is given below, each admitted; a value is the next word or after `=`.
  const runs: string[][] = [];
  for (
    const [name, option] of [
      ...[...syntax.short].map(([l, o]) => [`-${l}`, o] as const),
      ...[...syntax.long].map(([l, o]) => [`--${l}`, o] as const),
    ]
  ) {
    if (option.value === "none") {
      runs.push([name, "-a"]);
      continue;
    }
    const value = TREE_VALUES[name];
    assert.ok(value !== undefined, `a value to give tree's ${name}`);
    runs.push([name, value, "-a"]);
    if (name.startsWith("--")) runs.push([`${name}=${value}`, "-a", "-f"]);
  }
  for (const words of runs) assert.ok(admits(words), `the model refuses ${words.join(" ")}`);

  const kind = (await stdoutOf("type -t -- tree || true")).trim();
  if (kind !== "file") {
    console.log(
      "program models: tree: the runs of the installed tree skipped, it is not installed",
    );
    return;
  }
  // A listed tree with a link out of it: src/.info and src/.gitignore are links to files outside.
  const dir = await mkdtemp(join(tmpdir(), "tree-model-"));
  try {
    const work = join(dir, "work");
    await mkdir(join(work, "src", "deep"), { recursive: true });
    await mkdir(join(dir, "outside", "more"), { recursive: true });
    await writeFile(join(work, "src", "a.ts"), "a\n");
    await writeFile(join(work, "src", "deep", "b.ts"), "b\n");
    await writeFile(join(work, "intro.html"), "<p>intro</p>\n");
    await writeFile(join(dir, "outside", "secret.txt"), "secret\n");
    await writeFile(join(dir, "outside", "notes"), "a.ts\n\tNOTE FROM OUTSIDE\n");
    await writeFile(join(dir, "outside", "ignore"), "a.ts\n");
    await symlinkOnDisk("../outside", join(work, "out"));
    await symlinkOnDisk("../../outside/notes", join(work, "src", ".info"));
    await symlinkOnDisk("../../outside/ignore", join(work, "src", ".gitignore"));

    const before = await snapshot(dir);
    const problems: string[] = [];
    for (const run of await runTree(work, runs)) {
      const words = run.args.join(" ");
      if (run.status !== 0) problems.push(`tree ${words} failed (${run.status}): ${run.output}`);
      if (run.output.includes("secret.txt")) problems.push(`tree ${words} followed the link out`);
      if (run.output.includes("NOTE FROM OUTSIDE")) problems.push(`tree ${words} read src/.info`);
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(await snapshot(dir), before, "tree changed the directory it listed");

    const shown: string[] = [];
    for (const run of await runTree(work, leftOut.map(([words]) => words))) {
      const [, shows] = leftOut.find(([words]) => words === run.args)!;
      if (!await shows(run, work)) shown.push(`tree ${run.args.join(" ")}: ${run.output}`);
    }
    assert.deepEqual(
      shown,
      [],
      "an option left out of the model does not do what it is left out for",
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
