/**
 * Whether a wrapped process backend can start a process at all: run once,
 * before a session relies on the wrapper (the sandbox, the PID namespace).
 *
 * @module
 */
import type { ProcessBackend, ProcessOutput } from "./process.ts";
import type { CheckedPath } from "../path/checked_path.ts";

/** Reads a pipe to its end, keeping at most `limit` bytes of it as text. */
async function text(pipe: ProcessOutput, limit = 4096): Promise<string> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  await pipe.forEach((chunk) => {
    if (kept >= limit) return;
    const part = chunk.slice(0, limit - kept);
    chunks.push(part);
    kept += part.length;
  }).catch(() => {});
  const all = new Uint8Array(kept);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(all).trim();
}

/**
 * Runs `true` once through `processes`; resolves `null` when it ran, or else
 * what went wrong (bwrap's own message when it gave one: both wrappers run bwrap).
 */
export async function probeStart(
  processes: ProcessBackend,
  cwd: CheckedPath,
  environment: Readonly<Record<string, string>>,
): Promise<string | null> {
  let handle;
  try {
    handle = await processes.spawn({ command: "true", args: [], cwd, env: environment });
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  const [exit, , stderr] = await Promise.all([
    handle.exited,
    text(handle.stdout),
    text(handle.stderr),
  ]);
  await handle.terminate().catch(() => false);
  if (exit.code === 0) return null;
  const how = exit.code === null ? `was ended by ${exit.signal}` : `exited with ${exit.code}`;
  return stderr === "" ? `bwrap ${how}` : stderr;
}
