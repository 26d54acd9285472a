/**
 * The read-only classifier and the acceptEdits file-system gate for `bash`.
 *
 * A command is read-only only when bash would run exactly the simple
 * commands the lexer read (see `shell_lexer.ts`), each a program of a closed
 * whitelist named by its bare name, its words split as the program's own
 * option parser splits them into options from a closed read-only set and
 * operands (see `programs.ts`), every file it names resolving inside the
 * roots as the read tool's boundary resolves it, and the session's
 * environment not changing what bash runs. Anything not proven fails closed,
 * and so does a command whose check would pass the bounds of
 * `classification_budget.ts`: a long command is answered at once, and the
 * call's signal stops the check between two file-system lookups.
 *
 * The file-system gate admits mkdir, touch, cp, mv and rmdir whose every
 * path, including a target directory in any spelling, resolves inside the
 * working directory and outside protected directories.
 *
 * @module
 */
import { posix } from "node:path";
import type { ToolSessionContext } from "../contract/context.ts";
import { existingPrefix, isWithin } from "../path/mod.ts";
import type { CommandClassification } from "../contract/effects.ts";
import { NotAdmitted, parseArguments, type ParsedArguments } from "./arguments.ts";
import { GATE_PROGRAMS, type GatePaths, READ_ONLY_PROGRAMS } from "./programs.ts";
import { parseLiteralCommands } from "./shell_lexer.ts";
import {
  ClassificationBudget,
  lookupsOfPath,
  MAX_CLASSIFIED_COMMAND_LENGTH,
  OverBudget,
} from "./classification_budget.ts";

/** Environment variables with which the same text runs differently in bash or in a program. */
const CHANGES_WHAT_RUNS = [
  "BASH_ENV",
  "ENV",
  "BASHOPTS",
  "SHELLOPTS",
  "POSIXLY_CORRECT",
  "SIMPLE_BACKUP_SUFFIX",
  // tree writes its listing to the descriptor this names, an inherited one among them.
  "STDDATA_FD",
];

/**
 * Lists of files or directories in the environment that pick what runs: a
 * relative entry (an empty one means the current directory) or one inside
 * the roots lets a file there answer for a whitelisted program or load into
 * it. ripgrep reads options (`--pre` among them) from RIPGREP_CONFIG_PATH.
 */
const PATH_LISTS: readonly (readonly [name: string, separators: RegExp])[] = [
  ["PATH", /:/],
  // glibc splits these on `;` too.
  ["LD_LIBRARY_PATH", /[:;]/],
  ["LD_PRELOAD", /[: ]/],
  ["LD_AUDIT", /[:;]/],
  ["GCONV_PATH", /:/],
  ["LOCPATH", /:/],
  ["RIPGREP_CONFIG_PATH", /$^/],
  // Where sort and tac put temporary files.
  ["TMPDIR", /$^/],
];

/** Whether an absolute path, with every link in it followed, lies in a root (or cannot be told). */
async function resolvesInsideRoots(
  path: string,
  session: ToolSessionContext,
  budget: ClassificationBudget,
): Promise<boolean> {
  budget.spend(lookupsOfPath(path));
  let full: string;
  try {
    const { real, missing } = await existingPrefix(session.filesystem, path, path);
    full = posix.join(real, ...missing);
  } catch {
    return true; // unknown (a dangling link, an unreadable prefix): counted as inside
  }
  return [session.workingDirectory, session.skillRoot].some((root) =>
    root !== null && isWithin(root, full)
  );
}

/**
 * Why the session's environment stops any command from being proven, or
 * null. bash reads a file named by BASH_ENV before the command, imports
 * functions (`BASH_FUNC_name%%`) that shadow programs, and enables options
 * from BASHOPTS and SHELLOPTS; POSIXLY_CORRECT changes how GNU programs
 * split their words (and SIMPLE_BACKUP_SUFFIX where cp and mv put backups);
 * STDDATA_FD makes tree write to a descriptor; a name holding `=` is read
 * by a process as the name before it; and see {@link PATH_LISTS}.
 * Entries are resolved as the read tool resolves a path, so a link into the
 * working directory counts as inside; their lookups are spent from `budget`.
 */
export async function environmentProblem(
  session: ToolSessionContext,
  budget: ClassificationBudget = new ClassificationBudget(),
): Promise<string | null> {
  const environment = session.environment;
  for (const name of Object.keys(environment)) {
    // A process splits `NAME=value` at its first `=`, so a name holding one sets the variable
    // named by what comes before it (`"PATH=.": "x"` is PATH `.=x`), which no check here sees.
    if (name.includes("=")) {
      return `the environment has the name ${JSON.stringify(name)}, read by a process as ${
        JSON.stringify(name.slice(0, name.indexOf("=")))
      }`;
    }
    if (CHANGES_WHAT_RUNS.includes(name)) return `the environment sets ${name}`;
    if (name.startsWith("BASH_FUNC_")) return `the environment defines a shell function (${name})`;
  }
  if (environment.PATH === undefined) return "the environment has no PATH";
  for (const [name, separators] of PATH_LISTS) {
    const value = environment[name];
    if (value === undefined || (name !== "PATH" && value === "")) continue;
    for (const entry of value.split(separators)) {
      if (name === "LD_PRELOAD" && entry === "") continue; // separators may repeat there
      if (!entry.startsWith("/") || entry.split("/").includes("..") || entry.includes("$")) {
        return `${name} holds the entry ${
          JSON.stringify(entry)
        }: relative, climbing with '..' or holding '$'`;
      }
      if (await resolvesInsideRoots(entry, session, budget)) {
        return `${name} holds ${JSON.stringify(entry)}, inside the roots`;
      }
    }
  }
  return null;
}

/** The files a read-only command reads, and whether directories among them are refused. */
export interface ReadPaths {
  /** Operands and option values that name files, as written. */
  readonly paths: readonly string[];
  /** Whether a directory among them is refused (see `ProgramModel.noDirectories`). */
  readonly noDirectories: boolean;
}

/**
 * The files a simple command reads when it is on the read-only whitelist;
 * throws {@link NotAdmitted} with the reason when it is not.
 */
export function readOnlyPaths(words: readonly string[]): ReadPaths {
  const [name, ...args] = words;
  if (name.includes("/")) throw new NotAdmitted(`${name} is named by a path, not a bare name`);
  const model = READ_ONLY_PROGRAMS.get(name);
  if (model === undefined) throw new NotAdmitted(`${name} is not on the read-only whitelist`);
  const parsed: ParsedArguments = model.syntax === null
    ? { options: [], operands: args }
    : parseArguments(name, model.syntax, args);
  return { paths: model.read(parsed, args), noDirectories: model.noDirectories === true };
}

/**
 * Whether a `..` in `path` follows a symbolic link (or a prefix that cannot
 * be examined). Prefixes are examined in order, so every earlier `..` is
 * already known to follow a plain directory, where the text and the kernel
 * agree.
 */
async function linkBeforeParent(
  path: string,
  session: ToolSessionContext,
  budget: ClassificationBudget,
): Promise<boolean> {
  const segments = path.split("/");
  for (let i = 1; i < segments.length; i++) {
    if (segments[i] !== "..") continue;
    const kind = await kindAt(segments.slice(0, i).join("/") || "/", session, budget);
    if (kind === null || kind === "symlink") return true;
  }
  return false;
}

/** What a path names without following a final link: its kind, or null when nothing is there. */
async function kindAt(
  path: string,
  session: ToolSessionContext,
  budget: ClassificationBudget,
): Promise<string | null> {
  budget.spend(1);
  const absolute = posix.join(path.startsWith("/") ? "" : session.workingDirectory, path);
  const info = await session.filesystem.lstat(absolute).catch(() => null);
  return info?.kind ?? null;
}

/**
 * Why `path`, as a program would read it, is not inside the roots (or is a
 * directory, or the working directory itself, when `refuse` says so); null
 * when it is fine.
 *
 * A `..` segment after a symbolic link is refused: the kernel resolves
 * `link/..` from the link's target, while some runtimes (Deno under scoped
 * permissions) normalize the text before resolving it. The file-system gate
 * refuses every `..`: rmdir -p and mkdir -p walk the text.
 */
async function outsideRoots(
  path: string,
  access: "read" | "write",
  session: ToolSessionContext,
  budget: ClassificationBudget,
  refuse: { readonly directories?: boolean; readonly workingDirectory?: boolean } = {},
): Promise<string | null> {
  // `-` is checked as a name too: standard input to cat, it is a name to ls, du and tree.
  // clap (rg) also reads `-f=FILE` as FILE: both readings must be inside.
  const readings = path.startsWith("=") && path.length > 1 ? [path, path.slice(1)] : [path];
  for (const reading of readings) {
    // Counted before any lookup: an exhausted budget or an abort is no answer about the path.
    budget.spend(lookupsOfPath(reading) + (refuse.directories ? 1 : 0));
    if (
      reading.split("/").includes("..") &&
      (access === "write" || await linkBeforeParent(reading, session, budget))
    ) {
      return `${JSON.stringify(reading)} climbs with '..'${
        access === "read" ? " after a symbolic link" : ""
      }`;
    }
    try {
      const checked = await session.resolvePath(reading, access, "may_create");
      if (refuse.workingDirectory && checked.display === ".") {
        return `${JSON.stringify(reading)} is the working directory itself`;
      }
      if (refuse.directories && checked.existed) {
        const info = await session.filesystem.stat(checked);
        if (info.kind !== "file") return `${JSON.stringify(reading)} is not a regular file`;
      }
    } catch (error) {
      return `${JSON.stringify(reading)}: ${(error as Error).message}`;
    }
  }
  return null;
}

/** Why a simple command fails the file-system gate, or null when it passes. */
async function gateViolation(
  words: readonly string[],
  session: ToolSessionContext,
  budget: ClassificationBudget,
): Promise<string | null> {
  const [name, ...args] = words;
  const gate = GATE_PROGRAMS.get(name);
  if (gate === undefined) return `${name} is not a file-system gate command`;
  let paths;
  try {
    paths = gate.paths(parseArguments(name, gate.syntax, args));
  } catch (error) {
    if (error instanceof NotAdmitted) return error.message;
    throw error;
  }
  if (paths.write.length === 0) return `${name} has no path operand`;
  for (const [list, access] of [[paths.read, "read"], [paths.write, "write"]] as const) {
    for (const path of list) {
      if (path === "") return `${name} has an empty path`;
      // What the command removes or moves away is never the working directory itself.
      const workingDirectory = paths.remove.includes(path);
      const problem = await outsideRoots(path, access, session, budget, { workingDirectory });
      if (problem !== null) return `${name} path ${problem}`;
    }
  }
  return paths.copies === undefined
    ? null
    : await copyViolation(name, paths.copies, session, budget);
}

/**
 * cp and mv write where the destination leads, not only at the operand: into
 * `DIR/NAME` when the destination is a directory, through a link found there,
 * and a moved or copied link points elsewhere from its new place. So every
 * source must be a regular file, and every file written (the destination, or
 * `DIR/basename(SOURCE)`) must not be a link and must pass the write check.
 */
async function copyViolation(
  name: string,
  copies: NonNullable<GatePaths["copies"]>,
  session: ToolSessionContext,
  budget: ClassificationBudget,
): Promise<string | null> {
  for (const source of copies.sources) {
    if (await kindAt(source, session, budget) !== "file") {
      return `${name} source ${JSON.stringify(source)} is not a regular file`;
    }
  }
  const destinationKind = await kindAt(copies.destination, session, budget);
  if (destinationKind === "symlink") {
    return `${name} destination ${JSON.stringify(copies.destination)} is a symbolic link`;
  }
  const targets = copies.intoDirectory || destinationKind === "directory"
    ? copies.sources.map((source) => posix.join(copies.destination, posix.basename(source)))
    : [copies.destination];
  for (const target of targets) {
    if (await kindAt(target, session, budget) === "symlink") {
      return `${name} would write through the symbolic link ${JSON.stringify(target)}`;
    }
    const problem = await outsideRoots(target, "write", session, budget);
    if (problem !== null) return `${name} target ${problem}`;
  }
  return null;
}

/** The classification of a command that was not proven, for the reason `why`. */
function refuse(why: string): CommandClassification {
  return { readOnly: false, fileSystemGate: false, reason: `not proven read-only: ${why}` };
}

/** Options of {@link classifyCommand}. */
export interface ClassifyOptions {
  /** Stops the classification between two file-system lookups; it then throws the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * Classifies a `bash` command: read-only by the closed whitelist, and/or
 * admitted by the acceptEdits file-system gate. Fails closed, also for a
 * command longer than 16 KiB or whose paths would take more than 1024
 * file-system lookups to check (see `classification_budget.ts`).
 *
 * @example
 * ```ts
 * import { classifyCommand, createSession } from "@openwork/tools";
 * const session = await createSession({ workingDirectory: Deno.cwd() });
 * console.log((await classifyCommand("ls -la | wc -l", session)).readOnly); // true
 * console.log((await classifyCommand("ls > out", session)).readOnly); // false
 * ```
 */
export async function classifyCommand(
  command: string,
  session: ToolSessionContext,
  options: ClassifyOptions = {},
): Promise<CommandClassification> {
  options.signal?.throwIfAborted();
  if (command.length > MAX_CLASSIFIED_COMMAND_LENGTH) {
    return refuse(
      `the command is longer than ${MAX_CLASSIFIED_COMMAND_LENGTH} characters, past which a ` +
        "command is not classified",
    );
  }
  try {
    return await classifyLine(command, session, new ClassificationBudget(options.signal));
  } catch (error) {
    if (error instanceof OverBudget) return refuse(error.message);
    throw error;
  }
}

/** {@link classifyCommand} for a command within the length bound, spending `budget`. */
async function classifyLine(
  command: string,
  session: ToolSessionContext,
  budget: ClassificationBudget,
): Promise<CommandClassification> {
  const parsed = parseLiteralCommands(command);
  if (!parsed.ok) return refuse(parsed.reason);
  const environment = await environmentProblem(session, budget);
  if (environment !== null) return refuse(environment);
  let readOnly = true;
  for (const { words } of parsed.commands) {
    // A file-system command changes what the paths after it (or beside it, in a pipeline)
    // lead to, and every path of the line is checked before any of it runs.
    if (parsed.commands.length > 1 && GATE_PROGRAMS.has(words[0])) {
      return refuse(`${words[0]} is admitted as a file-system command only alone on its line`);
    }
    let violation: string | null = null;
    try {
      const { paths, noDirectories } = readOnlyPaths(words);
      for (const path of paths) {
        const problem = await outsideRoots(path, "read", session, budget, {
          directories: noDirectories,
        });
        if (problem !== null) {
          violation = `${words[0]} reads ${problem}`;
          break;
        }
      }
    } catch (error) {
      if (!(error instanceof NotAdmitted)) throw error;
      violation = error.message;
    }
    if (violation === null) continue;
    readOnly = false;
    const gateProblem = await gateViolation(words, session, budget);
    if (gateProblem !== null) {
      return refuse(GATE_PROGRAMS.has(words[0]) ? `${violation}; ${gateProblem}` : violation);
    }
  }
  return readOnly
    ? {
      readOnly: true,
      fileSystemGate: false,
      reason: "every command is on the read-only whitelist and reads inside the roots",
    }
    : {
      readOnly: false,
      fileSystemGate: true,
      reason: "file-system commands on literal paths inside the working directory",
    };
}
