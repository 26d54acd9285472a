/**
 * Shared by the race tests: python3 helper processes started through bash
 * (so that the same files run under Deno's narrow flags and under Node), the
 * swapper that exchanges two paths with renameat2(RENAME_EXCHANGE), and a
 * record of a tree that shows any change to it.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs/promises";
import { join } from "node:path";

/** A python3 process started through bash, its output collected until it exits. */
export interface Helper {
  /** Resolves once the process printed its first line ("ready"). */
  readonly ready: Promise<void>;
  /** Resolves when it has exited: its exit code and output. */
  readonly done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Closes its stdin, which the scripts take as the order to stop. */
  stop(): void;
}

/** Starts python3 with `script` and `args`, through bash. */
export function startPython(script: string, ...args: string[]): Helper {
  const child = spawn("bash", ["-c", 'exec python3 -c "$1" "${@:2}"', "bash", script, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let markReady = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    if (stdout.includes("\n")) markReady();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code) => {
        markReady();
        resolve({ code, stdout, stderr });
      });
    },
  );
  // The process may be gone when its stdin is closed.
  child.stdin!.on("error", () => {});
  return { ready, done, stop: () => child.stdin!.end() };
}

/** The JSON object a helper prints last, after its "ready" line. */
export async function finalReport<T>(helper: Helper): Promise<T> {
  const { code, stdout, stderr } = await helper.done;
  assert.equal(code, 0, `helper failed: ${stderr}`);
  const lines = stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]) as T;
}

/**
 * Exchanges two paths with renameat2(RENAME_EXCHANGE) in a tight loop until
 * its stdin closes (or SIGTERM), then prints how many exchanges succeeded.
 */
export const SWAPPER: string = String.raw`
import ctypes, json, os, platform, signal, sys, threading
AT_FDCWD, RENAME_EXCHANGE = -100, 2
libc = ctypes.CDLL(None, use_errno=True)
first, second = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
if hasattr(libc, "renameat2"):
    def exchange():
        return libc.renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE)
else:
    number = {"x86_64": 316, "aarch64": 276}[platform.machine()]
    libc.syscall.restype = ctypes.c_long
    def exchange():
        return libc.syscall(ctypes.c_long(number), ctypes.c_long(AT_FDCWD), first,
                            ctypes.c_long(AT_FDCWD), second, ctypes.c_long(RENAME_EXCHANGE))
stopping = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stopping.set())
def watch_stdin():
    while os.read(0, 4096):
        pass
    stopping.set()
threading.Thread(target=watch_stdin, daemon=True).start()
swaps, failures = 0, {}
print("ready", flush=True)
while not stopping.is_set():
    if exchange() == 0:
        swaps += 1
    else:
        reason = os.strerror(ctypes.get_errno())
        failures[reason] = failures.get(reason, 0) + 1
        if swaps == 0 and failures[reason] >= 1000:
            break
print(json.dumps({"swaps": swaps, "failures": failures}), flush=True)
os._exit(0)
`;

/** Each entry of a tree, with what would show any change to it (sorted, one line each). */
export async function treeState(root: string): Promise<string[]> {
  const lines: string[] = [];
  const visit = async (path: string, shown: string) => {
    const info = await fs.lstat(path, { bigint: true });
    const common = `${shown}\tino=${info.ino} mode=${info.mode.toString(8)} size=${info.size} ` +
      `mtime=${info.mtimeNs} ctime=${info.ctimeNs} nlink=${info.nlink}`;
    if (info.isSymbolicLink()) lines.push(`${common} -> ${await fs.readlink(path)}`);
    else if (info.isFile()) {
      const hash = createHash("sha256").update(await fs.readFile(path)).digest("hex");
      lines.push(`${common} sha256=${hash}`);
    } else if (info.isDirectory()) {
      lines.push(common);
      for (const name of await fs.readdir(path)) await visit(join(path, name), `${shown}/${name}`);
    } else lines.push(`${common} other`);
  };
  await visit(root, ".");
  return lines.sort();
}

/** The names in a directory, sorted (the swapped entries change type, never name). */
export async function namesIn(path: string): Promise<string[]> {
  return (await fs.readdir(path)).sort();
}
