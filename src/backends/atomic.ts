/**
 * Shared pieces of the real file-system backends: temporary names for atomic
 * writes and the permission-bit mask.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";

/** A temporary sibling of `real`, in the same directory, for an atomic rename. */
export function temporarySibling(real: string): string {
  const random = crypto.getRandomValues(new Uint32Array(2));
  const tag = Array.from(random, (n) => n.toString(36)).join("");
  return join(dirname(real), `.${basename(real)}.${tag}.tmp`);
}

/** The permission bits of a full `st_mode`. */
export function permissionBits(mode: number | null): number | null {
  return mode === null ? null : mode & 0o7777;
}
