/**
 * The two context layers: {@link ToolSessionContext} lives as long as a
 * session, {@link ToolCallContext} as long as one call.
 *
 * @module
 */
import type { AsyncFileSystem } from "../backends/filesystem.ts";
import type { ProcessBackend } from "../backends/process.ts";
import type { ProcessEnding } from "../backends/pid_namespace/choose.ts";
import type { SearchIndexHandle } from "../index/search_index.ts";
import type { CheckedPath, PathAccess, PathIntent } from "../path/mod.ts";
import type { ProgressSink } from "./result.ts";

/** The three permission modes. */
export type PermissionMode = "default" | "acceptEdits" | "plan";

/** The session's permission profile. */
export interface PermissionProfile {
  /**
   * `default`: reads run, the rest asks; `acceptEdits`: file edits and the
   * file-system command gate run too; `plan`: read-only, `write` and `edit`
   * are neither advertised nor callable.
   */
  readonly mode: PermissionMode;
  /**
   * What a command not proven read-only does when it runs in the session's
   * OS sandbox: `ask` (default) as without one, or `allow` to run it without
   * asking. Plan mode still refuses it, and `allow` is refused for a
   * session without a sandbox.
   */
  readonly sandboxedCommands?: "ask" | "allow";
}

/** The OS sandbox every process of a session runs in (see `createSession`'s `sandbox`). */
export interface SessionSandbox {
  /** `none`: no network but its own loopback; `host`: the host's network. */
  readonly network: "none" | "host";
  /** The writable directories, the working directory first (besides a private /tmp). */
  readonly writable: readonly string[];
  /** What it enforces, in one paragraph: added to the description of tools that run commands. */
  readonly statement: string;
}

/**
 * What every call of a session shares. It holds no turn signal, call id,
 * pending permission request, chat state or host object.
 */
export interface ToolSessionContext {
  /** The canonical working directory (readable and writable). */
  readonly workingDirectory: string;
  /** The canonical user skill root (read-only), or `null`. */
  readonly skillRoot: string | null;
  /** The permission profile. */
  readonly permissions: PermissionProfile;
  /** The environment processes run with. */
  readonly environment: Readonly<Record<string, string>>;
  /** The file-system backend. */
  readonly filesystem: AsyncFileSystem;
  /** The process backend. */
  readonly processes: ProcessBackend;
  /**
   * How the processes a call starts are ended with it (`createSession` sets
   * it): `pid-namespace`, by the kernel, as each call runs in a PID
   * namespace of its own (or in the sandbox, which has one); `marker-sweep`,
   * by the backend's best-effort sweep of the process table, where a PID
   * namespace cannot be had or the host turned it off (`processNamespace`).
   */
  readonly processEnding?: ProcessEnding;
  /** The one entry to a {@link CheckedPath}: see the resolver's rules. */
  resolvePath(input: string, access: PathAccess, intent: PathIntent): Promise<CheckedPath>;
  /** The OS sandbox its processes run in, when it has one. */
  readonly sandbox?: SessionSandbox;
  /** The search index of the working directory, when the session has one. */
  readonly searchIndex?: SearchIndexHandle;
}

/** What one call carries. */
export interface ToolCallContext {
  /** The call's id, as the host or model gave it. */
  readonly callId: string;
  /** Aborts this call; derived from the turn's signal and the deadline. */
  readonly signal: AbortSignal;
  /** Epoch milliseconds after which the call is stopped, if any. */
  readonly deadline?: number;
  /** Receives best-effort progress events, if given. */
  readonly progress?: ProgressSink;
}
