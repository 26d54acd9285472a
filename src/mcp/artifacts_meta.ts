/**
 * The artifacts a result carries in MCP `_meta`, bounded: a file's prior
 * content (kept to undo a change) can be a megabyte, and a client receives
 * `_meta` with every result whether it wants it or not.
 *
 * @module
 */
import type { Artifact, FileChangeArtifact } from "../contract/result.ts";

/**
 * The most bytes (UTF-8) of prior contents one result carries in `_meta`
 * by default: 64 KiB in all, its artifacts taken in order.
 */
export const META_PRIOR_CONTENT_BYTES: number = 64 * 1024;

/**
 * A `file_change` artifact whose prior content was left out of `_meta`: all
 * other fields are kept (hashes, hunks, counts), so the diff can still be
 * shown; undoing it needs the host's own copy or `--full-artifacts`.
 */
export interface PriorContentOmitted extends Omit<FileChangeArtifact, "priorContent"> {
  /** Always `true`: `priorContent` is absent. */
  readonly priorContentOmitted: true;
  /** The UTF-8 length of the prior content that was left out. */
  readonly priorContentBytes: number;
}

/** An artifact as it appears in MCP `_meta`. */
export type MetaArtifact = Artifact | PriorContentOmitted;

/**
 * The artifacts for `_meta`: all of them as they are when `full`, otherwise
 * with each prior content that would take the result's total past
 * `capBytes` left out and marked.
 */
export function boundArtifacts(
  artifacts: readonly Artifact[],
  full: boolean,
  capBytes: number = META_PRIOR_CONTENT_BYTES,
): readonly MetaArtifact[] {
  if (full) return artifacts;
  const encoder = new TextEncoder();
  let kept = 0;
  return artifacts.map((artifact): MetaArtifact => {
    if (artifact.priorContent === null) return artifact;
    const bytes = encoder.encode(artifact.priorContent).byteLength;
    if (kept + bytes <= capBytes) {
      kept += bytes;
      return artifact;
    }
    const { priorContent: _omitted, ...rest } = artifact;
    return { ...rest, priorContentOmitted: true, priorContentBytes: bytes };
  });
}
