/**
 * Whether a wrapped process backend can start a process at all: run once,
 * before a session relies on the wrapper (the sandbox, the PID namespace).
 *
 * @module
 */
import type { ProcessBackend, ProcessOutput } from "./process.ts";
import type { CheckedPath } from "../path/checked_path.ts";
import { findProgram } from "../runtime/platform.ts";

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
 * The `true` a probe runs, and the environment it runs with. The probe runs
 * when the session is made, before any call: never a `true` from a
 * directory the session's commands may write in or a repository brings
 * (`shunned`, canonical), nor one an empty or relative `PATH` entry finds
 * in the directory it starts in. So it is the real path found on the
 * session's `PATH` outside those; where the directories of `PATH` cannot be
 * read (Deno's narrow flags), the bare name with `PATH=/usr/bin:/bin`, by
 * which bwrap (whose run the flags grant) looks it up.
 */
export function probeProgram(
  environment: Readonly<Record<string, string>>,
  shunned: readonly string[],
): { command: string; env: Readonly<Record<string, string>> } {
  const found = findProgram(environment, "true", shunned);
  if (typeof found === "object") return { command: found.path, env: environment };
  return { command: "true", env: { ...environment, PATH: PROBE_PATH } };
}

/** Where a probe looks for `true` when the session's `PATH` cannot be searched here. */
const PROBE_PATH = "/usr/bin:/bin";

/**
 * Runs `true` once through `processes` (see {@link probeProgram} for which
 * `true`); resolves `null` when it ran, or else what went wrong (bwrap's own
 * message when it gave one: both wrappers run bwrap).
 */
export async function probeStart(
  processes: ProcessBackend,
  cwd: CheckedPath,
  environment: Readonly<Record<string, string>>,
  shunned: readonly string[],
): Promise<string | null> {
  const { command, env } = probeProgram(environment, shunned);
  let handle;
  try {
    handle = await processes.spawn({ command, args: [], cwd, env });
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
