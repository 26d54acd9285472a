/**
 * The read-only classifier and the acceptEdits file-system gate for `bash`.
 *
 * A command is read-only only when bash would run exactly the simple
 * commands the lexer read (see `shell_lexer.ts`), each a program of a closed
 * whitelist named by its bare name, its words split as the program's own
 * option parser splits them into options from a closed read-only set and
 * operands (see `programs.ts`), every file it names resolving inside the
 * roots as the read tool's boundary resolves it, and the session's
 * environment not changing what bash runs. Anything not proven fails closed.
 *
 * The file-system gate admits mkdir, touch, cp, mv and rmdir whose every
 * path, including a target directory in any spelling, resolves inside the
 * working directory and outside protected directories.
 *
 * @module
 */
import type { ToolSessionContext } from "../contract/context.ts";
import type { CommandClassification } from "../contract/effects.ts";
import { NotAdmitted, parseArguments, type ParsedArguments } from "./arguments.ts";
import { GATE_PROGRAMS, READ_ONLY_PROGRAMS } from "./programs.ts";
import { parseLiteralCommands } from "./shell_lexer.ts";

/** Environment variables with which the same text runs differently in bash or in a program. */
const CHANGES_WHAT_RUNS = [
  "BASH_ENV",
  "ENV",
  "BASHOPTS",
  "SHELLOPTS",
  "POSIXLY_CORRECT",
  "SIMPLE_BACKUP_SUFFIX",
];

/**
 * Why the session's environment stops any command from being proven, or
 * null. bash reads a file named by BASH_ENV before the command, imports
 * functions (`BASH_FUNC_name%%`) that shadow programs, and enables options
 * from BASHOPTS and SHELLOPTS; POSIXLY_CORRECT changes how GNU programs
 * split their words (and SIMPLE_BACKUP_SUFFIX where cp and mv put backups); a PATH entry that is relative or inside the working
 * directory lets a file there answer for a whitelisted name.
 */
export function environmentProblem(
  environment: Readonly<Record<string, string>>,
  workingDirectory: string,
): string | null {
  for (const name of Object.keys(environment)) {
    if (CHANGES_WHAT_RUNS.includes(name)) return `the environment sets ${name}`;
    if (name.startsWith("BASH_FUNC_")) return `the environment defines a shell function (${name})`;
  }
  const path = environment.PATH;
  if (path === undefined) return "the environment has no PATH";
  for (const entry of path.split(":")) {
    if (!entry.startsWith("/")) {
      return `PATH holds the relative entry ${JSON.stringify(entry)}`;
    }
    const normal = entry.replace(/\/+$/, "");
    if (normal === workingDirectory || normal.startsWith(workingDirectory + "/")) {
      return `PATH holds ${JSON.stringify(entry)}, inside the working directory`;
    }
  }
  return null;
}

/**
 * The files a simple command reads when it is on the read-only whitelist;
 * throws {@link NotAdmitted} with the reason when it is not.
 */
export function readOnlyPaths(words: readonly string[]): readonly string[] {
  const [name, ...args] = words;
  if (name.includes("/")) throw new NotAdmitted(`${name} is named by a path, not a bare name`);
  const model = READ_ONLY_PROGRAMS.get(name);
  if (model === undefined) throw new NotAdmitted(`${name} is not on the read-only whitelist`);
  const parsed: ParsedArguments = model.syntax === null
    ? { options: [], operands: args }
    : parseArguments(name, model.syntax, args);
  return model.read(parsed, args);
}

/** Why `path`, as a program would read it, is not inside the roots; null when it is. */
async function outsideRoots(
  path: string,
  access: "read" | "write",
  session: ToolSessionContext,
): Promise<string | null> {
  if (path === "-" && access === "read") return null; // standard input
  // clap (rg) also reads `-f=FILE` as FILE: both readings must be inside.
  const readings = path.startsWith("=") && path.length > 1 ? [path, path.slice(1)] : [path];
  for (const reading of readings) {
    try {
      await session.resolvePath(reading, access, "may_create");
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
  for (const path of paths.remove) {
    const checked = await session.resolvePath(path, "write", "may_create").catch(() => null);
    if (checked?.display === ".") return `${name} would remove or move the working directory`;
  }
  for (const [list, access] of [[paths.read, "read"], [paths.write, "write"]] as const) {
    for (const path of list) {
      // `..` is refused outright: rmdir -p and mkdir -p walk the text, not the resolved path.
      if (path === "" || path.split("/").includes("..")) {
        return `${name} path ${JSON.stringify(path)} is empty or climbs with '..'`;
      }
      const problem = await outsideRoots(path, access, session);
      if (problem !== null) return `${name} path ${problem}`;
    }
  }
  return null;
}

/**
 * Classifies a `bash` command: read-only by the closed whitelist, and/or
 * admitted by the acceptEdits file-system gate. Fails closed.
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
): Promise<CommandClassification> {
  const refuse = (why: string): CommandClassification => ({
    readOnly: false,
    fileSystemGate: false,
    reason: `not proven read-only: ${why}`,
  });
  const parsed = parseLiteralCommands(command);
  if (!parsed.ok) return refuse(parsed.reason);
  const environment = environmentProblem(session.environment, session.workingDirectory);
  if (environment !== null) return refuse(environment);
  let readOnly = true;
  for (const { words } of parsed.commands) {
    let violation: string | null = null;
    try {
      for (const path of readOnlyPaths(words)) {
        const problem = await outsideRoots(path, "read", session);
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
    const gateProblem = await gateViolation(words, session);
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
