/**
 * The search index's jobs in the search workers, in plain data: listing the
 * whole tree, building a segment of the index from a batch of files,
 * scanning a list of candidate files in order, and taking the stamps of
 * files (see `stamps.ts`).
 *
 * @module
 */
import type { Segment } from "./segment.ts";
import type { ScanLine, ScanRequest, ScanResult } from "../scan.ts";
import type { IgnoreState } from "../walk.ts";
import type { PackedPaths } from "./packed_paths.ts";

/**
 * Walks the whole tree below a directory by the walk's rules, in one
 * worker, its directories opened and verified there as a tree search's are.
 * The stamp of each directory is taken just before it is listed, and of each
 * ignore file just before it is read: a caller whose watches were not all
 * in place during the walk takes them again once they are, and looks again
 * at whatever changed.
 */
export interface TreeListJob {
  /** Tells it from other jobs. */
  readonly kind: "tree";
  /** Job id, echoed in the answer. */
  readonly id: number;
  /** Where descriptors may be reached by path (see `src/backends/descriptors.ts`), in order. */
  readonly routes: readonly string[];
  /** The real path of the working directory, where the walk starts. */
  readonly real: string;
  /** The ignore rules in force at the working directory. */
  readonly ignore: IgnoreState | null;
  /** Bytes an entry is counted for beyond its path's string (see `stringBytes` of `packed_paths.ts`). */
  readonly entryBytes: number;
  /**
   * The most bytes the entries may be counted for: past it the walk stops,
   * and the answer is {@link TreeListAnswer.over} with no entries.
   */
  readonly maxBytes: number;
}

/** The tree of a {@link TreeListJob}. */
export interface TreeListAnswer {
  /** The job's id. */
  readonly id: number;
  /** Every entry below the working directory, in walk order, as paths relative to it. */
  readonly entries: PackedPaths;
  /** Per entry, 1 for a file, 0 for a directory. */
  readonly kinds: Uint8Array;
  /** Per directory entry, in order: the ignore rules in force in its parent. */
  readonly outers: readonly (IgnoreState | null)[];
  /** The directories listed (the working directory first), as paths relative to it. */
  readonly listedDirectories: readonly string[];
  /**
   * Per directory listed, its fine stamp taken just before it was listed
   * (NaN when racy or when it could not be listed).
   */
  readonly directoryStamps: Float64Array;
  /** The ignore files read, as paths relative to the working directory. */
  readonly ignoreFiles: readonly string[];
  /** Per ignore file read, its fine stamp just before it was read (NaN when racy). */
  readonly ignoreStamps: Float64Array;
  /** The bytes the entries were counted for when the walk passed `maxBytes`, if it did. */
  readonly over?: number;
  /** Why the job failed, if it did. */
  readonly error?: string;
}

/** Builds a segment over files, read in the worker inside their verified directories. */
export interface SegmentJob {
  /** Tells it from other jobs. */
  readonly kind: "segment";
  /** Job id, echoed in the answer. */
  readonly id: number;
  /** Where descriptors may be reached by path (see `src/backends/descriptors.ts`), in order. */
  readonly routes: readonly string[];
  /** The files' real paths. */
  readonly files: readonly string[];
  /** Files larger than this are not indexed (they stay candidates of every search). */
  readonly maxBytes: number;
}

/** A built segment. */
export interface SegmentAnswer {
  /** The job's id. */
  readonly id: number;
  /** The segment, or `null` when the job failed. */
  readonly segment: Segment | null;
  /**
   * Per file of the job, its local id in the segment, or -1 when it is not
   * indexed (binary, larger than the cap, unreadable): a candidate of every search.
   */
  readonly locals: Int32Array;
  /** Per file of the job, the bytes indexed (0 when it is not indexed). */
  readonly sizes: Int32Array;
  /**
   * Per file of the job, its stamp as it was read (`STAMP_FIELDS` numbers
   * each, NaN when unknown); absent when the workers take none.
   */
  readonly stamps?: Float64Array;
  /** Why the job failed, if it did. */
  readonly error?: string;
}

/** Takes the stamps of files (or directories), looked up in the worker by their real paths. */
export interface StampJob {
  /** Tells it from other jobs. */
  readonly kind: "stamps";
  /** Job id, echoed in the answer. */
  readonly id: number;
  /** Where descriptors may be reached by path, in order. */
  readonly routes: readonly string[];
  /** The files' real paths. */
  readonly files: readonly string[];
  /** Whether the paths are of directories (their stamps are taken instead of files'). */
  readonly directories?: boolean;
  /** Whether to take fine stamps, compared in this process only (see `writeFineStamp`). */
  readonly fine?: boolean;
}

/** The stamps of a {@link StampJob}'s files. */
export interface StampAnswer {
  /** The job's id. */
  readonly id: number;
  /** Per file, its stamp now (`STAMP_FIELDS` numbers each, NaN when unknown). */
  readonly stamps: Float64Array;
  /** Why the job failed, if it did. */
  readonly error?: string;
}

/** Scans a list of files in order, as the walk's search scans each file. */
export interface FilesJob {
  /** Tells it from other jobs. */
  readonly kind: "files";
  /** Job id, echoed in the answer. */
  readonly id: number;
  /** Where descriptors may be reached by path, in order. */
  readonly routes: readonly string[];
  /** The files' real paths. */
  readonly files: readonly string[];
  /** What to look for. */
  readonly request: ScanRequest;
  /** One Int32: 1 once the search stopped. */
  readonly flags: SharedArrayBuffer;
}

/** The results of a {@link FilesJob}, one per file in order (`null`: no match), fewer when stopped. */
export interface FilesAnswer {
  /** The job's id. */
  readonly id: number;
  /** Per file, what its scan found; `null` when nothing. */
  readonly results: (ScanResult | null)[];
  /** Why the job failed, if it did. */
  readonly error?: string;
}

/**
 * A {@link FilesJob} as it crosses to a worker: the paths in one string,
 * copied at a fraction of the cost of thousands of strings.
 */
export interface PackedFilesJob extends Omit<FilesJob, "files"> {
  /** The files' real paths, joined by NUL (which no path holds). */
  readonly files: string;
}

/**
 * A {@link FilesAnswer} as it crosses back from a worker: a number per file
 * (see `scan_found.ts`) in an array whose buffer is transferred, rather than
 * an object per file that both threads copy one by one.
 */
export interface PackedFilesAnswer {
  /** The job's id. */
  readonly id: number;
  /** Per file scanned, in order: its matches, 0 for none, or the code of its skip. */
  readonly found: Int32Array;
  /** In content mode, the lines of each file with matches, in order; else empty. */
  readonly lines: (readonly ScanLine[])[];
  /** Why the job failed, if it did. */
  readonly error?: string;
}
