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
import type { ProcessBackend, ProcessExit, ProcessOutput, TerminationTiming } from "../process.ts";
import { webStreamOutput } from "../stream_output.ts";
import { unwrapCheckedPath } from "../../path/checked_path.ts";
import { ToolError } from "../../errors.ts";
import { codeOfRuntimeError } from "../errors.ts";
import { localHelpers } from "../local_process_groups.ts";
import type { BashRunner, DirectSignaller } from "../local_process_groups.ts";
import { checkTiming, OwnedGroups, ownedHandle } from "../process_group.ts";
import { Descendants, MARKER_VARIABLE } from "../descendants.ts";
import { HELPER_PATH } from "../helper_bash.ts";
import { discardFd, FifoPool } from "./fifo.ts";
import { isDeno } from "../../runtime/checks.ts";
import type { PipeEnds } from "./fifo.ts";

const direct: DirectSignaller = (target, signal) => {
  try {
    process.kill(target, signal === "probe" ? 0 : signal);
    return true;
  } catch (error) {
    const { code, name } = error as { code?: string; name?: string };
    if (name === "NotCapable") throw error;
    return code !== "ESRCH";
  }
};
/** Runs scripts with the bash at `program` (never one the session's `PATH` finds). */
const bashRunner = (program: string): BashRunner => (script, args) =>
  new Promise((resolve, reject) => {
    execFile(program, ["-c", script, "bash", ...args], {
      env: { PATH: HELPER_PATH },
      maxBuffer: 64 * 1024 * 1024,
    }, (error, stdout) => {
      const code = error === null ? 0 : (error as { code?: unknown }).code;
      if (typeof code !== "number") reject(error);
      else resolve({ code, stdout: String(stdout) });
    });
  });

/** The group control and process table of each bash the helpers run, made on first use. */
const helpersOf = localHelpers(direct, bashRunner);

/** Bytes of the one buffer a FIFO is read into. */
const READ_BYTES = 64 * 1024;

/** The FIFOs every Node process backend of this process takes its pipes from. */
const fifos = new FifoPool();

/**
 * A {@link ProcessOutput} over a Node readable made when reading starts:
 * `start` makes it and hands every chunk to `deliver`, which returns `false`
 * once the reader failed (the readable is then destroyed). `discard` frees
 * the pipe when it is closed before anyone read it.
 */
function pushed(
  start: (deliver: (chunk: Uint8Array) => boolean) => Readable,
  discard: () => void,
): ProcessOutput {
  let reading: Readable | null = null;
  let closed = false;
  return {
    forEach(take) {
      if (reading !== null) return Promise.reject(new Error("The pipe is already being read."));
      if (closed) return Promise.resolve();
      let failure: unknown = null;
      const readable = reading = start((chunk) => {
        if (failure !== null) return false;
        try {
          take(chunk);
          return true;
        } catch (error) {
          failure = error;
          readable.destroy();
          return false;
        }
      });
      return new Promise<void>((resolve, reject) => {
        const settle = () => failure === null ? resolve() : reject(failure);
        readable.once("error", (error) => failure ??= error);
        readable.once("end", () => {
          readable.destroy();
          settle();
        });
        readable.once("close", settle);
      });
    },
    close() {
      if (closed) return;
      closed = true;
      if (reading !== null) reading.destroy();
      else discard();
    },
  };
}

/**
 * The read end of a FIFO, read by a socket into one reused buffer (the
 * documented `onread` option of `net.Socket`), so `yes` makes no garbage:
 * Node's pipe streams allocate a buffer per read, which the collector frees
 * late (tens of MiB while a command floods its output). The socket is made
 * when reading starts, so nothing is read before there is a reader.
 */
function fifoOutput(fd: number): ProcessOutput {
  return pushed((deliver) => {
    const onread = {
      buffer: new Uint8Array(READ_BYTES),
      callback: (bytes: number, buffer: Uint8Array) => deliver(buffer.subarray(0, bytes)),
    };
    return new Socket({ fd, readable: true, writable: false, onread } as SocketConstructorOpts);
  }, () => discardFd(fd));
}

/**
 * A web stream over a Node pipe, pulled: the pipe stays in paused mode and a
 * chunk is read only when the consumer asks, so a fast writer waits in the
 * pipe, not in memory. Cheaper per chunk than `Readable.toWeb`.
 */
function pulledStream(pipe: Readable): ReadableStream<Uint8Array> {
  let ended = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const changed = () => new Promise<void>((resolve) => (wake = resolve));
  const poke = () => wake?.();
  pipe.on("readable", poke);
  pipe.once("end", () => {
    ended = true;
    poke();
  });
  pipe.once("error", (error) => {
    failure = error;
    poke();
  });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (true) {
        const chunk = pipe.read() as Uint8Array | null;
        if (chunk !== null) return controller.enqueue(chunk);
        if (failure !== null) return controller.error(failure);
        if (ended) return controller.close();
        await changed();
      }
    },
    cancel() {
      pipe.destroy();
      poke();
    },
  }, { highWaterMark: 0 });
}

/**
 * A child's own pipe, where FIFOs cannot be made or under Deno's Node layer
 * (which serves a child through its own pipes). Under Node, from its 'data'
 * events, each chunk handed on as it arrives: the pulled stream takes 1.4
 * times as long to drain `head -c 2G /dev/zero`. Under Deno's Node layer,
 * pulled: flowing 'data' events there let memory grow by 0.4 of what `yes`
 * writes in 2 s, the pulled stream by 0.13.
 */
function streamOutput(pipe: Readable): ProcessOutput {
  if (isDeno) return webStreamOutput(pulledStream(pipe));
  return pushed((deliver) => pipe.on("data", deliver), () => pipe.destroy());
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
  checkTiming("createNodeProcessBackend", timing);
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
      // Deno's Node layer is served by its own pipes (see `streamOutput`).
      // Every descendant inherits the marker, by which the sweep finds it outside the group.
      const id = crypto.randomUUID();
      const pipes: (PipeEnds | null)[] = !isDeno
        ? await Promise.all([fifos.take(), fifos.take()])
        : [null, null];
      const child = (() => {
        try {
          return spawn(request.command, [...request.args], {
            cwd: unwrapCheckedPath(request.cwd),
            env: { ...request.env, [MARKER_VARIABLE]: id },
            detached: true,
            stdio: [
              request.input === undefined ? "ignore" : "pipe",
              pipes[0]?.write ?? "pipe",
              pipes[1]?.write ?? "pipe",
            ],
          });
        } catch (error) {
          for (const ends of pipes) if (ends !== null) discardFd(ends.read);
          throw error;
        } finally {
          // The child has its copies; the pipe ends when the child's last one closes.
          for (const ends of pipes) if (ends !== null) discardFd(ends.write);
        }
      })();
      if (request.input !== undefined) {
        // A process that exits without reading it all gets a closed pipe: nothing to report.
        child.stdin!.on("error", () => {});
        child.stdin!.end(request.input);
      }
      const [stdout, stderr] = [child.stdout, child.stderr].map((stream, i) => {
        const ends = pipes[i];
        return ends === null ? streamOutput(stream!) : fifoOutput(ends.read);
      });
      const exited = new Promise<ProcessExit>((resolve) => {
        child.once("exit", (code, signal) => resolve({ code, signal }));
      });
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", (error) => {
          for (const pipe of [stdout, stderr]) pipe.close();
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
      const { control, table } = helpersOf(request.shell);
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
        new Descendants(child.pid!, `${MARKER_VARIABLE}=${id}`, table, exited),
      );
    },
  };
}
