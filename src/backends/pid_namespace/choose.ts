/**
 * Whether a session's calls run in PID namespaces of their own: decided
 * when the session is created, by running `true` in one once (once per
 * process for the runtime's default backend, once per backend a host
 * passes), and otherwise the marker sweep of the local backends.
 *
 * @module
 */
import { statSync } from "node:fs";
import process from "node:process";
import type { ProcessBackend } from "../process.ts";
import type { CheckedPath } from "../../path/checked_path.ts";
import { unwrapCheckedPath } from "../../path/checked_path.ts";
import { probeStart } from "../probe_start.ts";
import { namespacedProcesses } from "./namespaced_processes.ts";
import { trustedProgram } from "../../runtime/platform.ts";
import { permissionState } from "../../runtime/checks.ts";

/**
 * How the processes a call starts are ended with it: `pid-namespace`, by
 * the kernel (the call runs in a PID namespace of its own, or in the
 * sandbox, which has one); `marker-sweep`, by the process backend's sweep
 * of the process table (best effort: see the README's "Processes").
 */
export type ProcessEnding = "pid-namespace" | "marker-sweep";

/** The probes made so far, by bwrap's path: of the default backends, and of each host's backend. */
const probedDefault = new Map<string, Promise<boolean | null>>();
const probedHost = new WeakMap<ProcessBackend, Map<string, Promise<boolean | null>>>();

/** What {@link choosePidNamespace} decides from. */
export interface PidNamespaceChoice {
  /** The backend the calls would otherwise run on. */
  readonly processes: ProcessBackend;
  /** Whether `processes` is the runtime's default one (probed once per process). */
  readonly isDefault: boolean;
  /** Where the probe runs. */
  readonly cwd: CheckedPath;
  /** The session's environment: its `PATH` is where bwrap is looked for. */
  readonly environment: Readonly<Record<string, string>>;
  /** Canonical directories whose programs are never started (the working directory, the skill root). */
  readonly shunned: readonly string[];
}

/**
 * The backend a session's calls run on and how their processes end: the
 * namespaced backend where bwrap is on the session's `PATH`, the runtime
 * lets this process run it without asking (Deno: `--allow-run=…,bwrap`),
 * and it starts `true` in a PID namespace (a `true` outside `shunned`: see
 * `probeProgram`); else `processes` as given, with
 * its sweep. Never throws: what fails here is the fallback, not an error.
 */
export async function choosePidNamespace(
  choice: PidNamespaceChoice,
): Promise<{ processes: ProcessBackend; ending: ProcessEnding }> {
  const fallback = { processes: choice.processes, ending: "marker-sweep" as const };
  if (process.platform !== "linux") return fallback;
  // The init of its own PID namespace (a container started without an init): the namespace's
  // init, handed to this process when bwrap exits, would never be reaped.
  if (process.pid === 1) return fallback;
  // Never a bwrap that the working directory holds (a repository's node_modules/.bin, say): it
  // would run on the host when the session is made, before any call.
  const bwrap = trustedProgram(choice.environment, "bwrap", choice.shunned);
  if (bwrap === null) return fallback;
  // Deno would ask on a terminal (or refuse) a program it was not granted: not worth a question.
  const state = permissionState({ name: "run", command: bwrap });
  if (state !== null && state !== "granted") return fallback;
  // A working directory that is not on this disk (an in-memory file system's): nothing starts there.
  if (!directoryHere(unwrapCheckedPath(choice.cwd))) return fallback;
  const namespaced = namespacedProcesses(choice.processes, bwrap);
  let probes = probedDefault;
  if (!choice.isDefault) {
    probes = probedHost.get(choice.processes) ?? new Map();
    probedHost.set(choice.processes, probes);
  }
  let works = probes.get(bwrap);
  if (works === undefined) {
    works = probe(choice, namespaced);
    probes.set(bwrap, works);
  }
  const answer = await works;
  // Not the namespace's failure (the directory is not on this disk, say): asked again next time.
  if (answer === null) probes.delete(bwrap);
  return answer === true ? { processes: namespaced, ending: "pid-namespace" } : fallback;
}

/** Whether `path` is a directory on this machine's disk; `true` where the runtime will not tell. */
function directoryHere(path: string): boolean {
  const state = permissionState({ name: "read", path });
  if (state !== null && state !== "granted") return true; // Deno would ask: the probe tells
  try {
    return statSync(path).isDirectory();
  } catch (error) {
    return (error as { name?: string }).name === "NotCapable";
  }
}

/**
 * Whether `true` starts in the namespace; `null` when it does not start
 * without one either, so that the failure says nothing of the namespace.
 */
async function probe(
  choice: PidNamespaceChoice,
  namespaced: ProcessBackend,
): Promise<boolean | null> {
  const { cwd, environment, shunned } = choice;
  const start = (processes: ProcessBackend) =>
    probeStart(processes, cwd, environment, shunned).catch(() => "failed");
  if (await start(namespaced) === null) return true;
  return await start(choice.processes) === null ? false : null;
}
