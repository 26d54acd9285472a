/**
 * The bounds on the work one classification of a command does, so that a
 * command of any size is answered at once: past them the command is not
 * proven read-only, and asks.
 *
 * Every file operand costs file-system lookups (the resolver canonicalizes
 * it, a `..` is checked for a link before it), each one a system call, while
 * the command's text costs only its length. So the text is bounded
 * ({@link MAX_CLASSIFIED_COMMAND_LENGTH}), and so are the lookups, counted
 * before they are made ({@link MAX_CLASSIFIER_LOOKUPS}); the call's signal
 * is checked with every count, so a cancel stops the work between two
 * lookups.
 *
 * @module
 */

/** Longest command the classifier reads, in UTF-16 code units; a longer one asks. */
export const MAX_CLASSIFIED_COMMAND_LENGTH: number = 16 * 1024;

/**
 * Most file-system lookups one classification may make. A path is counted
 * at its most: one lookup per segment plus three (the resolver looks up
 * the whole path, missing levels, and the first missing name), and a `..`
 * or a copy target one more each.
 */
export const MAX_CLASSIFIER_LOOKUPS: number = 1024;

/** Thrown when a classification would need more lookups than its budget; the message says so. */
export class OverBudget extends Error {}

/** The lookups one classification has left, and the signal that stops it. */
export class ClassificationBudget {
  readonly #lookups: number;
  #left: number;

  /** A fresh budget of `lookups`, stopped by `signal`. */
  constructor(
    readonly signal: AbortSignal | undefined = undefined,
    lookups: number = MAX_CLASSIFIER_LOOKUPS,
  ) {
    this.#lookups = lookups;
    this.#left = lookups;
  }

  /**
   * Counts `lookups` about to be made. Throws the signal's reason once it has
   * aborted, and {@link OverBudget} when the lookups would pass the budget.
   */
  spend(lookups: number): void {
    this.signal?.throwIfAborted();
    this.#left -= lookups;
    if (this.#left < 0) {
      throw new OverBudget(
        `checking its paths needs more than ${this.#lookups} file-system lookups ` +
          "(about one per path segment), past which a command is not classified",
      );
    }
  }
}

/** The most lookups the resolver makes for `path`: one per segment, plus three. */
export function lookupsOfPath(path: string): number {
  let segments = 1;
  for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) segments++;
  return segments + 3;
}
