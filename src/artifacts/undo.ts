/**
 * Undo of `file_change` artifacts: newest first, each only when the file
 * still holds exactly what the change wrote.
 *
 * @module
 */
import type { ToolSessionContext } from "../contract/context.ts";
import { ToolError } from "../errors.ts";
import type { Artifact, FileChangeArtifact } from "../contract/result.ts";
import { withPathLock } from "../path/mod.ts";
import { MAX_TEXT_BYTES, sha256Hex } from "./file_change.ts";

/** What happened to one change. */
export interface UndoOutcome {
  /** The change's id. */
  readonly changeId: string;
  /** The file, relative to the working directory. */
  readonly path: string;
  /** `undone`; `already_undone`; `conflict` (the file changed since; nothing written); or `failed`. */
  readonly status: "undone" | "already_undone" | "conflict" | "failed";
  /** What was found, for `conflict` and `failed`. */
  readonly message?: string;
}

/** The report of {@link undoFileChanges}. */
export interface UndoReport {
  /** One outcome per change, in the order they were undone (newest first). */
  readonly outcomes: readonly UndoOutcome[];
  /** The artifacts as given, with `undone: true` on each change that is now undone. */
  readonly artifacts: readonly Artifact[];
  /** Whether every change is undone. */
  readonly ok: boolean;
}

/**
 * Failures that mean the file changed since the change: it went away, a
 * directory or another kind of object took its place, or it grew past what
 * any change writes.
 */
const LOST_RACE: ReadonlySet<string> = new Set([
  "stale_edit",
  "not_found",
  "already_exists",
  "is_directory",
  "not_a_regular_file",
  "too_large",
]);

async function undoOne(
  session: ToolSessionContext,
  change: FileChangeArtifact,
): Promise<UndoOutcome> {
  const base = { changeId: change.changeId, path: change.path };
  if (change.undone) return { ...base, status: "already_undone" };
  try {
    const located = await session.resolvePath(change.path, "write", "may_create");
    return await withPathLock(located, async () => {
      // Resolved again under the lock: whether the file exists is not read in the moment of
      // another call's commit, which moves the file aside while it puts its version in place.
      const path = await session.resolvePath(change.path, "write", "may_create");
      // A file that is gone is a conflict; any other failure to read it is reported as it is.
      const current = path.existed
        ? await session.filesystem.readFile(path, { maxBytes: MAX_TEXT_BYTES + 1 }).catch(
          (error) => {
            if (error instanceof ToolError && error.code === "not_found") return null;
            throw error;
          },
        )
        : null;
      if (current === null || await sha256Hex(current) !== change.sha256After) {
        const message = current === null
          ? `${change.path} no longer exists; nothing was restored.`
          : `${change.path} changed after this change was made; nothing was overwritten.`;
        return { ...base, status: "conflict" as const, message };
      }
      // Only over the version just checked: one written since is kept (`stale_edit`, a conflict).
      if (change.priorContent === null) {
        await session.filesystem.remove(path, { replaces: current });
      } else {
        await session.filesystem.writeFileAtomic(
          path,
          new TextEncoder().encode(change.priorContent),
          { replaces: current },
        );
      }
      return { ...base, status: "undone" as const };
    });
  } catch (error) {
    // Each of these says the file is no longer what the change wrote: another writer won the race.
    if (error instanceof ToolError && LOST_RACE.has(error.code)) {
      const message =
        `${change.path} changed while it was being restored; nothing was overwritten.`;
      return { ...base, status: "conflict", message };
    }
    const message = error instanceof ToolError ? `${error.code}: ${error.message}` : String(error);
    return { ...base, status: "failed", message };
  }
}

/**
 * Undoes file changes in reverse order. Each is restored only when the file's
 * current SHA-256 equals the change's `sha256After`; otherwise it is a
 * `conflict` and nothing is written. Create-then-edit undone deletes the file.
 * Never throws for a file-level failure.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset, undoFileChanges } from "@openwork/tools";
 * const session = await createSession({ workingDirectory: Deno.cwd() });
 * const toolset = finalizeToolset({ session });
 * const result = await toolset.call({ name: "write", input: { path: "tmp.txt", content: "x" }, callId: "1" });
 * const report = await undoFileChanges(session, result.artifacts);
 * console.log(report.ok);
 * ```
 */
export async function undoFileChanges(
  session: ToolSessionContext,
  artifacts: readonly Artifact[],
): Promise<UndoReport> {
  const outcomes: UndoOutcome[] = [];
  const undone = new Set<string>();
  for (const artifact of [...artifacts].reverse()) {
    if (artifact.kind !== "file_change") continue;
    const outcome = await undoOne(session, artifact);
    outcomes.push(outcome);
    if (outcome.status === "undone" || outcome.status === "already_undone") {
      undone.add(artifact.changeId);
    }
  }
  return {
    outcomes,
    artifacts: artifacts.map((a) => (undone.has(a.changeId) ? { ...a, undone: true } : a)),
    ok: outcomes.every((o) => o.status === "undone" || o.status === "already_undone"),
  };
}
