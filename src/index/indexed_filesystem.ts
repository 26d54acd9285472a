/**
 * The file-system contract decorated with a search index: tree searches and
 * listings answer from the index when it can, and changes made through the
 * contract mark the index at once.
 *
 * @module
 */
import type { AsyncFileSystem } from "../backends/filesystem.ts";
import type { CheckedPath } from "../path/checked_path.ts";
import type { SearchIndex } from "./search_index.ts";

/**
 * A file system whose tree searches answer from `index` when it can, and
 * whose changes mark the index at once; everything else is `filesystem`'s.
 */
export function indexedFileSystem(
  filesystem: AsyncFileSystem,
  index: SearchIndex,
): AsyncFileSystem {
  const touched = (path: CheckedPath) => {
    if (path.rootKind === "working_directory") index.touched(path.display);
  };
  const wrapped: AsyncFileSystem = {
    realPath: (path) => filesystem.realPath(path),
    lstat: (path) => filesystem.lstat(path),
    stat: (path) => filesystem.stat(path),
    readDir: (path) => filesystem.readDir(path),
    readFile: (path, options) => filesystem.readFile(path, options),
    readChunks: (path, options) => filesystem.readChunks(path, options),
    async writeFileAtomic(path, data, options) {
      try {
        await filesystem.writeFileAtomic(path, data, options);
      } finally {
        touched(path);
      }
    },
    async mkdir(path) {
      try {
        await filesystem.mkdir(path);
      } finally {
        touched(path);
      }
    },
    async remove(path, options) {
      try {
        await filesystem.remove(path, options);
      } finally {
        touched(path);
      }
    },
    prepareSearch: () => filesystem.prepareSearch?.(),
    async *searchTree(start, search, signal = new AbortController().signal) {
      const answer = await index.search(start, search, signal);
      yield* answer ?? filesystem.searchTree(start, search, signal);
    },
    async *globTree(start, glob, signal = new AbortController().signal) {
      const answer = await index.glob(start, glob, signal);
      yield* answer ?? filesystem.globTree(start, glob, signal);
    },
  };
  if (filesystem.readGitExcludes !== undefined) {
    const read = filesystem.readGitExcludes.bind(filesystem);
    return { ...wrapped, readGitExcludes: read };
  }
  return wrapped;
}
