/**
 * An in-memory {@link AsyncFileSystem} with real symbolic-link semantics, for
 * unit tests and for hosts that test their agents without touching a disk.
 *
 * @module
 */
import type {
  AsyncFileSystem,
  DirEntry,
  EntryKind,
  FileInfo,
  ReplaceOptions,
} from "../filesystem.ts";
import { type CheckedPath, unwrapCheckedPath } from "../../path/checked_path.ts";
import { ToolError } from "../../errors.ts";
import type { ErrorCode } from "../../errors.ts";
import { threadSearches } from "../thread_search.ts";
import { readUserExcludes } from "../../search/git_config.ts";
import { IGNORE_FILE_MAX_BYTES } from "../../search/walk.ts";

type MemoryNode =
  | { type: "directory"; children: Map<string, MemoryNode>; mode: number }
  | { type: "file"; data: Uint8Array; mode: number }
  | { type: "symlink"; target: string }
  | { type: "other" };

const MAX_LINK_HOPS = 40;

/** The setup helpers of the in-memory file system, beyond {@link AsyncFileSystem}. */
export interface MemoryFileSystem extends AsyncFileSystem {
  /** Writes a text or byte file, creating missing parent directories. */
  writeFile(path: string, content: string | Uint8Array, mode?: number): void;
  /** Creates a directory and its missing parents. */
  mkdirp(path: string): void;
  /** Creates a symbolic link at `path` pointing to `target`. */
  symlink(target: string, path: string): void;
  /** Creates a FIFO-like non-regular entry. */
  mkfifo(path: string): void;
  /** A file's bytes as text, following links; `null` when it does not exist. */
  readText(path: string): string | null;
  /** A file's permission bits, following links. */
  modeOf(path: string): number | null;
}

/** A compare-and-swap's condition (see `ReplaceOptions`): throws `stale_edit` when it fails. */
function checkReplaces(
  existing: MemoryNode | undefined,
  options: ReplaceOptions,
  shown: string,
): void {
  const { replaces } = options;
  if (replaces === undefined) return;
  const holds = replaces === null ? existing === undefined : existing?.type === "file" &&
    existing.data.length === replaces.length && existing.data.every((b, i) => b === replaces[i]);
  if (!holds) {
    fail("stale_edit", `${shown} changed after it was read; the newer version was kept.`);
  }
}

function fail(code: ErrorCode, message: string): never {
  throw new ToolError(code, message);
}

function segmentsOf(path: string): string[] {
  if (!path.startsWith("/")) {
    fail("invalid_path", `The in-memory file system needs absolute paths, got ${path}.`);
  }
  return path.split("/").filter((s) => s !== "");
}

function kindOf(node: MemoryNode): EntryKind {
  return node.type === "other" ? "other" : node.type;
}

/**
 * Makes an empty in-memory file system, with `/` as its only directory.
 *
 * @example
 * ```ts
 * import { createMemoryFileSystem } from "@openwork/tools";
 * const filesystem = createMemoryFileSystem();
 * filesystem.writeFile("/repo/a.txt", "hello\n");
 * console.log(filesystem.readText("/repo/a.txt")); // "hello\n"
 * ```
 */
export function createMemoryFileSystem(): MemoryFileSystem {
  const root: MemoryNode = {
    type: "directory",
    children: new Map(),
    mode: 0o755,
  };

  // Walks `path` as the kernel would: links in the middle are always
  // followed, the last one only when `followLast`.
  function walk(path: string, followLast: boolean): { node: MemoryNode; real: string[] } {
    const pending = segmentsOf(path);
    let real: string[] = [];
    let stack: MemoryNode[] = [root];
    let hops = 0;
    while (pending.length > 0) {
      const segment = pending.shift()!;
      const current = stack[stack.length - 1];
      if (segment === ".") continue;
      if (segment === "..") {
        if (stack.length > 1) {
          stack = stack.slice(0, -1);
          real = real.slice(0, -1);
        }
        continue;
      }
      if (current.type !== "directory") {
        fail("not_a_directory", `${"/" + real.join("/")} is not a directory.`);
      }
      const next = current.children.get(segment);
      if (next === undefined) fail("not_found", `/${[...real, segment].join("/")} does not exist.`);
      if (next.type === "symlink" && (pending.length > 0 || followLast)) {
        if (++hops > MAX_LINK_HOPS) {
          fail("invalid_path", `Too many levels of symbolic links in ${path}.`);
        }
        const target = segmentsOf(
          next.target.startsWith("/") ? next.target : "/" + [...real, next.target].join("/"),
        );
        pending.unshift(...target);
        real = [];
        stack = [root];
        continue;
      }
      stack = [...stack, next];
      real = [...real, segment];
    }
    return { node: stack[stack.length - 1], real };
  }

  function parentOf(
    path: string,
  ): { parent: Extract<MemoryNode, { type: "directory" }>; name: string } {
    const segments = segmentsOf(path);
    const name = segments.pop();
    if (name === undefined) fail("invalid_path", "The root has no parent.");
    const { node } = walk("/" + segments.join("/"), true);
    if (node.type !== "directory") {
      fail("not_a_directory", `The parent of ${path} is not a directory.`);
    }
    return { parent: node, name };
  }

  function regular(path: CheckedPath): Extract<MemoryNode, { type: "file" }> {
    const { node } = walk(unwrapCheckedPath(path), true);
    if (node.type === "directory") fail("is_directory", `${path.display} is a directory.`);
    if (node.type !== "file") {
      fail("not_a_regular_file", `${path.display} is not a regular file; it is not opened.`);
    }
    return node;
  }

  function info(node: MemoryNode): FileInfo {
    return {
      kind: kindOf(node),
      size: node.type === "file" ? node.data.length : 0,
      mode: node.type === "file" || node.type === "directory" ? node.mode : null,
    };
  }

  function mkdirp(path: string): void {
    let current = "";
    for (const segment of segmentsOf(path)) {
      current += "/" + segment;
      const { parent, name } = parentOf(current);
      const existing = parent.children.get(name);
      if (existing === undefined) {
        parent.children.set(name, {
          type: "directory",
          children: new Map(),
          mode: 0o755,
        });
      } else if (walk(current, true).node.type !== "directory") {
        fail("not_a_directory", `${current} is not a directory.`);
      }
    }
  }

  function setEntry(path: string, node: MemoryNode): void {
    const segments = segmentsOf(path);
    mkdirp("/" + segments.slice(0, -1).join("/"));
    const { parent, name } = parentOf(path);
    parent.children.set(name, node);
  }

  const encoder = new TextEncoder();

  const filesystem: Omit<MemoryFileSystem, "searchTree" | "globTree"> = {
    realPath(path) {
      return Promise.resolve().then(() => "/" + walk(path, true).real.join("/"));
    },
    lstat(path) {
      return Promise.resolve().then(() => info(walk(path, false).node));
    },
    stat(path) {
      return Promise.resolve().then(() => info(walk(unwrapCheckedPath(path), true).node));
    },
    readDir(path) {
      return Promise.resolve().then(() => {
        const { node } = walk(unwrapCheckedPath(path), true);
        if (node.type !== "directory") {
          fail("not_a_directory", `${path.display} is not a directory.`);
        }
        return [...node.children].map(([name, child]): DirEntry => ({ name, kind: kindOf(child) }));
      });
    },
    readFile(path, options) {
      return Promise.resolve().then(() => {
        const node = regular(path);
        if (node.data.length > options.maxBytes) {
          fail(
            "too_large",
            `${path.display} has ${node.data.length} bytes, over the cap of ${options.maxBytes}.`,
          );
        }
        options.signal?.throwIfAborted();
        return node.data.slice();
      });
    },
    async *readChunks(path, options = {}) {
      await Promise.resolve();
      const data = regular(path).data.slice();
      const size = options.chunkSize ?? 65536;
      for (let at = 0; at < data.length; at += size) {
        options.signal?.throwIfAborted();
        yield data.subarray(at, at + size);
        await Promise.resolve();
      }
    },
    writeFileAtomic(path, data, options = {}) {
      return Promise.resolve().then(() => {
        const real = unwrapCheckedPath(path);
        const { parent, name } = parentOf(real);
        const existing = parent.children.get(name);
        if (existing?.type === "directory") fail("is_directory", `${path.display} is a directory.`);
        checkReplaces(existing, options, path.display);
        const mode = existing?.type === "file" ? existing.mode : 0o644;
        parent.children.set(name, { type: "file", data: data.slice(), mode });
      });
    },
    mkdir(path) {
      return Promise.resolve().then(() => {
        const { parent, name } = parentOf(unwrapCheckedPath(path));
        if (parent.children.has(name)) fail("already_exists", `${path.display} already exists.`);
        parent.children.set(name, {
          type: "directory",
          children: new Map(),
          mode: 0o755,
        });
      });
    },
    remove(path, options = {}) {
      return Promise.resolve().then(() => {
        const { parent, name } = parentOf(unwrapCheckedPath(path));
        const existing = parent.children.get(name);
        checkReplaces(existing, options, path.display);
        if (existing === undefined) fail("not_found", `${path.display} does not exist.`);
        if (existing.type === "directory") fail("is_directory", `${path.display} is a directory.`);
        parent.children.delete(name);
      });
    },
    readGitExcludes(environment) {
      // The user's configuration inside this file system, as a disk backend finds it on disk.
      return readUserExcludes(environment, (path) => {
        try {
          const { node } = walk(path, true);
          if (node.type !== "file" || node.data.length > IGNORE_FILE_MAX_BYTES) {
            return Promise.resolve(null);
          }
          return Promise.resolve(new TextDecoder().decode(node.data));
        } catch {
          return Promise.resolve(null);
        }
      });
    },
    writeFile(path, content, mode = 0o644) {
      const data = typeof content === "string" ? encoder.encode(content) : content.slice();
      setEntry(path, { type: "file", data, mode });
    },
    mkdirp,
    symlink(target, path) {
      setEntry(path, { type: "symlink", target });
    },
    mkfifo(path) {
      setEntry(path, { type: "other" });
    },
    readText(path) {
      try {
        const { node } = walk(path, true);
        return node.type === "file" ? new TextDecoder().decode(node.data) : null;
      } catch {
        return null;
      }
    },
    modeOf(path) {
      try {
        const { node } = walk(path, true);
        return node.type === "file" || node.type === "directory" ? node.mode : null;
      } catch {
        return null;
      }
    },
  };
  // No workers here: grep and glob walk and scan on the calling thread.
  return Object.assign(filesystem, threadSearches(filesystem));
}
