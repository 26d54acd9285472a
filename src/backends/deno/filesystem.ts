/**
 * The Deno backend of {@link AsyncFileSystem}, on Deno's own file APIs. A
 * refusal by Deno's permission flags becomes `runtime_permission_denied`.
 *
 * @module
 */
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
import { kindOf } from "./entry_kind.ts";
import { hostGitExcludes } from "../host_text.ts";

function infoOf(info: Deno.FileInfo): FileInfo {
  return {
    kind: kindOf(info),
    size: info.size,
    mode: permissionBits(info.mode),
    mtimeMs: info.mtime?.getTime() ?? null,
  };
}

async function openRegular(path: CheckedPath): Promise<{ file: Deno.FsFile; size: number }> {
  const real = unwrapCheckedPath(path);
  const before = await Deno.lstat(real).catch((e) => {
    throw toToolError(e, "read", path.display);
  });
  if (before.isDirectory) throw new ToolError("is_directory", `${path.display} is a directory.`);
  if (!before.isFile) {
    throw new ToolError(
      "not_a_regular_file",
      `${path.display} is not a regular file; it is not opened.`,
    );
  }
  const file = await Deno.open(real, { read: true }).catch((e) => {
    throw toToolError(e, "read", path.display);
  });
  const info = await file.stat();
  if (!info.isFile) {
    file.close();
    throw new ToolError(
      "not_a_regular_file",
      `${path.display} is not a regular file; it is not opened.`,
    );
  }
  return { file, size: info.size };
}

/**
 * Makes the Deno file-system backend.
 *
 * @example
 * ```ts
 * import { createDenoFileSystem } from "@openwork/tools/deno";
 * const filesystem = createDenoFileSystem();
 * ```
 */
export function createDenoFileSystem(): AsyncFileSystem {
  const filesystem: Omit<AsyncFileSystem, "prepareSearch" | "searchTree" | "globTree"> = {
    readGitExcludes: hostGitExcludes,
    async realPath(path) {
      try {
        return await Deno.realPath(path);
      } catch (e) {
        throw toToolError(e, "resolve", path);
      }
    },
    async lstat(path) {
      try {
        return infoOf(await Deno.lstat(path));
      } catch (e) {
        throw toToolError(e, "inspect", path);
      }
    },
    async stat(path) {
      try {
        return infoOf(await Deno.stat(unwrapCheckedPath(path)));
      } catch (e) {
        throw toToolError(e, "inspect", path.display);
      }
    },
    async readDir(path) {
      try {
        const entries: DirEntry[] = [];
        for await (const entry of Deno.readDir(unwrapCheckedPath(path))) {
          entries.push({ name: entry.name, kind: kindOf(entry) });
        }
        return entries;
      } catch (e) {
        throw toToolError(e, "list", path.display);
      }
    },
    async readFile(path, options: ReadFileOptions) {
      const { file, size } = await openRegular(path);
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
          if (read === null) break;
          filled += read;
        }
        return filled === size ? buffer : buffer.subarray(0, filled);
      } catch (e) {
        throw toToolError(e, "read", path.display);
      } finally {
        file.close();
      }
    },
    async *readChunks(path, options: ReadChunksOptions = {}) {
      const { file } = await openRegular(path);
      const size = options.chunkSize ?? 65536;
      try {
        while (true) {
          options.signal?.throwIfAborted();
          const buffer = new Uint8Array(size);
          const read = await file.read(buffer);
          if (read === null) return;
          yield read === size ? buffer : buffer.subarray(0, read);
        }
      } finally {
        file.close();
      }
    },
    async writeFileAtomic(path, data) {
      const real = unwrapCheckedPath(path);
      const existing = await Deno.stat(real).catch(() => null);
      if (existing?.isDirectory) {
        throw new ToolError("is_directory", `${path.display} is a directory.`);
      }
      const mode = existing?.mode != null ? existing.mode & 0o7777 : 0o666;
      const temporary = temporarySibling(real);
      try {
        await Deno.writeFile(temporary, data, { createNew: true, mode });
        if (existing) await Deno.chmod(temporary, mode);
        await Deno.rename(temporary, real);
      } catch (e) {
        await Deno.remove(temporary).catch(() => {});
        throw toToolError(e, "write", path.display);
      }
    },
    async mkdir(path) {
      try {
        await Deno.mkdir(unwrapCheckedPath(path));
      } catch (e) {
        throw toToolError(e, "create the directory", path.display);
      }
    },
    async remove(path) {
      try {
        await Deno.remove(unwrapCheckedPath(path));
      } catch (e) {
        throw toToolError(e, "remove", path.display);
      }
    },
  };
  // grep's and glob's tree searches run in the same worker threads as under Node (Deno runs
  // node:worker_threads), with Deno's own directory listing.
  return Object.assign(
    filesystem,
    workerSearches(filesystem, new URL("./search_worker.ts", import.meta.url)),
  );
}
