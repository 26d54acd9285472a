/**
 * The Node backend of {@link ProcessBackend}, on `node:child_process`: each
 * process is detached into a process group of its own.
 *
 * @module
 */
import { execFile, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import type { ProcessBackend, ProcessExit, ProcessOutput } from "../process.ts";
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
 * A web stream over a Node pipe, pulled: the pipe stays in paused mode and a
 * chunk is read only when the consumer asks, so a fast writer waits in the
 * pipe, not in memory. Cheaper per chunk than `Readable.toWeb`.
 */
function webStream(pipe: Readable): ReadableStream<Uint8Array> {
  let ended = false;
  let failure: unknown = null;
  const wakers = new Set<() => void>();
  const wake = () => {
    for (const waker of wakers) waker();
    wakers.clear();
  };
  pipe.on("readable", wake);
  pipe.once("end", () => {
    ended = true;
    wake();
  });
  pipe.once("error", (error) => {
    failure = error;
    wake();
  });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (true) {
        const chunk = pipe.read() as Uint8Array | null;
        if (chunk !== null) return controller.enqueue(chunk);
        if (failure !== null) return controller.error(failure);
        if (ended) return controller.close();
        await new Promise<void>((resolve) => wakers.add(resolve));
      }
    },
    cancel() {
      pipe.destroy();
      wake();
    },
  }, { highWaterMark: 0 });
}

/**
 * Under Node, a pipe's own async iterator is its fastest reader. Deno's Node
 * layer does not pace that iterator, so there the pulled web stream is used.
 */
function output(pipe: Readable): ProcessOutput {
  if (process.versions.deno !== undefined) return webStream(pipe);
  // Flowing 'data' events into a short queue: the pipe pauses while the queue
  // is full, and no chunk is concatenated or copied on the way.
  const queue: Uint8Array[] = [];
  let ended = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const signal = () => {
    wake?.();
    wake = null;
  };
  pipe.on("data", (chunk: Uint8Array) => {
    queue.push(chunk);
    if (queue.length >= 8) pipe.pause();
    signal();
  });
  pipe.once("end", () => {
    ended = true;
    signal();
  });
  pipe.once("error", (error) => {
    failure = error;
    signal();
  });
  return {
    [Symbol.asyncIterator]: () => ({
      async next(): Promise<IteratorResult<Uint8Array>> {
        while (true) {
          const chunk = queue.shift();
          if (chunk !== undefined) {
            if (queue.length < 2 && pipe.isPaused()) pipe.resume();
            return { done: false, value: chunk };
          }
          if (failure !== null) throw failure;
          if (ended) return { done: true, value: undefined };
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
      // Destroying the pipe is what ends a read still pending.
      return(): Promise<IteratorResult<Uint8Array>> {
        pipe.destroy();
        ended = true;
        signal();
        return Promise.resolve({ done: true, value: undefined });
      },
    }),
  };
}

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
          stdout: output(child.stdout!),
          stderr: output(child.stderr!),
          exited,
        },
        control,
        timing,
      );
    },
  };
}
