/**
 * The search index's listing of a whole tree in a search worker: the walk's
 * rules over blocking calls (as a tree search walks), every directory opened
 * and verified where it is listed. A worker lists the Linux tree in a small
 * fraction of what the calling thread's walk takes, whose every listing is
 * a round trip through the event loop.
 *
 * @module
 */
import { WalkSync } from "../../search/walk.ts";
import type { IgnoreState, WalkSyncIO } from "../../search/walk.ts";
import { STAMP_FIELDS, writeFineStamp } from "../../search/index/stamps.ts";
import type { TreeListAnswer, TreeListJob } from "../../search/index/jobs.ts";
import { workerWalkIO } from "./unit.ts";
import { noPaths, PathPacker, stringBytes } from "../../search/index/packed_paths.ts";
import type { ListSync, StampStat, StatSync, VerifiedDirectories } from "./unit.ts";

/** Stamps as they are met, grown as needed. */
class StampList {
  #stamps = new Float64Array(64 * STAMP_FIELDS);
  count = 0;

  /** Adds the fine stamp of `stats`, taken now (unknown when `stats` is not of `kind`). */
  add(stats: StampStat | null, kind: StampStat["kind"]): void {
    if (this.#stamps.length < (this.count + 1) * STAMP_FIELDS) {
      const larger = new Float64Array(this.#stamps.length * 2);
      larger.set(this.#stamps);
      this.#stamps = larger;
    }
    if (stats?.kind === kind) writeFineStamp(this.#stamps, this.count, stats, Date.now());
    else this.#stamps.fill(NaN, this.count * STAMP_FIELDS, (this.count + 1) * STAMP_FIELDS);
    this.count++;
  }

  /** The stamps added, in order. */
  done(): Float64Array {
    return this.#stamps.slice(0, this.count * STAMP_FIELDS);
  }
}

/**
 * The tree of a {@link TreeListJob}, listed with `list` inside the verified
 * directories of `directories`, each directory's stamp taken with `stat`
 * just before it is listed and each ignore file's just before it is read
 * (by real path, as the stamps of `stampFiles` are: see `worker.ts`). The
 * caller checks the route (`directories.confirm()`) before the answer
 * leaves the worker.
 */
export function listTree(
  directories: VerifiedDirectories,
  list: ListSync,
  stat: StatSync,
  job: TreeListJob,
): TreeListAnswer {
  const root = job.real;
  const prefix = root === "/" ? "/" : `${root}/`;
  const displayOf = (real: string) => (real === root ? "." : real.slice(prefix.length));
  const listedDirectories: string[] = [];
  const directoryStamps = new StampList();
  const ignoreFiles: string[] = [];
  const ignoreStamps = new StampList();
  const io = workerWalkIO(list, directories);
  const stamped: WalkSyncIO<string> = {
    ...io,
    readDir(real) {
      const before = stat(real);
      const entries = io.readDir(real);
      listedDirectories.push(displayOf(real));
      directoryStamps.add(entries === null ? null : before, "directory");
      return entries;
    },
    readText(real, maxBytes) {
      ignoreFiles.push(displayOf(real));
      ignoreStamps.add(stat(real), "file");
      return io.readText(real, maxBytes);
    },
  };
  // Packed as met: each path's string is garbage at once, not kept in this worker's heap.
  const entries = new PathPacker();
  let kinds = new Uint8Array(1024);
  const outers: (IgnoreState | null)[] = [];
  const walk = new WalkSync(stamped, { from: ".", ignore: job.ignore });
  walk.enter(root, ".");
  let bytes = 0;
  for (let entry; (entry = walk.next()) !== null;) {
    // The index's memory limit holds here too: a tree too large for it is not kept whole first.
    bytes += job.entryBytes + stringBytes(entry.display);
    if (bytes > job.maxBytes) {
      const none = new Float64Array(0);
      return {
        id: job.id,
        entries: noPaths(),
        kinds: new Uint8Array(0),
        outers: [],
        listedDirectories: [],
        directoryStamps: none,
        ignoreFiles: [],
        ignoreStamps: none,
        over: bytes,
      };
    }
    if (entries.count === kinds.length) {
      const larger = new Uint8Array(2 * kinds.length);
      larger.set(kinds);
      kinds = larger;
    }
    if (entry.kind === "directory") {
      kinds[entries.count] = 0;
      outers.push(walk.ignoreState());
    } else kinds[entries.count] = 1;
    entries.add(entry.display);
  }
  return {
    id: job.id,
    kinds: kinds.slice(0, entries.count),
    entries: entries.done(),
    outers,
    listedDirectories,
    directoryStamps: directoryStamps.done(),
    ignoreFiles,
    ignoreStamps: ignoreStamps.done(),
  };
}
