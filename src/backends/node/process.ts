/**
 * The Node backend of {@link ProcessBackend}, on `node:child_process`: each
 * process is detached into a process group of its own.
 *
 * @module
 */
import { execFile, spawn } from "node:child_process";
import { Readable } from "node:stream";
import type { ProcessBackend, ProcessExit } from "../process.ts";
import { unwrapCheckedPath } from "../../path/checked_path.ts";
import { ToolError } from "../../contract/errors.ts";
import { codeOfRuntimeError } from "../errors.ts";
import { groupControl, OwnedGroups, ownedHandle } from "../process_group.ts";
import type { GroupControl, TerminationTiming } from "../process_group.ts";

const control: GroupControl = groupControl(
  (pgid, signal) => {
    try {
      process.kill(-pgid, signal === "probe" ? 0 : signal);
      return true;
    } catch (error) {
      const { code, name } = error as { code?: string; name?: string };
      if (name === "NotCapable") throw error;
      return code !== "ESRCH";
    }
  },
  (script, args) =>
    new Promise((resolve, reject) => {
      execFile("bash", ["-c", script, "bash", ...args], {
        env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
      }, (error, stdout) => {
        const code = error === null ? 0 : (error as { code?: unknown }).code;
        if (typeof code !== "number") reject(error);
        else resolve({ code, stdout: String(stdout) });
      });
    }),
);

/**
 * Makes the Node process backend.
 *
 * @example
 * ```ts
 * import { createNodeProcessBackend } from "@openwork/tools";
 * const processes = createNodeProcessBackend({ graceMs: 500 });
 * ```
 */
export function createNodeProcessBackend(timing: TerminationTiming = {}): ProcessBackend {
  const owned = new OwnedGroups();
  return {
    get owned() {
      return owned.size;
    },
    shutdown: () => owned.shutdown(),
    async spawn(request) {
      const child = spawn(request.command, [...request.args], {
        cwd: unwrapCheckedPath(request.cwd),
        env: { ...request.env },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const exited = new Promise<ProcessExit>((resolve) => {
        child.once("exit", (code, signal) => resolve({ code, signal }));
      });
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", (error) => {
          const code = codeOfRuntimeError(error) === "runtime_permission_denied"
            ? "runtime_permission_denied"
            : "spawn_failed";
          reject(
            new ToolError(code, `Could not start ${request.command}: ${error.message}`, {
              cause: error,
            }),
          );
        });
      });
      return ownedHandle(
        owned,
        {
          pid: child.pid!,
          stdout: Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
          stderr: Readable.toWeb(child.stderr!) as ReadableStream<Uint8Array>,
          exited,
        },
        control,
        timing,
      );
    },
  };
}
