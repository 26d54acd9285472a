/**
 * The Node backend of {@link AsyncFileSystem}, on `node:fs/promises`.
 *
 * @module
 */
import { constants } from "node:fs";
import type { Stats } from "node:fs";
import * as fs from "node:fs/promises";
import type { AsyncFileSystem, DirEntry, FileInfo } from "../filesystem.ts";
import { permissionBits, realFileSystem } from "../real_filesystem.ts";
import type { FilePrimitives } from "../real_filesystem.ts";
import { workerSearches } from "../workers/searches.ts";
import { moduleBeside } from "../../runtime/checks.ts";
import { hostGitExcludes } from "../host_text.ts";
import { kindOf } from "./entry_kind.ts";

function infoOf(stats: Stats): FileInfo {
  return { kind: kindOf(stats), size: stats.size, mode: permissionBits(stats.mode) };
}

// O_NONBLOCK keeps a FIFO swapped in after the check from blocking the open.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

const NODE_FILES: FilePrimitives = {
  realPath: (path) => fs.realpath(path),
  lstat: async (path) => infoOf(await fs.lstat(path)),
  stat: async (path) => infoOf(await fs.stat(path)),
  async readDir(path) {
    const entries = await fs.readdir(path, { withFileTypes: true });
    return entries.map((e): DirEntry => ({ name: e.name, kind: kindOf(e) }));
  },
  async openRead(path) {
    const handle = await fs.open(path, READ_FLAGS);
    return {
      read: async (into) => (await handle.read(into, 0, into.length, null)).bytesRead,
      stat: async () => infoOf(await handle.stat()),
      close: () => handle.close(),
    };
  },
  writeNew: (path, data, mode) => fs.writeFile(path, data, { flag: "wx", mode }),
  chmod: (path, mode) => fs.chmod(path, mode),
  rename: (from, to) => fs.rename(from, to),
  mkdir: (path) => fs.mkdir(path).then(() => {}),
  remove: (path) => fs.unlink(path),
};

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
  const filesystem = { ...realFileSystem(NODE_FILES), readGitExcludes: hostGitExcludes };
  const worker = moduleBeside(import.meta.url, "search_worker");
  return Object.assign(filesystem, workerSearches(filesystem, worker));
}
