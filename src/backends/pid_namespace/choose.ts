/**
 * Whether a session's calls run in PID namespaces of their own: decided
 * when the session is created, by running `true` in one once (once per
 * process for the runtime's default backend, once per backend a host
 * passes), and otherwise the marker sweep of the local backends.
 *
 * @module
 */
import process from "node:process";
import type { ProcessBackend } from "../process.ts";
import type { CheckedPath } from "../../path/checked_path.ts";
import { probeStart } from "../probe_start.ts";
import { namespacedProcesses } from "./namespaced_processes.ts";
import { findProgram } from "../../runtime/platform.ts";
import { permissionState } from "../../runtime/checks.ts";

/**
 * How the processes a call starts are ended with it: `pid-namespace`, by
 * the kernel (the call runs in a PID namespace of its own, or in the
 * sandbox, which has one); `marker-sweep`, by the process backend's sweep
 * of the process table (best effort: see the README's "Processes").
 */
export type ProcessEnding = "pid-namespace" | "marker-sweep";

/** The probes made so far, by bwrap's path: of the default backends, and of each host's backend. */
const probedDefault = new Map<string, Promise<boolean>>();
const probedHost = new WeakMap<ProcessBackend, Map<string, Promise<boolean>>>();

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
}

/**
 * The backend a session's calls run on and how their processes end: the
 * namespaced backend where bwrap is on the session's `PATH`, the runtime
 * lets this process run it without asking (Deno: `--allow-run=…,bwrap`),
 * and it starts `true` in a PID namespace; else `processes` as given, with
 * its sweep. Never throws: what fails here is the fallback, not an error.
 */
export async function choosePidNamespace(
  choice: PidNamespaceChoice,
): Promise<{ processes: ProcessBackend; ending: ProcessEnding }> {
  const fallback = { processes: choice.processes, ending: "marker-sweep" as const };
  if (process.platform !== "linux") return fallback;
  const found = findProgram(choice.environment, "bwrap");
  if (found === "missing") return fallback;
  const bwrap = found === "unknown" ? "bwrap" : found.path;
  // Deno would ask on a terminal (or refuse) a program it was not granted: not worth a question.
  const state = permissionState({ name: "run", command: bwrap });
  if (state !== null && state !== "granted") return fallback;
  const namespaced = namespacedProcesses(choice.processes, bwrap);
  let probes = probedDefault;
  if (!choice.isDefault) {
    probes = probedHost.get(choice.processes) ?? new Map();
    probedHost.set(choice.processes, probes);
  }
  let works = probes.get(bwrap);
  if (works === undefined) {
    works = probeStart(namespaced, choice.cwd, choice.environment)
      .then((problem) => problem === null, () => false);
    probes.set(bwrap, works);
  }
  return (await works) ? { processes: namespaced, ending: "pid-namespace" } : fallback;
}
