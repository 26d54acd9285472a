/**
 * The Node backend of {@link AsyncFileSystem}, on `node:fs/promises`.
 *
 * @module
 */
import { constants } from "node:fs";
import type { Stats } from "node:fs";
import * as fs from "node:fs/promises";
import type {
  AsyncFileSystem,
  DirEntry,
  FileInfo,
  ReadChunksOptions,
  ReadFileOptions,
} from "../filesystem.ts";
import { type CheckedPath, unwrapCheckedPath } from "../../path/checked_path.ts";
import { ToolError } from "../../contract/errors.ts";
import { toToolError } from "../errors.ts";
import { permissionBits, temporarySibling } from "../atomic.ts";
import { workerSearches } from "../workers/searches.ts";
import { moduleBeside } from "../../runtime/checks.ts";
import { kindOf } from "./entry_kind.ts";
import { hostGitExcludes } from "../host_text.ts";

function infoOf(stats: Stats): FileInfo {
  return {
    kind: kindOf(stats),
    size: stats.size,
    mode: permissionBits(stats.mode),
    mtimeMs: stats.mtimeMs,
  };
}

// O_NONBLOCK keeps a FIFO swapped in after the check from blocking the open.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

async function openRegular(path: CheckedPath): Promise<{ handle: fs.FileHandle; size: number }> {
  const real = unwrapCheckedPath(path);
  const before = await fs.lstat(real).catch((e) => {
    throw toToolError(e, "read", path.display);
  });
  if (before.isDirectory()) throw new ToolError("is_directory", `${path.display} is a directory.`);
  if (!before.isFile()) {
    throw new ToolError(
      "not_a_regular_file",
      `${path.display} is not a regular file; it is not opened.`,
    );
  }
  const handle = await fs.open(real, READ_FLAGS).catch((e) => {
    throw toToolError(e, "read", path.display);
  });
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw new ToolError(
      "not_a_regular_file",
      `${path.display} is not a regular file; it is not opened.`,
    );
  }
  return { handle, size: stats.size };
}

/**
 * Makes the Node file-system backend.
 *
 * @example
 * ```ts
 * import { createNodeFileSystem } from "@openwork/tools/node";
 * const filesystem = createNodeFileSystem();
 * ```
 */
export function createNodeFileSystem(): AsyncFileSystem {
  const filesystem: Omit<AsyncFileSystem, "prepareSearch" | "searchTree" | "globTree"> = {
    readGitExcludes: hostGitExcludes,
    async realPath(path) {
      try {
        return await fs.realpath(path);
      } catch (e) {
        throw toToolError(e, "resolve", path);
      }
    },
    async lstat(path) {
      try {
        return infoOf(await fs.lstat(path));
      } catch (e) {
        throw toToolError(e, "inspect", path);
      }
    },
    async stat(path) {
      try {
        return infoOf(await fs.stat(unwrapCheckedPath(path)));
      } catch (e) {
        throw toToolError(e, "inspect", path.display);
      }
    },
    async readDir(path) {
      try {
        const entries = await fs.readdir(unwrapCheckedPath(path), { withFileTypes: true });
        return entries.map((e): DirEntry => ({ name: e.name, kind: kindOf(e) }));
      } catch (e) {
        throw toToolError(e, "list", path.display);
      }
    },
    async readFile(path, options: ReadFileOptions) {
      const { handle, size } = await openRegular(path);
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
          const { bytesRead } = await handle.read(buffer, filled, size - filled, filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
        }
        return filled === size ? buffer : buffer.subarray(0, filled);
      } catch (e) {
        throw toToolError(e, "read", path.display);
      } finally {
        await handle.close();
      }
    },
    async *readChunks(path, options: ReadChunksOptions = {}) {
      const { handle } = await openRegular(path);
      const size = options.chunkSize ?? 65536;
      try {
        let position = 0;
        while (true) {
          options.signal?.throwIfAborted();
          const buffer = new Uint8Array(size);
          const { bytesRead } = await handle.read(buffer, 0, size, position);
          if (bytesRead === 0) return;
          position += bytesRead;
          yield bytesRead === size ? buffer : buffer.subarray(0, bytesRead);
        }
      } finally {
        await handle.close();
      }
    },
    async writeFileAtomic(path, data) {
      const real = unwrapCheckedPath(path);
      const existing = await fs.stat(real).catch(() => null);
      if (existing?.isDirectory()) {
        throw new ToolError("is_directory", `${path.display} is a directory.`);
      }
      const mode = existing ? existing.mode & 0o7777 : 0o666;
      const temporary = temporarySibling(real);
      try {
        await fs.writeFile(temporary, data, { flag: "wx", mode });
        if (existing) await fs.chmod(temporary, mode);
        await fs.rename(temporary, real);
      } catch (e) {
        await fs.rm(temporary, { force: true }).catch(() => {});
        throw toToolError(e, "write", path.display);
      }
    },
    async mkdir(path) {
      try {
        await fs.mkdir(unwrapCheckedPath(path));
      } catch (e) {
        throw toToolError(e, "create the directory", path.display);
      }
    },
    async remove(path) {
      try {
        await fs.unlink(unwrapCheckedPath(path));
      } catch (e) {
        throw toToolError(e, "remove", path.display);
      }
    },
  };
  const worker = moduleBeside(import.meta.url, "search_worker");
  return Object.assign(filesystem, workerSearches(filesystem, worker));
}
