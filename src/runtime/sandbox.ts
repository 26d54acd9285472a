/**
 * The `sandbox` option of `createSession`: its shape, its checks, and the
 * refusal when a sandbox was asked for and cannot be had. A session asked
 * for a sandbox never runs a command without one: every way it can fail
 * that can be known before a call (another platform, bwrap missing, user
 * namespaces blocked) is found here, by running `true` in it once.
 *
 * @module
 */
import { checkOptionBag, isOptionBag, refuseOption } from "./options.ts";
import type { OptionNames } from "./options.ts";

/** Options of the OS sandbox every `bash` call of a session runs in (Linux, bubblewrap). */
export interface SandboxOptions {
  /** `none` (default): no network but the sandbox's own loopback; `host`: the host's network. */
  readonly network?: "none" | "host";
  /**
   * Directories writable besides the working directory (each must exist; it
   * is canonicalized, a relative path taken from the process's current directory).
   */
  readonly writable?: readonly string[];
}

const SANDBOX_OPTIONS: OptionNames<SandboxOptions> = { network: true, writable: true };

/** Why a sandbox cannot be had: `platform`, `bwrap_missing` or `start_failed`. */
export type SandboxProblem = "platform" | "bwrap_missing" | "start_failed";

/**
 * The error `createSession` throws when it was asked for a sandbox it cannot
 * set up; nothing has run when it is thrown. Its message names the cause
 * and what to do.
 *
 * @example
 * ```ts
 * import { createSession, SandboxUnavailableError } from "@openwork/tools";
 * try {
 *   await createSession({ workingDirectory: ".", sandbox: true });
 * } catch (error) {
 *   if (error instanceof SandboxUnavailableError) console.error(error.problem, error.message);
 *   else throw error;
 * }
 * ```
 */
export class SandboxUnavailableError extends Error {
  /** What is missing. */
  readonly problem: SandboxProblem;

  /** Makes the error for `problem`, with the message that explains it. */
  constructor(problem: SandboxProblem, message: string) {
    super(`createSession: ${message}`);
    this.name = "SandboxUnavailableError";
    this.problem = problem;
  }
}

/** Refuses a `sandbox` option of the wrong shape (a TypeError naming it). */
export function checkSandboxOption(
  where: string,
  sandbox: unknown,
): asserts sandbox is boolean | SandboxOptions | undefined {
  if (sandbox === undefined || typeof sandbox === "boolean") return;
  if (!isOptionBag(sandbox)) refuseOption(where, "sandbox", "a boolean or an object", sandbox);
  checkOptionBag(`${where}: sandbox`, sandbox, SANDBOX_OPTIONS);
  const { network, writable } = sandbox;
  if (network !== undefined && network !== "none" && network !== "host") {
    refuseOption(where, "sandbox.network", '"none" or "host"', network);
  }
  if (
    writable !== undefined &&
    (!Array.isArray(writable) || !writable.every((path) => typeof path === "string"))
  ) {
    refuseOption(where, "sandbox.writable", "an array of directory paths", writable);
  }
}

/** The refusal on a platform other than Linux. */
export function sandboxPlatformError(platform: string): SandboxUnavailableError {
  return new SandboxUnavailableError(
    "platform",
    `sandbox is Linux-only (each command runs under bubblewrap, in Linux namespaces), and this ` +
      `platform is ${platform}. Create the session without sandbox, or run the host on Linux.`,
  );
}

/** The refusal of a sandbox without network on an architecture its seccomp filter is not written for. */
export function sandboxArchitectureError(arch: string): SandboxUnavailableError {
  return new SandboxUnavailableError(
    "platform",
    "sandbox without network keeps commands from making unix-domain sockets with a seccomp " +
      `filter written for x86-64 and arm64, and this machine is ${arch}. Create the session ` +
      'with sandbox: { network: "host" } (unix sockets of the host reachable), or without sandbox.',
  );
}

/**
 * The refusal when bwrap is not on the processes' `PATH`; with `shunned`,
 * when it is not there outside those directories (the sandbox's writable
 * ones and the skill root), or cannot be told to be (Deno's flags).
 */
export function bwrapMissingError(
  path: string | undefined,
  shunned?: readonly string[],
): SandboxUnavailableError {
  const where = shunned === undefined
    ? "which is not on the PATH the session's processes run with"
    : "which was not found on the PATH the session's processes run with outside the " +
      `directories the sandbox lets commands write and the skill root (${shunned.join(", ")}), ` +
      "where a command or the repository could have put it; under Deno's flags, grant run and " +
      "read of bwrap by its absolute path (denoPermissionFlags does), since a grant by name is " +
      "the first bwrap on a PATH that lists one of those directories or a relative one";
  return new SandboxUnavailableError(
    "bwrap_missing",
    `sandbox needs bubblewrap (bwrap), ${where} (${path ?? "unset: /usr/bin:/bin"}). Install it ` +
      "(Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman " +
      "-S bubblewrap), or pass an environment whose PATH holds it.",
  );
}

/** The refusal when `true` could not run in the sandbox; `cause` is what bwrap or the runtime said. */
export function sandboxStartError(cause: string): SandboxUnavailableError {
  let fix: string;
  if (/--allow-run|run access/i.test(cause)) {
    fix = "Grant Deno the right to run it by its absolute path, as denoPermissionFlags " +
      "does: --allow-run=/usr/bin/bash,/usr/bin/bwrap --allow-read=…,/usr/bin/bash,/usr/bin/bwrap.";
  } else if (
    /namespace|uid map|uid_map|setgroups|Operation not permitted|No permissions/i.test(cause)
  ) {
    fix = "User namespaces are blocked on this machine: allow unprivileged user namespaces " +
      "(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 23.10 and later " +
      "kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile that lets bwrap " +
      "use them), or run the host in a container that permits them.";
  } else {
    fix = "Check what bwrap says when run by hand: " +
      "bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-net true";
  }
  return new SandboxUnavailableError(
    "start_failed",
    `the sandbox could not start a command (${cause}). ${fix}`,
  );
}
