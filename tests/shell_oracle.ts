/**
 * A differential oracle for the read-only classifier: real bash, run on the
 * lines the classifier calls read-only, records which programs it actually
 * starts, with which words, and the result is compared with the commands the
 * classifier read.
 *
 * The classifier's promise is that what it parsed is what bash runs. This
 * module holds it to that without trusting any parser of ours:
 *
 * - `generateLine` makes adversarial command lines from a seeded PRNG
 *   (quoting, escapes, control characters, comments, globs, expansions,
 *   redirections, operators, keywords), about half of them plain enough to
 *   be called read-only, so that many are executed;
 * - `createBashOracle` prepares a private temporary tree in which
 *   `bash -c LINE` runs with `PATH` holding only recording stubs and with
 *   every builtin disabled (through `BASH_ENV`), so that every simple
 *   command bash runs, builtin or not, found or not, leaves one record of its
 *   argv and nothing else happens;
 * - `runOracle` classifies each line and executes only those called
 *   read-only, twice (stubs exiting 0, then 1, so both sides of `&&` and `||`
 *   run), and reports every line where the recorded argv lists are not the
 *   classifier's commands (see `disagreement`), where a file changed, or
 *   where bash printed anything (the stubs print nothing, so any output is
 *   bash reading the line differently: a syntax error, a failed redirection).
 *
 * Safety: lines not called read-only are never executed. An executed line
 * finds no real program (PATH is the stub directory, builtins are
 * disabled), runs in a temporary directory with HOME there, stdin closed,
 * and is killed as a process group after a timeout. The generator names
 * only relative files.
 *
 * Runtime-neutral (only `node:` built-ins): it runs under Deno with
 * `--allow-run=bash` (bash is spawned by its absolute path, resolved the way
 * Deno resolves the allowed name) and under Node from the npm build.
 */
import { spawn } from "node:child_process";
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rm,
  stat,
  unlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import process from "node:process";
import { classifyCommand, createSession } from "../mod.ts";
import type { ToolSessionContext } from "../mod.ts";
import { parseLiteralCommands } from "../src/permissions/shell_lexer.ts";
import { READ_ONLY_PROGRAMS } from "../src/permissions/programs.ts";
import type { OptionSyntax } from "../src/permissions/arguments.ts";

// ---------------------------------------------------------------------------
// Seeded randomness

/** A random number source in [0, 1), as `Math.random`. */
export type Random = () => number;

/**
 * mulberry32: a small, fast 32-bit PRNG. One seed reproduces one run's lines as long as the
 * whitelist tables are unchanged: the generator draws programs and options from them.
 */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed that changes once a day (UTC `YYYYMMDD`): each day explores new lines, a run replays by its seed. */
export function dailySeed(date: Date = new Date()): number {
  return Number(date.toISOString().slice(0, 10).replaceAll("-", ""));
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

function chance(random: Random, p: number): boolean {
  return random() < p;
}

function between(random: Random, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

// ---------------------------------------------------------------------------
// The generator

/**
 * The whitelist's names as first planned. The stub directory holds these and the table's, so
 * that a name the table drops still runs as a stub (any other name is recorded all the same).
 */
const NAMED_WHITELIST = (
  "cat head tail wc ls grep rg find sed pwd echo printf true false basename dirname realpath " +
  "readlink stat du df nl cut tr sort uniq diff cmp comm tac rev fold paste seq od file md5sum " +
  "sha1sum sha256sum sha512sum which whoami id uname nproc date"
).split(" ");

/** The read-only whitelist as the classifier holds it now, so that generated lines follow it. */
const WHITELIST: readonly string[] = [...READ_ONLY_PROGRAMS.keys()];

/** Every name that gets a recording stub (any other name is recorded by command_not_found_handle). */
export const STUB_NAMES: readonly string[] = [...new Set([...WHITELIST, ...NAMED_WHITELIST])]
  .sort();

/** Programs and builtins that must never be called read-only, and near misses of whitelisted names. */
const OTHER_PROGRAMS = [
  "rm",
  "touch",
  "sh",
  "bash",
  "python3",
  "curl",
  "cd",
  "exec",
  "eval",
  "command",
  "env",
  "xargs",
  "git",
  "tee",
  "awk",
  "mkdir",
  "cp",
  "mv",
  "ln",
  "chmod",
  "kill",
  "source",
  ".",
  "builtin",
  "sudo",
  "nohup",
  "perl",
  "dd",
  "test",
  ":",
  "set",
  "export",
  "alias",
  "trap",
  "read",
  "type",
  "hash",
  "make",
  "tar",
  "wget",
  "Ls",
  "lss",
  "cat2",
  "sha256",
  "./cat",
  "dir/ls",
  "-ls",
];

/** Arguments for the other programs: what makes each of them dangerous. */
const OTHER_ARGUMENTS = [
  ["-rf", "victim"],
  ["victim"],
  ["-c", "touch victim"],
  ["-c", "print(1)"],
  ["dir"],
  ["ls"],
  ["cat", "a.txt"],
  ["rm", "victim"],
  ["status"],
  ["-la"],
  ["out.txt"],
  ["{print}", "a.txt"],
  ["-9", "1"],
  ["PATH=dir"],
  [],
];

/** Files the generated lines name: all relative, some with characters the shell treats specially. */
const PATHS = [
  "a.txt",
  "b.ts",
  "dir",
  "dir/b",
  "dir/c.txt",
  "src",
  "src/main.ts",
  "a b",
  "victim",
  ".",
  "./a.txt",
  "dir/",
  "new.txt",
  "-",
  "x#y",
  "é.txt",
  "日本.txt",
  "*.ts",
  "dir/*",
  "?",
  "[ab].txt",
  "{a,b}",
  "~",
  "~/a.txt",
  "$HOME",
  "`pwd`",
  "$(pwd)",
  "a;b",
  "a|b",
  "a&b",
  "a>b",
  "(x)",
  "#c",
  "a\\b",
  "!x",
  "A=1",
  "-n",
  "../out",
  "dir/../a.txt",
  "it's",
  'say "hi"',
  "tab\there",
  "a\u00a0b",
  "",
];

/** Free text: patterns and what echo and printf print. */
const TEXTS = [
  "hello",
  "hello world",
  "TODO",
  "fn main",
  "%s\\n",
  "a;b && c",
  "$PATH",
  "${HOME}",
  "`id`",
  "$(id)",
  "#not-a-comment",
  "x#y",
  "a|b",
  "~",
  "*",
  "?",
  "[x]",
  "{a,b}",
  ">out",
  "<a.txt",
  "2>&1",
  "&",
  "\\",
  "\\\\",
  "\\n",
  "'",
  '"',
  "é",
  "emoji😀",
  "\t",
  "",
  "-n",
  "-e",
  "--",
  "rm -rf victim",
  "\\rm",
  "!",
  "if",
  "then",
  "time",
  "=",
  "A=1",
  "\n",
  "\r",
  "\u0085",
  "\u2028",
];

/** Option values that are not files. */
const VALUES = ["1", "3", "10", "%s", ",", ":", "always", "never", "json", "a", "x y", "-1", ""];

/** Words that make a program's use not read-only, to keep the refusals exercised. */
const BAD_OPTIONS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  grep: [["-R"], ["--recursive=x"]],
  rg: [["--pre=./x"], ["-z"], ["-L"], ["--pre", "sh"]],
  sort: [["-o", "out"], ["-T", "dir"], ["--compress-program=sh"]],
  sed: [["-i", "s/a/b/"], ["s/a/b/w out"], ["-n", "1e"]],
  find: [["-delete"], ["-exec", "rm", "{}", ";"], ["-fprint", "out"], ["-L"]],
  ls: [["-L"], ["--dereference"]],
  date: [["-s", "2020-01-01"], ["0101000020"]],
  uniq: [["a.txt", "out"]],
  printf: [["-v", "PATH", "x"]],
  file: [["-C"], ["-m", "magic"]],
  tree: [["-o", "out"], ["-R", "-L", "1"], ["-l"], ["-aL", "1"], ["--fromfile"]],
};

/** Words after `find`'s paths: read-only predicates mostly, some that are not. */
const FIND_EXPRESSIONS = [
  ["-name", "*.ts"],
  ["-type", "f"],
  ["-maxdepth", "2"],
  ["-print"],
  ["-newer", "a.txt"],
  ["(", "-name", "x", "-o", "-name", "y", ")"],
  ["!", "-empty"],
  ["-iname", "A*"],
  ["-print0"],
  ["-size", "+1k"],
];

/** What a program's operands are, where they are not files. */
const OPERAND_KINDS: Readonly<Record<string, string>> = {
  grep: "pattern",
  rg: "pattern",
  echo: "text",
  printf: "text",
  true: "text",
  false: "text",
  date: "date",
  tr: "sets",
  seq: "numbers",
  which: "names",
  id: "names",
  whoami: "none",
  uname: "none",
  nproc: "none",
};

/** A whitelisted program's option, as the words that give it. */
function optionWords(syntax: OptionSyntax, random: Random): string[] {
  const valueFor = (isPath: boolean) => isPath ? pick(random, PATHS) : pick(random, VALUES);
  if (syntax.long.size > 0 && (syntax.short.size === 0 || chance(random, 0.3))) {
    const [long, model] = pick(random, [...syntax.long]);
    if (model.value === "none") return [`--${long}`];
    if (model.value === "optional") {
      return chance(random, 0.5) ? [`--${long}`] : [`--${long}=${valueFor(model.path)}`];
    }
    return chance(random, 0.5)
      ? [`--${long}=${valueFor(model.path)}`]
      : [`--${long}`, valueFor(model.path)];
  }
  if (syntax.short.size === 0) return [`--${pick(random, VALUES)}`];
  if (!syntax.clusters) {
    // One option a word, its value the next word; now and then a cluster all the same.
    const [letter, model] = pick(random, [...syntax.short]);
    const word = `-${letter}${chance(random, 0.1) ? pick(random, [...syntax.short.keys()]) : ""}`;
    return model.value === "none" ? [word] : [word, valueFor(model.path)];
  }
  // A cluster: letters without a value, the last one perhaps taking one.
  const letters = [...syntax.short];
  let cluster = "-";
  const size = between(random, 1, 3);
  for (let i = 0; i < size; i++) {
    const [letter, model] = pick(random, letters);
    if (model.value === "none") {
      cluster += letter;
      continue;
    }
    if (model.value === "optional") return [cluster + letter + (chance(random, 0.5) ? "" : "1")];
    const value = valueFor(model.path);
    return chance(random, 0.5) ? [cluster + letter + value] : [cluster + letter, value];
  }
  return [cluster];
}

function operandWords(name: string, random: Random, count: number): string[] {
  const kind = OPERAND_KINDS[name] ?? "paths";
  const words: string[] = [];
  if (kind === "pattern") words.push(pick(random, TEXTS));
  for (let i = 0; i < count; i++) {
    switch (kind) {
      case "text":
        words.push(pick(random, TEXTS));
        break;
      case "date":
        if (i === 0) words.push(pick(random, ["+%Y", "+%s", "+%Y-%m-%d %H:%M", "+x#y"]));
        break;
      case "sets":
        if (i < 2) words.push(pick(random, ["a-z", "A-Z", "[:upper:]", "\\n", "x", ""]));
        break;
      case "numbers":
        if (i < 3) words.push(String(between(random, 1, 20)));
        break;
      case "names":
        words.push(pick(random, ["ls", "root", "cat", "nobody"]));
        break;
      case "none":
        break;
      default:
        words.push(pick(random, PATHS));
    }
  }
  return words;
}

/** The unquoted words of one whitelisted program's command. */
function whitelistedWords(name: string, random: Random): string[] {
  if (chance(random, 0.04) && Object.hasOwn(BAD_OPTIONS, name)) {
    return [name, ...pick(random, BAD_OPTIONS[name]), ...operandWords(name, random, 1)];
  }
  if (name === "sed") {
    const script = chance(random, 0.85)
      ? pick(random, ["5p", "1,3p", "$p", "10,$p", "1,$p"])
      : pick(random, ["p", "1d", "s/a/b/", "1w out", "$e"]);
    return ["sed", "-n", script, ...operandWords(name, random, between(random, 0, 1))];
  }
  if (name === "find") {
    const words = ["find", ...operandWords(name, random, between(random, 0, 2))];
    for (let i = between(random, 0, 2); i > 0; i--) words.push(...pick(random, FIND_EXPRESSIONS));
    return words;
  }
  const model = READ_ONLY_PROGRAMS.get(name);
  const options: string[][] = [];
  if (model?.syntax) {
    for (let i = between(random, 0, 2); i > 0; i--) {
      options.push(optionWords(model.syntax, random));
    }
  }
  if (chance(random, 0.03)) options.push([pick(random, ["--frobnicate", "--ver", "-@"])]);
  const operands = operandWords(name, random, between(random, 0, name === "uniq" ? 1 : 2));
  // getopt permutes: options usually come first, but may follow operands.
  if (chance(random, 0.8) || operands.length === 0) return [name, ...options.flat(), ...operands];
  const [first, ...rest] = operands;
  return [name, first, ...options.flat(), ...rest];
}

const BARE = /^[A-Za-z0-9_./,:=+@%^-][A-Za-z0-9_./,:=+@%^#!-]*$/;

function singleQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

function doubleQuoted(value: string, random: Random): string {
  let out = '"';
  for (const c of value) {
    if ('"\\$`'.includes(c)) out += "\\" + c;
    // A backslash before any other character stays in the word: both readers must keep it.
    else if (chance(random, 0.05) && c >= " " && c <= "~") out += "\\" + c;
    else out += c;
  }
  return out + '"';
}

function backslashed(value: string, random: Random): string {
  let out = "";
  for (const c of value) {
    const printable = c >= " " && c <= "~";
    if (!printable) out += singleQuoted(c);
    else if (!/[A-Za-z0-9_./,:=+@%^-]/.test(c) || chance(random, 0.3)) out += "\\" + c;
    else out += c;
  }
  return out === "" ? "''" : out;
}

/** Spellings bash may read differently from a careless lexer. */
function adversarialSpelling(value: string, random: Random): string {
  const ansi = [...value].map((c) =>
    c >= " " && c <= "~" && c !== "'" && c !== "\\"
      ? c
      : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`
  ).join("");
  return pick(random, [
    `$'${ansi}'`,
    `$"${value}"`,
    `'${value}`,
    `"${value}`,
    `${value}\\`,
    `\\\n${value}`,
    `${value}\\\n`,
    `${value.slice(0, 1)}\\\n${value.slice(1)}`,
    `"${value}"'${value}'`,
    `''${value}`,
    `${value}""`,
    value,
  ]);
}

/** Source text for one word: mostly a faithful quoting of `value`, sometimes not. */
function spell(value: string, random: Random): string {
  const w = random();
  if (value === "") return pick(random, ["''", '""', "''\"\"", "\"\"''"]);
  if (w < 0.45) {
    if (BARE.test(value) || chance(random, 0.03)) return value;
    return singleQuoted(value);
  }
  if (w < 0.62) return singleQuoted(value);
  if (w < 0.75) return doubleQuoted(value, random);
  if (w < 0.86) return backslashed(value, random);
  if (w < 0.985) {
    // Mixed: the word cut into pieces, each quoted its own way.
    const cut = between(random, 0, value.length);
    const pieces = [value.slice(0, cut), value.slice(cut)].filter((p) => p !== "");
    return pieces.map((piece) =>
      pick(random, [
        singleQuoted,
        (p: string) => doubleQuoted(p, random),
        (p: string) => backslashed(p, random),
      ])(piece)
    ).join("");
  }
  return adversarialSpelling(value, random);
}

/** How a program's name is written: its bare name mostly, also quoted or escaped. */
function spellProgram(name: string, random: Random): string {
  if (chance(random, 0.8)) return BARE.test(name) ? name : singleQuoted(name);
  return pick(random, [
    `\\${name}`,
    singleQuoted(name),
    `"${name}"`,
    `${name.slice(0, 1)}'${name.slice(1)}'`,
    `''${name}`,
    `${name}""`,
    `\\${name.slice(0, 1)}\\${name.slice(1)}`,
  ]);
}

const PREFIXES = [
  "A=1 ",
  "PATH=dir ",
  "! ",
  "time ",
  "if ",
  "then ",
  "command ",
  "exec ",
  "env ",
  "builtin ",
  "eval ",
  "xargs ",
  "nohup ",
  "{ ",
  "( ",
  "\\",
  "# ",
  "coproc ",
  "function ",
  "while ",
];

const SUFFIXES = [
  " >out",
  " > a.txt",
  " 2>&1",
  " >&2",
  " <a.txt",
  " >>out",
  " 2>err",
  " &>out",
  " >|out",
  " <<<x",
  " <<EOF\nx\nEOF",
  " &",
  " #c",
  "#c",
  "; fi",
  " )",
  " ; }",
  " | tee out",
  " > ../out",
  " 1>victim",
];

const SEPARATORS = [
  " ; ",
  "; ",
  ";",
  " && ",
  "&&",
  " || ",
  "||",
  " | ",
  "|",
  " |& ",
  "|&",
  "\n",
  " ;\n",
  "\n\n",
  " &&\n",
  " |\n",
  "||\n\n",
  "\t;\t",
];

const BAD_SEPARATORS = [
  " & ",
  ";;",
  " ;; ",
  ";&",
  ";;&",
  "&",
  " && && ",
  "\r\n",
  "\\\n",
  " ( ",
  " ) ",
  "{ ",
  " } ",
  "\n#c\n",
  " # c\n",
  "\n;",
  " ; ; ",
  "|||",
  " |\n\n| ",
  "\u2028",
  "\u0085",
  "\v",
  "\f",
];

/** Characters put into a line at random places (inside quotes too). */
const INJECTED = [
  "\r",
  "\v",
  "\f",
  "\t",
  "\0",
  "\x1b",
  "\x7f",
  "\x01",
  "\u0085",
  "\u2028",
  "\u2029",
  "\u00a0",
  "\ufeff",
  "é",
  "日",
  "😀",
  "#",
  " #",
  "\\",
  "\\\n",
  "\n",
  "'",
  '"',
  "$",
  "$x",
  "`",
  "*",
  "?",
  "[",
  "]",
  "{",
  "}",
  "~",
  "&",
  ";",
  "|",
  "(",
  ")",
  "<",
  ">",
  "!",
  "=",
  "%",
  "^",
  " ",
];

function commandText(random: Random): string {
  let text = "";
  if (chance(random, 0.03)) text += pick(random, PREFIXES);
  const words = chance(random, 0.9)
    ? whitelistedWords(pick(random, WHITELIST), random)
    : [pick(random, OTHER_PROGRAMS), ...pick(random, OTHER_ARGUMENTS)];
  const [program, ...args] = words;
  text += spellProgram(program, random);
  for (const arg of args) {
    text += (chance(random, 0.95) ? " " : pick(random, ["\t", "  "])) + spell(arg, random);
  }
  if (chance(random, 0.03)) text += pick(random, SUFFIXES);
  return text;
}

/**
 * One adversarial bash command line: one to four commands (whitelisted
 * programs mostly, others too) joined by operators, with quoting, escapes
 * and, in some lines, characters and constructs bash reads specially.
 */
export function generateLine(random: Random): string {
  const count = pick(random, [1, 1, 1, 2, 2, 2, 3, 3, 4]);
  let line = chance(random, 0.03) ? pick(random, ["\n", " ", "\t", "\n\n"]) : "";
  for (let i = 0; i < count; i++) {
    if (i > 0) {
      line += chance(random, 0.96) ? pick(random, SEPARATORS) : pick(random, BAD_SEPARATORS);
    }
    line += commandText(random);
  }
  if (chance(random, 0.05)) line += pick(random, [";", "\n", " ", "\t", " &&", "|", "\\"]);
  if (chance(random, 0.1)) {
    for (let n = between(random, 1, 2); n > 0; n--) {
      const at = between(random, 0, line.length);
      line = line.slice(0, at) + pick(random, INJECTED) + line.slice(at);
    }
  }
  // Cutting a surrogate pair in two makes a lone surrogate: that is a line bash cannot be
  // given (it is not text), so the generator keeps pairs whole.
  return line.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    "?",
  );
}

/** `count` lines from `seed`. */
export function generateLines(seed: number, count: number): string[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => generateLine(random));
}

// ---------------------------------------------------------------------------
// The bash oracle

/** What bash ran for one line, over the runs with stubs exiting 0 and 1. */
export interface LineExecution {
  /** The recorded argv lists, sorted: for each distinct list, the most times one run ran it. */
  readonly recorded: readonly (readonly string[])[];
  /** The argv lists each run recorded, sorted: stubs exiting 0, then 1. */
  readonly byStatus: readonly (readonly (readonly string[])[])[];
  /** Anything else that went wrong: files changed, output, a timeout, a torn record. */
  readonly problems: readonly string[];
}

/** One prepared tree in which bash runs lines, one at a time. */
export interface BashOracle {
  /** The canonical directory lines run in (also their HOME). */
  readonly workingDirectory: string;
  /** Runs `bash -c line` with stubs exiting 0, then 1. */
  run(line: string): Promise<LineExecution>;
  /** Removes the tree. */
  close(): Promise<void>;
}

/** Options of {@link createBashOracle}. */
export interface BashOracleOptions {
  /** Milliseconds before a run's process group is killed (default 5000). */
  readonly timeoutMs?: number;
  /** LC_ALL for bash (default "C"). */
  readonly locale?: string;
}

/** The files every working directory starts with, so that globs and tilde have something to expand to. */
const LAYOUT: Readonly<Record<string, string | null>> = {
  "a.txt": "a\n",
  "b.ts": "b\n",
  "a b": "ab\n",
  "victim": "keep me\n",
  "x#y": "",
  "-n": "",
  ".hidden": "",
  "dir": null,
  "dir/b": "",
  "dir/c.txt": "",
  "src": null,
  "src/main.ts": "",
};

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** bash's absolute path, found on PATH in order (as Deno resolves `--allow-run=bash`). */
async function findBash(): Promise<string> {
  for (const directory of (process.env.PATH ?? "/usr/bin:/bin").split(delimiter)) {
    if (!directory.startsWith("/")) continue;
    const candidate = join(directory, "bash");
    // By mode bits: Deno's access(X_OK) needs --allow-sys to learn the user's id.
    const found = await stat(candidate).catch(() => null);
    if (found !== null && found.isFile() && (found.mode & 0o111) !== 0) return candidate;
  }
  throw new Error("bash is not on PATH");
}

interface Run {
  code: number | null;
  output: string;
  timedOut: boolean;
  error?: string;
}

function runProcess(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env: Record<string, string>; timeoutMs: number; group: boolean },
  killGroup: (pid: number) => Promise<void>,
): Promise<Run> {
  return new Promise((resolve) => {
    let output = "";
    let timedOut = false;
    let child;
    try {
      child = spawn(file, [...args], {
        cwd: options.cwd,
        env: options.env,
        stdio: ["ignore", "pipe", "pipe"],
        // Its own process group, so that a timeout ends whatever the line started.
        detached: options.group,
      });
    } catch (error) {
      resolve({ code: null, output: "", timedOut: false, error: (error as Error).message });
      return;
    }
    const keep = (chunk: unknown) => {
      if (output.length < 4096) output += String(chunk);
    };
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) void killGroup(child.pid);
    }, options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ code: null, output, timedOut, error: error.message });
    });
    // "close", not "exit": it waits for every holder of the output pipes, so no stub
    // started by the line is still running when its records are read.
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output, timedOut });
    });
  });
}

/** Splits a record file: `argc NUL`, the argv fields each NUL-terminated, then `. NUL`. */
function parseRecord(bytes: Uint8Array): string[] | null {
  const fields: string[] = [];
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0) continue;
    const field = bytes.subarray(start, i);
    try {
      fields.push(decoder.decode(field));
    } catch {
      fields.push(
        `<not UTF-8: ${[...field].map((b) => b.toString(16).padStart(2, "0")).join("")}>`,
      );
    }
    start = i + 1;
  }
  if (start !== bytes.length || fields.length < 2) return null;
  const count = Number(fields[0]);
  if (!Number.isInteger(count) || fields.length !== count + 2 || fields[count + 1] !== ".") {
    return null;
  }
  return fields.slice(1, count + 1);
}

/** Every entry under `root` but `skip`, as lines of path, type, size, mode and mtime. */
async function snapshot(root: string, skip: string): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  const walk = async (directory: string, prefix: string) => {
    for (const name of (await readdir(directory)).sort()) {
      const path = join(directory, name);
      if (path === skip) continue;
      const stat = await lstat(path);
      const kind = stat.isDirectory()
        ? "dir"
        : stat.isSymbolicLink()
        ? `link→${await readlink(path)}`
        : stat.isFile()
        ? "file"
        : "other";
      entries.set(
        prefix + name,
        `${kind} size=${stat.size} mode=${stat.mode.toString(8)} mtime=${stat.mtimeMs}`,
      );
      if (stat.isDirectory()) await walk(path, `${prefix}${name}/`);
    }
  };
  await walk(root, "");
  return entries;
}

function snapshotChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [path, state] of after) {
    if (!before.has(path)) changes.push(`created ${JSON.stringify(path)} (${state})`);
    else if (before.get(path) !== state) changes.push(`changed ${JSON.stringify(path)} (${state})`);
  }
  for (const path of before.keys()) {
    if (!after.has(path)) changes.push(`removed ${JSON.stringify(path)}`);
  }
  return changes;
}

async function layOut(work: string): Promise<void> {
  await rm(work, { recursive: true, force: true });
  await mkdir(work);
  for (const [path, content] of Object.entries(LAYOUT)) {
    if (content === null) await mkdir(join(work, path), { recursive: true });
    else await writeFile(join(work, path), content);
  }
}

/**
 * Prepares one oracle tree under the system temporary directory:
 *
 * ```
 * owt-oracle-XXXX/
 *   recorder      the stub script (bash -p: reads no BASH_ENV, imports no functions)
 *   stubs/NAME    a symbolic link to recorder for every whitelisted name: PATH is this only
 *   bash_env      read by bash before the line (BASH_ENV): disables every builtin and
 *                 defines command_not_found_handle to run recorder for any other name
 *   log/          one record file per program run (outside work/, so writes there show)
 *   work/         the working directory and HOME, laid out with a few files
 * ```
 *
 * A change anywhere in the tree but `log/` is reported as a problem of the
 * line that made it, and the tree's files are laid out again.
 */
export async function createBashOracle(options: BashOracleOptions = {}): Promise<BashOracle> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const bash = await findBash();
  const root = await realpath(await mkdtemp(join(tmpdir(), "owt-oracle-")));
  const stubs = join(root, "stubs");
  const recorder = join(root, "recorder");
  const bashEnv = join(root, "bash_env");
  const log = join(root, "log");
  const work = join(root, "work");
  const host = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const killGroup = async (pid: number) => {
    // Deno's process.kill needs unrestricted --allow-run; bash's kill builtin does not.
    await runProcess(bash, ["-c", 'kill -KILL -- "-$1" 2>/dev/null', "bash", String(pid)], {
      env: host,
      timeoutMs: 5000,
      group: false,
    }, () => Promise.resolve());
  };
  const setup = async (script: string, ...args: string[]) => {
    const result = await runProcess(bash, ["-c", script, "bash", ...args], {
      env: host,
      timeoutMs: 20000,
      group: false,
    }, killGroup);
    if (result.code !== 0) throw new Error(`oracle setup failed: ${result.output}`);
    return result.output;
  };
  const builtins = (await setup("compgen -b")).split("\n").filter((name) => name !== "");

  await mkdir(stubs);
  await mkdir(log);
  await layOut(work);
  await writeFile(
    recorder,
    [
      `#!${bash} -p`,
      "# Records one program run for the classifier's bash oracle (tests/shell_oracle.ts):",
      "# argc, then argv, each NUL-terminated, then '.', in a file of its own (concurrent",
      "# stubs of a pipeline never share one), and exits with $ORACLE_STATUS.",
      "# Reached through a link in the stub directory, $0 is that link and names the program;",
      "# reached from command_not_found_handle, $0 is this file and $1 the name bash looked for.",
      `if [[ $0 == ${shellQuote(stubs)}/* ]]; then set -- "\${0#${shellQuote(stubs)}/}" "$@"; fi`,
      "set -o noclobber",
      "n=0",
      `until { printf '%s\\0' "$#" "$@" . > ${shellQuote(log)}/"$BASHPID-$n"; } 2>/dev/null; do`,
      "  n=$((n + 1))",
      "  if ((n > 100)); then exit 125; fi",
      "done",
      'exit "${ORACLE_STATUS:-0}"',
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  await writeFile(
    bashEnv,
    [
      "# Read by bash before the line (BASH_ENV). Any program not in the stub directory is",
      "# recorded, and every builtin is disabled, so that a builtin (cd, eval, exec, echo, ...)",
      "# is looked up on PATH too: each simple command bash runs leaves a record.",
      `command_not_found_handle() { ${shellQuote(recorder)} "$@"; }`,
      `enable -n ${builtins.map(shellQuote).join(" ")}`,
      "",
    ].join("\n"),
  );
  // Links are made by bash: Deno's own symlink call needs write access beyond /tmp.
  await setup(
    'cd "$1" && r=$2 && shift 2 && for name; do ln -s "$r" "./$name" || exit; done',
    stubs,
    recorder,
    ...STUB_NAMES,
  );
  let baseline = await snapshot(root, log);

  const runOnce = async (line: string, status: number) => {
    const result = await runProcess(bash, ["--norc", "--noprofile", "-c", line], {
      cwd: work,
      env: {
        PATH: stubs,
        BASH_ENV: bashEnv,
        HOME: work,
        LC_ALL: options.locale ?? "C",
        ORACLE_STATUS: String(status),
      },
      timeoutMs,
      group: true,
    }, killGroup);
    const records: string[][] = [];
    const problems: string[] = [];
    if (result.error !== undefined) problems.push(`bash could not be run: ${result.error}`);
    if (result.timedOut) problems.push(`timed out after ${timeoutMs} ms (status ${status})`);
    if (result.output !== "") {
      problems.push(`bash printed (status ${status}): ${JSON.stringify(result.output)}`);
    }
    for (const name of await readdir(log)) {
      const path = join(log, name);
      const record = parseRecord(await readFile(path));
      await unlink(path);
      if (record === null) problems.push(`a torn record ${name} (status ${status})`);
      else records.push(record);
    }
    return { records, problems };
  };

  return {
    workingDirectory: work,
    async run(line) {
      const counts = new Map<string, number>();
      const problems: string[] = [];
      const byStatus: string[][][] = [];
      for (const status of [0, 1]) {
        const once = await runOnce(line, status);
        problems.push(...once.problems);
        byStatus.push(once.records.sort(compareArgv));
        for (const [key, n] of countArgv(once.records)) {
          counts.set(key, Math.max(counts.get(key) ?? 0, n));
        }
      }
      const changes = snapshotChanges(baseline, await snapshot(root, log));
      if (changes.length > 0) {
        problems.push(`files changed: ${changes.join("; ")}`);
        await layOut(work);
        baseline = await snapshot(root, log);
      }
      const recorded: string[][] = [];
      for (const [key, n] of counts) {
        for (let i = 0; i < n; i++) recorded.push(JSON.parse(key));
      }
      return { recorded: recorded.sort(compareArgv), byStatus, problems };
    },
    close: () => rm(root, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------
// The differential run

/** What the classifier made of a line: its verdict and, when read-only, the commands it read. */
export interface ClassifierReading {
  /** Whether the line is called read-only (only such lines are executed). */
  readonly readOnly: boolean;
  /** The commands read (argv lists), or null when the lexer refused the line. */
  readonly commands: readonly (readonly string[])[] | null;
}

/** Classifies a line for the oracle. */
export type Classify = (line: string, session: ToolSessionContext) => Promise<ClassifierReading>;

/** The classifier's reading: `classifyCommand`'s verdict and `parseLiteralCommands`' commands. */
export async function classifierReading(
  line: string,
  session: ToolSessionContext,
): Promise<ClassifierReading> {
  const verdict = await classifyCommand(line, session);
  if (!verdict.readOnly) return { readOnly: false, commands: null };
  const parsed = parseLiteralCommands(line);
  return { readOnly: true, commands: parsed.ok ? parsed.commands.map((c) => c.words) : null };
}

/** A line on which the classifier and bash disagree. */
export interface OracleDifference {
  /** The line. */
  readonly line: string;
  /** The commands the classifier read (null: it called the line read-only without commands). */
  readonly classifier: readonly (readonly string[])[] | null;
  /** What bash ran (see {@link LineExecution.recorded}). */
  readonly recorded: readonly (readonly string[])[];
  /** What each run ran (see {@link LineExecution.byStatus}). */
  readonly byStatus: readonly (readonly (readonly string[])[])[];
  /** What differs. */
  readonly problems: readonly string[];
}

/** The outcome of {@link runOracle}. */
export interface OracleReport {
  /** Lines given. */
  readonly lines: number;
  /** Lines called read-only. */
  readonly readOnly: number;
  /** Lines executed (the read-only ones). */
  readonly executed: number;
  /** bash runs made (two per executed line). */
  readonly runs: number;
  /** Every line where bash and the classifier disagree. */
  readonly differences: readonly OracleDifference[];
  /** Wall-clock time of the whole run. */
  readonly elapsedMs: number;
}

/** Options of {@link runOracle}. */
export interface OracleOptions extends BashOracleOptions {
  /** Lines run at once (default 2: a line is two bash runs and its stubs). */
  readonly concurrency?: number;
  /** The classifier (default {@link classifierReading}); a test can put a wrong one here. */
  readonly classify?: Classify;
  /** Environment of the sessions the classifier is given (default: a plain PATH, HOME, LC_ALL). */
  readonly sessionEnvironment?: Readonly<Record<string, string>>;
  /** Called after each line with the number done so far. */
  readonly onProgress?: (done: number) => void;
}

/** Orders argv lists by their JSON text. */
function compareArgv(a: readonly string[], b: readonly string[]): number {
  const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** How many times each argv list (by its JSON text) occurs. */
function countArgv(commands: readonly (readonly string[])[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const command of commands) {
    const key = JSON.stringify(command);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/**
 * Why what bash ran is not what the classifier read, or null when it is.
 *
 * With every stub exiting the same status, each pipeline of an `&&`/`||`
 * list runs in one run or both (the first, those after `;` or a newline, in
 * both; those after `&&` in the run exiting 0; those after `||` in the one
 * exiting 1). So for each argv list: no run may run it more often than the
 * classifier read it, and the two runs together must run it at least that
 * often. For lists read once (most) this is equality; a list read twice may
 * run once in each run (`false && x || x`: the two `x` are alternatives), so
 * taking the larger count of one run would call a correct reading wrong.
 */
export function disagreement(
  commands: readonly (readonly string[])[],
  execution: Pick<LineExecution, "byStatus">,
): string | null {
  const read = countArgv(commands);
  const runs = execution.byStatus.map(countArgv);
  const problems: string[] = [];
  for (const key of new Set([...read.keys(), ...runs.flatMap((run) => [...run.keys()])])) {
    const expected = read.get(key) ?? 0;
    const counts = runs.map((run) => run.get(key) ?? 0);
    const most = Math.max(...counts);
    const total = counts.reduce((a, b) => a + b, 0);
    if (expected === 0) problems.push(`${key} ran (${counts.join("+")}) but was not read`);
    else if (total === 0) problems.push(`${key} was read but never ran`);
    else if (most > expected) {
      problems.push(`${key} ran ${most} times in one run, read ${expected}`);
    } else if (total < expected) {
      problems.push(`${key} read ${expected} times, ran ${total} in all`);
    }
  }
  return problems.length === 0
    ? null
    : `bash ran other commands than the classifier read: ${problems.join("; ")}`;
}

/**
 * Classifies every line and executes the read-only ones in bash (see
 * {@link createBashOracle}); reports each line where the recorded argv
 * lists are not exactly the classifier's commands, or anything else
 * happened.
 */
export async function runOracle(
  lines: readonly string[],
  options: OracleOptions = {},
): Promise<OracleReport> {
  const started = performance.now();
  const classify = options.classify ?? classifierReading;
  const concurrency = Math.max(1, options.concurrency ?? 2);
  const differences: OracleDifference[] = [];
  let next = 0;
  let done = 0;
  let readOnly = 0;
  let executed = 0;
  const worker = async () => {
    const oracle = await createBashOracle(options);
    try {
      const session = await createSession({
        workingDirectory: oracle.workingDirectory,
        // A fixed plain environment: the host's (a BASH_ENV, a relative PATH entry) would
        // make the classifier refuse everything and the run prove nothing.
        environment: options.sessionEnvironment ??
          { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: oracle.workingDirectory, LC_ALL: "C" },
      });
      while (next < lines.length) {
        const line = lines[next++];
        const reading = await classify(line, session);
        if (reading.readOnly) {
          readOnly++;
          executed++;
          const execution = await oracle.run(line);
          const problems = [...execution.problems];
          if (reading.commands === null) {
            problems.unshift("called read-only, but the lexer refused the line");
          } else {
            const problem = disagreement(reading.commands, execution);
            if (problem !== null) problems.unshift(problem);
          }
          if (problems.length > 0) {
            differences.push({
              line,
              classifier: reading.commands,
              recorded: execution.recorded,
              byStatus: execution.byStatus,
              problems,
            });
          }
        }
        options.onProgress?.(++done);
      }
    } finally {
      await oracle.close();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return {
    lines: lines.length,
    readOnly,
    executed,
    runs: executed * 2,
    differences,
    elapsedMs: performance.now() - started,
  };
}

/** A difference as text: the line as JSON, the classifier's commands, what bash ran, why. */
export function formatDifference(difference: OracleDifference): string {
  return [
    `line:       ${JSON.stringify(difference.line)}`,
    `classifier: ${JSON.stringify(difference.classifier)}`,
    `recorded:   ${JSON.stringify(difference.recorded)}`,
    ...difference.byStatus.map((run, status) =>
      `  stubs exiting ${status}: ${JSON.stringify(run)}`
    ),
    ...difference.problems.map((problem) => `  - ${problem}`),
  ].join("\n");
}
