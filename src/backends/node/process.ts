/**
 * The Node backend of {@link ProcessBackend}, on `node:child_process`: each
 * process is detached into a process group of its own.
 *
 * @module
 */
import { execFile, spawn } from "node:child_process";
import { Socket } from "node:net";
import type { SocketConstructorOpts } from "node:net";
import process from "node:process";
import type { Readable } from "node:stream";
import type { ProcessBackend, ProcessExit, ProcessOutput, PushedOutput } from "../process.ts";
import { unwrapCheckedPath } from "../../path/checked_path.ts";
import { ToolError } from "../../contract/errors.ts";
import { codeOfRuntimeError } from "../errors.ts";
import { groupControl, OwnedGroups, ownedHandle } from "../process_group.ts";
import { discardFd, FifoPool } from "./fifo.ts";
import type { PipeEnds } from "./fifo.ts";
import { isDeno } from "../../runtime/checks.ts";
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
 * A pipe's end and failure, and a way for a reader to wait for its next
 * event (`wake` is called by the reader's own data listener too).
 */
function watchPipe(pipe: Readable) {
  const state = { ended: false, failure: null as unknown };
  const waiting = new Set<() => void>();
  const wake = () => {
    for (const resolve of waiting) resolve();
    waiting.clear();
  };
  pipe.once("end", () => {
    state.ended = true;
    wake();
  });
  pipe.once("error", (error) => {
    state.failure = error;
    wake();
  });
  return { state, wake, changed: () => new Promise<void>((resolve) => waiting.add(resolve)) };
}

/**
 * A web stream over a Node pipe, pulled: the pipe stays in paused mode and a
 * chunk is read only when the consumer asks, so a fast writer waits in the
 * pipe, not in memory. Cheaper per chunk than `Readable.toWeb`.
 */
function webStream(pipe: Readable): ReadableStream<Uint8Array> {
  const { state, wake, changed } = watchPipe(pipe);
  pipe.on("readable", wake);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (true) {
        const chunk = pipe.read() as Uint8Array | null;
        if (chunk !== null) return controller.enqueue(chunk);
        if (state.failure !== null) return controller.error(state.failure);
        if (state.ended) return controller.close();
        await changed();
      }
    },
    cancel() {
      pipe.destroy();
      wake();
    },
  }, { highWaterMark: 0 });
}

/** Bytes of the one buffer a pushed pipe reads into. */
const READ_BYTES = 64 * 1024;

/** The FIFOs every Node process backend of this process takes its pipes from. */
const fifos = new FifoPool();

/**
 * The read end of a pipe, read by a socket into one reused buffer (the
 * documented `onread` option of `net.Socket`), so `yes` makes no garbage:
 * Node's pipe streams allocate a buffer per read, which the collector frees
 * late (tens of MiB while a command floods its output). The socket is made
 * when reading starts, so nothing is read before there is a reader.
 */
function pushedOutput(fd: number): PushedOutput {
  let socket: Socket | null = null;
  let closed = false;
  return {
    forEach(take) {
      if (socket !== null) return Promise.reject(new Error("The pipe is already being read."));
      if (closed) return Promise.resolve();
      let failure: unknown = null;
      const onread = {
        buffer: new Uint8Array(READ_BYTES),
        callback(bytes: number, buffer: Uint8Array): boolean {
          if (failure !== null) return false;
          try {
            take(buffer.subarray(0, bytes));
            return true;
          } catch (error) {
            failure = error;
            reading.destroy();
            return false;
          }
        },
      };
      const reading = new Socket(
        { fd, readable: true, writable: false, onread } as SocketConstructorOpts,
      );
      socket = reading;
      return new Promise<void>((resolve, reject) => {
        const settle = () => failure === null ? resolve() : reject(failure);
        reading.once("error", (error) => failure ??= error);
        reading.once("end", () => {
          reading.destroy();
          settle();
        });
        reading.once("close", settle);
      });
    },
    close() {
      if (closed) return;
      closed = true;
      if (socket !== null) socket.destroy();
      else discardFd(fd);
    },
  };
}

/**
 * Under Node, flowing 'data' events into a short queue: the pipe pauses while
 * the queue is full, and no chunk is concatenated or copied on the way.
 * Deno's Node layer does not pace a flowing pipe, so there the pulled web
 * stream is used.
 */
function output(pipe: Readable): ProcessOutput {
  if (isDeno) return webStream(pipe);
  const { state, wake, changed } = watchPipe(pipe);
  const queue: Uint8Array[] = [];
  pipe.on("data", (chunk: Uint8Array) => {
    queue.push(chunk);
    if (queue.length >= 8) pipe.pause();
    wake();
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
          if (state.failure !== null) throw state.failure;
          if (state.ended) return { done: true, value: undefined };
          await changed();
        }
      },
      // Destroying the pipe is what ends a read still pending.
      return(): Promise<IteratorResult<Uint8Array>> {
        pipe.destroy();
        state.ended = true;
        wake();
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
 * import { createNodeProcessBackend } from "@openwork/tools/node";
 * const processes = createNodeProcessBackend({ graceMs: 500 });
 * ```
 */
export function createNodeProcessBackend(timing: TerminationTiming = {}): ProcessBackend {
  const owned = new OwnedGroups();
  return {
    get owned() {
      return owned.size;
    },
    shutdown: () => {
      fifos.dispose();
      return owned.shutdown();
    },
    async spawn(request) {
      // Deno's Node layer is served by its own pipes (see `output`).
      const pipes: (PipeEnds | null)[] = !isDeno
        ? await Promise.all([fifos.take(), fifos.take()])
        : [null, null];
      const child = (() => {
        try {
          return spawn(request.command, [...request.args], {
            cwd: unwrapCheckedPath(request.cwd),
            env: { ...request.env },
            detached: true,
            stdio: ["ignore", pipes[0]?.write ?? "pipe", pipes[1]?.write ?? "pipe"],
          });
        } catch (error) {
          for (const ends of pipes) if (ends !== null) discardFd(ends.read);
          throw error;
        } finally {
          // The child has its copies; the pipe ends when the child's last one closes.
          for (const ends of pipes) if (ends !== null) discardFd(ends.write);
        }
      })();
      const [stdout, stderr] = [child.stdout, child.stderr].map((stream, i) => {
        const ends = pipes[i];
        return ends === null ? output(stream!) : pushedOutput(ends.read);
      });
      const exited = new Promise<ProcessExit>((resolve) => {
        child.once("exit", (code, signal) => resolve({ code, signal }));
      });
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", (error) => {
          for (const pipe of [stdout, stderr]) if ("close" in pipe) pipe.close();
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
          stdout,
          stderr,
          exited,
        },
        control,
        timing,
      );
    },
  };
}
