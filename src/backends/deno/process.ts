/**
 * The Deno backend of {@link ProcessBackend}, on `Deno.Command` with
 * `detached: true`, which starts each process in a new session and group.
 *
 * @module
 */
import "./permission_query.ts"; // registers Deno's answer to permissionState
import type { ProcessBackend, ProcessExit, TerminationTiming } from "../process.ts";
import { webStreamOutput } from "../stream_output.ts";
import { unwrapCheckedPath } from "../../path/checked_path.ts";
import { ToolError } from "../../errors.ts";
import { codeOfRuntimeError } from "../errors.ts";
import { localHelpers } from "../local_process_groups.ts";
import type { BashRunner, DirectSignaller } from "../local_process_groups.ts";
import { checkTiming, OwnedGroups, ownedHandle } from "../process_group.ts";
import { Descendants, MARKER_VARIABLE } from "../descendants.ts";
import { HELPER_PATH } from "../helper_bash.ts";

const direct: DirectSignaller = (target, signal) => {
  try {
    // Deno takes no signal 0; SIGCONT is harmless to probe with, and it
    // wakes a stopped member so that a pending SIGTERM can take effect.
    Deno.kill(target, signal === "probe" ? "SIGCONT" : signal);
    return true;
  } catch (error) {
    const { name, code } = error as { name?: string; code?: string };
    if (name === "NotCapable") throw error;
    return !(code === "ESRCH" || name === "NotFound");
  }
};
/** Runs scripts with the bash at `program` (never one the session's `PATH` finds). */
const bashRunner = (program: string): BashRunner => async (script, args) => {
  const { code, stdout } = await new Deno.Command(program, {
    args: ["-c", script, "bash", ...args],
    env: { PATH: HELPER_PATH },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return { code, stdout: new TextDecoder().decode(stdout) };
};

/** The group control and process table of each bash the helpers run, made on first use. */
const helpersOf = localHelpers(direct, bashRunner);

/**
 * Makes the Deno process backend.
 *
 * @example
 * ```ts
 * import { createDenoProcessBackend } from "@openwork/tools/deno";
 * const processes = createDenoProcessBackend({ graceMs: 500 });
 * ```
 */
export function createDenoProcessBackend(timing: TerminationTiming = {}): ProcessBackend {
  checkTiming("createDenoProcessBackend", timing);
  const owned = new OwnedGroups();
  return {
    get owned() {
      return owned.size;
    },
    shutdown: () => owned.shutdown(),
    spawn(request) {
      // Every descendant inherits the marker, by which the sweep finds it outside the group.
      const id = crypto.randomUUID();
      let child: Deno.ChildProcess;
      try {
        child = new Deno.Command(request.command, {
          args: [...request.args],
          cwd: unwrapCheckedPath(request.cwd),
          env: { ...request.env, [MARKER_VARIABLE]: id },
          clearEnv: true,
          stdin: request.input === undefined ? "null" : "piped",
          stdout: "piped",
          stderr: "piped",
          detached: true,
        }).spawn();
      } catch (error) {
        const code = codeOfRuntimeError(error) === "runtime_permission_denied"
          ? "runtime_permission_denied"
          : "spawn_failed";
        const message = error instanceof Error ? error.message : String(error);
        return Promise.reject(
          new ToolError(code, `Could not start ${request.command}: ${message}`, { cause: error }),
        );
      }
      if (request.input !== undefined) {
        // A process that exits without reading it all gets a closed pipe: nothing to report.
        const writer = child.stdin.getWriter();
        writer.write(request.input).then(() => writer.close()).catch(() => {});
      }
      const exited = child.status.then((status): ProcessExit => ({
        code: status.signal === null ? status.code : null,
        signal: status.signal,
      }));
      const { control, table } = helpersOf(request.shell);
      return Promise.resolve(ownedHandle(
        owned,
        {
          pid: child.pid,
          // Deno's child pipes are byte streams, read into one reused buffer.
          stdout: webStreamOutput(child.stdout),
          stderr: webStreamOutput(child.stderr),
          exited,
        },
        control,
        timing,
        new Descendants(child.pid, `${MARKER_VARIABLE}=${id}`, table, exited),
      ));
    },
  };
}
