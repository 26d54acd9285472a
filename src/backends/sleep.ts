/**
 * The pause between two polls of the termination path, which waits for a
 * group or a process to be gone.
 *
 * @module
 */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> =>
  new Promise<void>((resolve) => setTimeout(resolve, ms));
