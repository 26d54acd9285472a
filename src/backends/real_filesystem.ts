/**
 * The file-system rules the real backends (Deno's and Node's) share, written
 * once over each runtime's primitives: only regular files are opened, a
 * whole file is read only within its cap, a write goes to a temporary
 * sibling and is renamed into place keeping the old permission bits, and
 * every runtime error becomes a `ToolError`.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import type { AsyncFileSystem, DirEntry, FileInfo } from "./filesystem.ts";
import { type CheckedPath, unwrapCheckedPath } from "../path/checked_path.ts";
import { ToolError } from "../errors.ts";
import { toToolError } from "./errors.ts";

/** A file a runtime opened for reading. */
export interface OpenedFile {
  /** Reads into `into` from the current position; resolves the bytes read, 0 at the end. */
  read(into: Uint8Array): Promise<number>;
  /** Metadata of the open file itself. */
  stat(): Promise<FileInfo>;
  /** Closes it. */
  close(): Promise<void> | void;
}

/**
 * The operations a runtime provides for a real backend, on plain real
 * paths. Each throws the runtime's own errors; metadata comes with the
 * permission bits only ({@link permissionBits}).
 */
export interface FilePrimitives {
  /** The canonical path, following every symbolic link. */
  realPath(path: string): Promise<string>;
  /** Metadata, without following a final symbolic link. */
  lstat(path: string): Promise<FileInfo>;
  /** Metadata, following symbolic links. */
  stat(path: string): Promise<FileInfo>;
  /** The entries of a directory. */
  readDir(path: string): Promise<DirEntry[]>;
  /** Opens a file for reading without blocking on a non-regular file where the runtime can. */
  openRead(path: string): Promise<OpenedFile>;
  /** Writes a new file with the given permission bits; fails when it exists. */
  writeNew(path: string, data: Uint8Array, mode: number): Promise<void>;
  /** Sets the permission bits. */
  chmod(path: string, mode: number): Promise<void>;
  /** Renames over an existing target. */
  rename(from: string, to: string): Promise<void>;
  /** Creates one directory level. */
  mkdir(path: string): Promise<void>;
  /** Removes a file. */
  remove(path: string): Promise<void>;
}

/** The part of {@link AsyncFileSystem} that {@link realFileSystem} makes. */
export type RealFileSystem = Pick<
  AsyncFileSystem,
  | "realPath"
  | "lstat"
  | "stat"
  | "readDir"
  | "readFile"
  | "readChunks"
  | "writeFileAtomic"
  | "mkdir"
  | "remove"
>;

/** The permission bits of a full `st_mode`. */
export function permissionBits(mode: number | null): number | null {
  return mode === null ? null : mode & 0o7777;
}

/** A temporary sibling of `real`, in the same directory, for an atomic rename. */
function temporarySibling(real: string): string {
  const random = crypto.getRandomValues(new Uint32Array(2));
  const tag = Array.from(random, (n) => n.toString(36)).join("");
  return join(dirname(real), `.${basename(real)}.${tag}.tmp`);
}

/** Runs `operation`, turning what it throws into a `ToolError` for doing `what` on `shown`. */
async function attempt<T>(what: string, shown: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (e) {
    throw toToolError(e, what, shown);
  }
}

function notRegular(path: CheckedPath): ToolError {
  return new ToolError(
    "not_a_regular_file",
    `${path.display} is not a regular file; it is not opened.`,
  );
}

/**
 * Opens a regular file: checked before the open, so a FIFO or device is never
 * opened, and again on the open file, in case another object took its place.
 */
async function openRegular(
  native: FilePrimitives,
  path: CheckedPath,
): Promise<{ file: OpenedFile; size: number }> {
  const real = unwrapCheckedPath(path);
  const before = await attempt("read", path.display, () => native.lstat(real));
  if (before.kind === "directory") {
    throw new ToolError("is_directory", `${path.display} is a directory.`);
  }
  if (before.kind !== "file") throw notRegular(path);
  const file = await attempt("read", path.display, () => native.openRead(real));
  try {
    const info = await file.stat();
    if (info.kind !== "file") throw notRegular(path);
    return { file, size: info.size };
  } catch (e) {
    await file.close();
    throw toToolError(e, "read", path.display);
  }
}

/**
 * Makes the runtime-independent part of a real file-system backend from a
 * runtime's primitives.
 */
export function realFileSystem(native: FilePrimitives): RealFileSystem {
  return {
    realPath: (path) => attempt("resolve", path, () => native.realPath(path)),
    lstat: (path) => attempt("inspect", path, () => native.lstat(path)),
    stat: (path) => attempt("inspect", path.display, () => native.stat(unwrapCheckedPath(path))),
    readDir: (path) => attempt("list", path.display, () => native.readDir(unwrapCheckedPath(path))),
    async readFile(path, options) {
      const { file, size } = await openRegular(native, path);
      try {
        if (size > options.maxBytes) {
          throw new ToolError(
            "too_large",
            `${path.display} has ${size} bytes, over the cap of ${options.maxBytes}.`,
          );
        }
        options.signal?.throwIfAborted();
        const buffer = new Uint8Array(size);
        let filled = 0;
        while (filled < size) {
          const read = await file.read(buffer.subarray(filled));
          if (read === 0) break;
          filled += read;
        }
        return filled === size ? buffer : buffer.subarray(0, filled);
      } catch (e) {
        throw toToolError(e, "read", path.display);
      } finally {
        await file.close();
      }
    },
    async *readChunks(path, options = {}) {
      const { file } = await openRegular(native, path);
      const size = options.chunkSize ?? 65536;
      try {
        while (true) {
          options.signal?.throwIfAborted();
          const buffer = new Uint8Array(size);
          const read = await file.read(buffer);
          if (read === 0) return;
          yield read === size ? buffer : buffer.subarray(0, read);
        }
      } finally {
        await file.close();
      }
    },
    async writeFileAtomic(path, data) {
      const real = unwrapCheckedPath(path);
      const existing = await native.stat(real).catch(() => null);
      if (existing?.kind === "directory") {
        throw new ToolError("is_directory", `${path.display} is a directory.`);
      }
      const mode = existing?.mode ?? 0o666;
      const temporary = temporarySibling(real);
      try {
        await native.writeNew(temporary, data, mode);
        if (existing) await native.chmod(temporary, mode);
        await native.rename(temporary, real);
      } catch (e) {
        await native.remove(temporary).catch(() => {});
        throw toToolError(e, "write", path.display);
      }
    },
    mkdir: (path) =>
      attempt("create the directory", path.display, () => native.mkdir(unwrapCheckedPath(path))),
    remove: (path) => attempt("remove", path.display, () => native.remove(unwrapCheckedPath(path))),
  };
}
