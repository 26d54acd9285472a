/**
 * A {@link ProcessBackend} whose every process starts inside bubblewrap: it
 * rewrites each request into `bwrap <mounts> -- <command>` and hands it to
 * the backend below, which keeps its process group, its output pipes and
 * its one termination path (bwrap is the group leader). There is no path
 * around it: the wrapped backend is not reachable from the session.
 *
 * @module
 */
import { lstatSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { wrapSpawn } from "../spawn_wrapper.ts";
import { ToolError } from "../../errors.ts";
import type { ProcessBackend } from "../process.ts";
import { unwrapCheckedPath } from "../../path/checked_path.ts";
import process from "node:process";
import { bwrapArguments } from "./bwrap_arguments.ts";
import { unixSocketFilter } from "./seccomp.ts";
import type { SandboxPlan } from "./bwrap_arguments.ts";

/**
 * The git directories inside the writable directories (a `.git` directory,
 * or a writable directory that is one), whose hooks and config run code the
 * next time git is used there, outside the sandbox. Looked up at each start,
 * as a command may have made a repository since; a `.git` file (a worktree,
 * a submodule) points to a git directory elsewhere, read-only unless listed
 * writable.
 */
export function gitDirectories(writable: readonly string[]): string[] {
  const found: string[] = [];
  for (const directory of writable) {
    if (directory.endsWith("/.git")) found.push(directory);
    const inside = `${directory === "/" ? "" : directory}/.git`;
    // Only a directory that is itself there: a link named .git (a command may make one) would
    // have bwrap mount, writable, whatever it leads to.
    if (isRealDirectory(inside)) found.push(inside);
  }
  for (const git of found) {
    // A repository without hooks (git init --template=) gets an empty directory, mounted read-only
    // like any other: a missing one would be left for a command to make.
    try {
      mkdirSync(`${git}/hooks`);
    } catch {
      // There already, or not ours to make: bwrap mounts what is there.
    }
  }
  return found;
}

/** Whether `path` is a directory, not a link to one, at its own real path. */
function isRealDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory() && realpathSync(path) === path;
  } catch {
    return false;
  }
}

/** Whether `path` is a directory now (following links, as bwrap does). */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Run first inside the sandbox: gives the command `/dev/null` as standard
 * input (bwrap read its own, the seccomp filter, and closed it), closes
 * every descriptor past standard error that the process inherited (one the
 * host opened on a file outside, say, without close-on-exec), then runs the
 * command in its place.
 */
const CLOSE_INHERITED = "exec </dev/null; for fd in /proc/self/fd/*; do fd=${fd##*/}; " +
  'if [ "$fd" -gt 2 ] && [ -e "/proc/self/fd/$fd" ]; then exec {fd}>&-; fi; done; exec "$@"';

/**
 * Wraps `inner` so that every process it starts runs in the sandbox of `plan`.
 *
 * @throws {RangeError} when the plan has no network and there is no seccomp
 *   filter for this architecture (see `seccomp.ts`).
 */
export function sandboxedProcesses(inner: ProcessBackend, plan: SandboxPlan): ProcessBackend {
  const filter = plan.network === "none" ? unixSocketFilter(process.arch) : undefined;
  return wrapSpawn(inner, (request) => {
    // bwrap would refuse to start too, with a message of its own in the command's stderr.
    const gone = [...plan.writable, ...(plan.skillRoot === null ? [] : [plan.skillRoot])]
      .find((directory) => !isDirectory(directory));
    if (gone !== undefined) {
      return Promise.reject(
        new ToolError(
          "spawn_failed",
          `The sandbox cannot start: ${gone}, which it mounts, is no longer a directory. ` +
            "Make it again, or create a new session.",
        ),
      );
    }
    return inner.spawn({
      ...request,
      command: plan.bwrap,
      args: [
        ...bwrapArguments(plan, unwrapCheckedPath(request.cwd), gitDirectories(plan.writable)),
        plan.bash ?? "bash",
        "-c",
        CLOSE_INHERITED,
        "bash",
        request.command,
        ...request.args,
      ],
      // Read by bwrap (`--seccomp 0`, see SECCOMP_DESCRIPTOR) before the command starts.
      ...(filter === undefined ? {} : { input: filter }),
    });
  });
}
