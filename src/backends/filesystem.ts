/**
 * The file-system backend interface. Every operation on content takes a
 * {@link CheckedPath}; the two string methods are the resolver's primitives.
 *
 * @module
 */
import type { CheckedPath } from "../path/checked_path.ts";
import type { ScanRequest, ScanResult } from "../search/scan.ts";
import type { IgnoreState } from "../search/walk.ts";
import type {
  FilesAnswer,
  FilesJob,
  SegmentAnswer,
  SegmentJob,
  StampAnswer,
  StampJob,
  TreeListAnswer,
  TreeListJob,
} from "../search/index/jobs.ts";

/** The search workers' side of the search index (see `search_index.ts`). */
export interface IndexWorkers {
  /** Builds a segment of the index over files given by real path. */
  buildSegment(job: Omit<SegmentJob, "kind" | "id" | "routes">): Promise<SegmentAnswer>;
  /** Scans files given by real path, in order, as the walk's search scans each. */
  scanFiles(job: Omit<FilesJob, "kind" | "id" | "routes">): Promise<FilesAnswer>;
  /**
   * Takes the stamps of files given by real path (see `index/stamps.ts`).
   * Without it, an index whose watcher missed changes builds again.
   */
  stampFiles?(job: Omit<StampJob, "kind" | "id" | "routes">): Promise<StampAnswer>;
  /**
   * Lists the whole tree below the working directory in one worker (see
   * `index/jobs.ts`). Without it, the index walks the tree on the calling
   * thread.
   */
  listTree?(job: Omit<TreeListJob, "kind" | "id" | "routes">): Promise<TreeListAnswer>;
}

/** What a directory entry is. Symbolic links are reported, not followed. */
export type EntryKind = "file" | "directory" | "symlink" | "other";

/** Metadata of one file-system object. */
export interface FileInfo {
  /** What the object is. */
  readonly kind: EntryKind;
  /** Size in bytes. */
  readonly size: number;
  /** Permission bits, where the backend knows them. */
  readonly mode: number | null;
}

/** One entry of a directory listing. */
export interface DirEntry {
  /** The entry's name (one path segment). */
  readonly name: string;
  /** What the entry is, without following symbolic links. */
  readonly kind: EntryKind;
}

/** Options for reading a whole file. */
export interface ReadFileOptions {
  /** Larger files fail with `too_large` before any byte is read. */
  readonly maxBytes: number;
  /** Aborts the read. */
  readonly signal?: AbortSignal;
}

/** What a write or removal may replace: its compare-and-swap condition. */
export interface ReplaceOptions {
  /**
   * The exact bytes the file must hold when the change commits (the version
   * the caller read), or `null` when nothing may be at the path. Without it,
   * the change replaces whatever is there. A file that holds anything else,
   * or appears meanwhile, is left as it is and the change fails with
   * `stale_edit`.
   */
  readonly replaces?: Uint8Array | null;
}

/** Options for streaming a file. */
export interface ReadChunksOptions {
  /** Bytes per chunk (default 64 KiB). */
  readonly chunkSize?: number;
  /** Aborts the stream between chunks. */
  readonly signal?: AbortSignal;
}

/** What a tree search or tree glob walks, in plain data. */
export interface TreeWalk {
  /** The ignore rules in force at the start; `null` when none apply (the skill root). */
  readonly ignore: IgnoreState | null;
  /**
   * Results the consumer takes at most (matching lines in content mode,
   * otherwise files or paths): the walk need look no further (default: no limit).
   */
  readonly limit?: number;
}

/** A whole-tree search for {@link AsyncFileSystem.searchTree}. */
export interface TreeSearch extends TreeWalk {
  /** What to look for in each file. */
  readonly request: ScanRequest;
  /** `grep`'s file filter (ripgrep's `-g` convention), if any. */
  readonly glob?: string;
}

/** A whole-tree listing for {@link AsyncFileSystem.globTree}. */
export interface TreeGlob extends TreeWalk {
  /** The picomatch pattern, matched against paths relative to the start. */
  readonly pattern: string;
}

/** A file of a tree search that matched or was skipped. */
export interface TreeHit {
  /** The file, relative to the working directory. */
  readonly display: string;
  /** What the scan found. */
  readonly result: ScanResult;
}

/**
 * The asynchronous file system the tools use. Implementations: Deno, Node and
 * in-memory. Failures are thrown as `ToolError`s with codes from the closed set.
 */
export interface AsyncFileSystem {
  /** Resolver primitive: the canonical path, following every symbolic link. */
  realPath(path: string): Promise<string>;
  /** Resolver primitive: metadata without following a final symbolic link. */
  lstat(path: string): Promise<FileInfo>;
  /** Metadata of a checked path (the checked path is already real). */
  stat(path: CheckedPath): Promise<FileInfo>;
  /** The entries of a directory, in no particular order. */
  readDir(path: CheckedPath): Promise<DirEntry[]>;
  /** A whole regular file; non-regular files are never opened. */
  readFile(path: CheckedPath, options: ReadFileOptions): Promise<Uint8Array>;
  /** A regular file as a stream of chunks; non-regular files are never opened. */
  readChunks(path: CheckedPath, options?: ReadChunksOptions): AsyncIterable<Uint8Array>;
  /**
   * Writes a whole file atomically: a temporary file in the same (checked)
   * parent, then a rename, or with `replaces` a compare-and-swap against the
   * version read. An overwritten file keeps its permission bits. Readers may
   * find the path missing for the instant of a compare-and-swap.
   */
  writeFileAtomic(path: CheckedPath, data: Uint8Array, options?: ReplaceOptions): Promise<void>;
  /** Creates one directory level (its parent must exist). */
  mkdir(path: CheckedPath): Promise<void>;
  /** Removes a file; with `replaces`, only the version read. */
  remove(path: CheckedPath, options?: ReplaceOptions): Promise<void>;
  /**
   * Optional: the text of the user's global git excludes file, found from
   * `environment` as git finds it (`core.excludesFile` in the user's git
   * config, else `$XDG_CONFIG_HOME/git/ignore` or `~/.config/git/ignore`);
   * `null` when there is none or it cannot be read. It lies outside the
   * session's roots: only the walk's ignore rules read it, never a tool's
   * output. Without this method, the walk applies no global excludes.
   */
  readGitExcludes?(environment: Readonly<Record<string, string>>): Promise<string | null>;
  /**
   * Optional: resolves once the backend can serve file operations, and
   * rejects with a `ToolError` saying what is missing when it cannot (a
   * real backend that cannot verify what it opens, and the host did not
   * choose the best effort). `createSession` awaits it.
   */
  ready?(): Promise<void>;
  /**
   * Optional: a hint that a search is coming: a backend whose searches run
   * in workers starts them now, so that their start-up overlaps what comes
   * before. Never throws.
   */
  prepareSearch?(): void;
  /**
   * Optional: the search workers, for a search index over this backend;
   * without them a session's index is unavailable and searches walk.
   */
  readonly indexWorkers?: IndexWorkers;
  /**
   * `grep`'s search: walks the tree below a checked directory (or takes a
   * checked file alone) by the walk's rules (sorted, depth first, `.git/`
   * skipped, symbolic links not followed, ignore rules honoured) and scans
   * its files. Yields, in walk order and a batch at a time, the files that
   * matched or were skipped. The walk runs ahead of the consumer by at most
   * `limit` results; stopping the iteration or aborting the signal stops it
   * before the next file. Where the work runs (this thread, workers) is the
   * backend's choice; `threadSearches` is the calling-thread implementation.
   */
  searchTree(
    start: CheckedPath,
    search: TreeSearch,
    signal?: AbortSignal,
  ): AsyncIterable<readonly TreeHit[]>;
  /**
   * `glob`'s listing: walks the tree below a checked directory by the same
   * rules and yields in walk order, a batch at a time, the files and
   * directories (relative to the working directory) whose path relative to
   * the start matches the pattern; bounded and stopped as {@link searchTree}.
   */
  globTree(
    start: CheckedPath,
    glob: TreeGlob,
    signal?: AbortSignal,
  ): AsyncIterable<readonly string[]>;
}
