/**
 * Real pipes for child output under Node. `child_process` connects a child's
 * stdout and stderr through a socket pair, and a command that floods its
 * output writes into a socket pair at well under half the speed of a pipe;
 * Node has no `pipe(2)`. A named pipe opened at both ends is a real pipe, so
 * FIFOs are made ahead in batches (one `mkfifo` process per batch, in a
 * private directory) and each is unlinked as soon as both its ends are open,
 * so nothing else can join it.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { close, constants, mkdtemp, open, rmdir, rmSync, unlink } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { promisify } from "node:util";

const openFd = promisify(open);

/** FIFOs made per `mkfifo` run. */
const BATCH = 16;

/** Both ends of one pipe, as file descriptors of this process. */
export interface PipeEnds {
  /** The read end, non-blocking. */
  readonly read: number;
  /** The write end, blocking, for a child's stdout or stderr. */
  readonly write: number;
}

/** Closes a file descriptor, ignoring failure (it is being discarded). */
export function discardFd(fd: number): void {
  close(fd, () => {});
}

/** Makes pipes from FIFOs made ahead in batches; `null` once FIFOs cannot be made here. */
export class FifoPool {
  #ready: { dir: string; path: string }[] = [];
  #left = new Map<string, number>(); // names not yet unlinked, per batch directory
  #filling: Promise<void> | null = null;
  #unavailable = false;
  #exitHook = false;

  /** One pipe, or `null` when this system cannot make FIFOs. */
  async take(): Promise<PipeEnds | null> {
    while (this.#ready.length === 0) {
      if (this.#unavailable) return null;
      await this.#fill();
    }
    const fifo = this.#ready.shift()!;
    if (this.#ready.length < BATCH / 2) void this.#fill();
    try {
      const read = await openFd(fifo.path, constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        return { read, write: await openFd(fifo.path, constants.O_WRONLY) };
      } catch (error) {
        discardFd(read);
        throw error;
      }
    } catch {
      return null;
    } finally {
      this.#forget(fifo.dir, fifo.path);
    }
  }

  /** Removes the FIFOs not handed out yet. */
  dispose(): void {
    for (const fifo of this.#ready.splice(0)) this.#forget(fifo.dir, fifo.path);
  }

  #fill(): Promise<void> {
    this.#filling ??= (async () => {
      try {
        const dir = await promisify(mkdtemp)(join(tmpdir(), "openwork-pipes-"));
        const paths = Array.from({ length: BATCH }, (_, i) => join(dir, String(i)));
        try {
          await promisify(execFile)("mkfifo", ["-m", "600", ...paths], {
            env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
          });
        } catch (error) {
          rmdir(dir, () => {});
          throw error;
        }
        if (!this.#exitHook) {
          // The last line only: a pool still holding FIFOs at exit removes them.
          this.#exitHook = true;
          process.once("exit", () => {
            for (const left of this.#left.keys()) rmSync(left, { recursive: true, force: true });
          });
        }
        this.#left.set(dir, paths.length);
        for (const path of paths) this.#ready.push({ dir, path });
      } catch {
        this.#unavailable = true;
      } finally {
        this.#filling = null;
      }
    })();
    return this.#filling;
  }

  #forget(dir: string, path: string): void {
    unlink(path, () => {
      const left = this.#left.get(dir)! - 1;
      this.#left.set(dir, left);
      if (left > 0) return;
      this.#left.delete(dir);
      rmdir(dir, () => {});
    });
  }
}
