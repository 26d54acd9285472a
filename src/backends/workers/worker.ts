/**
 * The search workers' side: walks and scans one unit of a tree search or
 * listing at a time (see `unit.ts`), reading files synchronously into
 * one reused buffer (a worker thread may block; the host's event loop does
 * not). A runtime's worker module calls {@link serveSearches} with its own
 * directory listing.
 *
 * @module
 */
import { parentPort } from "node:worker_threads";
import { closeSync, fstatSync, readSync } from "node:fs";
import { Routes } from "../descriptor_route.ts";
import type { WalkSyncIO } from "../../search/walk.ts";
import { ScanStopped } from "../../search/scan.ts";
import { READ_FLAGS, runUnit, VerifiedDirectories, workerWalkIO } from "./unit.ts";
import type { ListSync, StatSync, UnitJob, WorkerReady } from "./unit.ts";
import type { ScanLine } from "../../search/scan.ts";
import { foundCode } from "../../search/index/scan_found.ts";
import { CHUNK, head, headIsBinary, matcherFor, readWhole, scanOne } from "./scan_file.ts";
import { SegmentBuilder } from "../../search/index/segment.ts";
import type {
  PackedFilesAnswer,
  PackedFilesJob,
  SegmentAnswer,
  SegmentJob,
  StampAnswer,
  StampJob,
  TreeListAnswer,
  TreeListJob,
} from "../../search/index/jobs.ts";
import { listTree } from "./list_tree.ts";
import { noPaths } from "../../search/index/packed_paths.ts";
import { STAMP_FIELDS, writeFineStamp, writeStamp } from "../../search/index/stamps.ts";

/**
 * A file's bytes for the index, or `null` when it is not indexed: unreadable,
 * larger than `maxBytes`, binary (as the scan tells binary files), or with
 * more than one hard link (a write through another of its names, perhaps
 * outside the watched tree, changes it with no event for this one). Its
 * stamp, as read, goes to `stamps` at `index` (it stays unknown when the
 * file cannot be opened).
 */
function indexedBytes(
  directories: VerifiedDirectories,
  path: string,
  maxBytes: number,
  stamps: Float64Array,
  index: number,
): Uint8Array | null {
  const fd = directories.openFile(path, READ_FLAGS);
  if (fd === null) return null;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.nlink > 1 || stats.size > maxBytes) {
      writeStamp(stamps, index, stats, Date.now());
      return null;
    }
    const read = readSync(fd, head, 0, CHUNK, null);
    let bytes: Uint8Array | null;
    if (read < CHUNK) bytes = headIsBinary(read) ? null : head.subarray(0, read);
    else if (headIsBinary(CHUNK)) bytes = null;
    else bytes = readWhole(fd, stats.size, maxBytes, CHUNK);
    // Taken after the read: a change within the timestamps' granularity of it makes the stamp racy.
    writeStamp(stamps, index, stats, Date.now());
    return bytes;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Builds the segment of a {@link SegmentJob}. */
function buildSegment(directories: VerifiedDirectories, job: SegmentJob): SegmentAnswer {
  const locals = new Int32Array(job.files.length);
  const sizes = new Int32Array(job.files.length);
  const stamps = new Float64Array(job.files.length * STAMP_FIELDS).fill(NaN);
  // A builder per job: its tables (tens of MiB) go with it rather than stay resident in an idle
  // worker; making them costs a few milliseconds against the seconds a job of thousands of files takes.
  const builder = new SegmentBuilder();
  try {
    for (let i = 0; i < job.files.length; i++) {
      const content = indexedBytes(directories, job.files[i], job.maxBytes, stamps, i);
      if (content === null) locals[i] = -1;
      else {
        locals[i] = builder.add(content);
        sizes[i] = content.length;
      }
    }
    // The files were opened through the route: the segment stands only if it did not change.
    directories.confirm();
    return { id: job.id, segment: builder.finish(), locals, sizes, stamps };
  } catch (error) {
    return { id: job.id, segment: null, locals, sizes, stamps, error: String(error) };
  }
}

/**
 * The stamps of a {@link StampJob}'s files (or directories), each looked up
 * by its real path with the runtime's `stat`; anything but the kind asked
 * for has an unknown stamp. A stamp is not read through the route: it only
 * ever proves that a path the walk met is still the very object (device and
 * inode) whose content was read inside the tree, unchanged; a lookup sent
 * elsewhere by a link swapped in finds another object, or the same one.
 */
function stampFiles(stat: StatSync, job: StampJob): StampAnswer {
  const stamps = new Float64Array(job.files.length * STAMP_FIELDS).fill(NaN);
  const kind = job.directories ? "directory" : "file";
  for (let i = 0; i < job.files.length; i++) {
    const stats = stat(job.files[i]);
    if (stats?.kind !== kind) continue;
    if (job.fine) writeFineStamp(stamps, i, stats, Date.now());
    else writeStamp(stamps, i, stats, Date.now());
  }
  return { id: job.id, stamps };
}

/** Scans the files of a {@link PackedFilesJob} in order, stopping when its search stops. */
function scanFiles(directories: VerifiedDirectories, job: PackedFilesJob): PackedFilesAnswer {
  const flag = new Int32Array(job.flags);
  const { request } = job;
  const matcher = matcherFor(request);
  const files = job.files === "" ? [] : job.files.split("\0");
  const found = new Int32Array(files.length);
  const lines: (readonly ScanLine[])[] = [];
  const stopped = () => Atomics.load(flag, 0) !== 0;
  let scanned = 0;
  try {
    for (; scanned < files.length; scanned++) {
      if (stopped()) break;
      const result = scanOne(directories, files[scanned], matcher, request, stopped, false, true);
      const code = foundCode(result);
      found[scanned] = code;
      if (code > 0 && request.mode === "content") lines.push(result.lines);
    }
  } catch (error) {
    // Stopped during a file: the files scanned whole are answered.
    if (!(error instanceof ScanStopped)) throw error;
  }
  // The files were opened through the route: their results stand only if it did not change.
  directories.confirm();
  return { id: job.id, found: found.subarray(0, scanned), lines };
}

/** The jobs a worker is posted. */
type WorkerJob = UnitJob | SegmentJob | PackedFilesJob | StampJob | TreeListJob;

/**
 * Answers the jobs posted to this worker, listing directories with `list`
 * and looking up stamps with `stat`.
 */
export function serveSearches(list: ListSync, stat: StatSync): void {
  // The pool serves every backend of the process: each job names its backend's routes.
  let last: { key: string; directories: VerifiedDirectories; io: WalkSyncIO<string> } | null = null;
  parentPort?.on("message", (job: WorkerJob) => {
    const routes = job.kind === "unit" ? job.spec.routes : job.routes;
    const key = routes.join("\0");
    if (last?.key !== key) {
      const directories = new VerifiedDirectories(new Routes(routes));
      last = { key, directories, io: workerWalkIO(list, directories) };
    }
    const { directories, io } = last;
    try {
      if (job.kind === "segment") {
        const answer = buildSegment(directories, job);
        const segment = answer.segment;
        const tables = [answer.locals.buffer, answer.sizes.buffer, answer.stamps!.buffer];
        const transfer = segment === null ? tables : [
          segment.keys.buffer,
          segment.offsets.buffer,
          segment.postings.buffer,
          ...tables,
        ];
        // A buffer listed twice cannot be transferred: each goes once.
        parentPort!.postMessage(answer, [...new Set(transfer)] as ArrayBuffer[]);
        return;
      }
      if (job.kind === "files") {
        let answer: PackedFilesAnswer;
        try {
          answer = scanFiles(directories, job);
        } catch (error) {
          // A route to descriptors that changed or cannot be had: the job fails, the worker stays.
          answer = {
            id: job.id,
            found: new Int32Array(0),
            lines: [],
            error: (error as Error)?.message ?? String(error),
          };
        }
        parentPort!.postMessage(answer, [answer.found.buffer as ArrayBuffer]);
        return;
      }
      if (job.kind === "tree") {
        let answer: TreeListAnswer;
        try {
          answer = listTree(directories, list, stat, job);
          // The tree was listed through the route: it stands only if the route did not change.
          directories.confirm();
        } catch (error) {
          const empty = new Float64Array(0);
          answer = {
            id: job.id,
            entries: noPaths(),
            kinds: new Uint8Array(0),
            outers: [],
            listedDirectories: [],
            directoryStamps: empty,
            ignoreFiles: [],
            ignoreStamps: empty,
            error: (error as Error)?.message ?? String(error),
          };
        }
        parentPort!.postMessage(
          answer,
          [
            answer.entries.bytes.buffer as ArrayBuffer,
            answer.entries.ends.buffer as ArrayBuffer,
            answer.kinds.buffer as ArrayBuffer,
            answer.directoryStamps.buffer as ArrayBuffer,
            answer.ignoreStamps.buffer as ArrayBuffer,
          ].filter((buffer, i, all) => all.indexOf(buffer) === i),
        );
        return;
      }
      if (job.kind === "stamps") {
        const answer = stampFiles(stat, job);
        parentPort!.postMessage(answer, [answer.stamps.buffer as ArrayBuffer]);
        return;
      }
      runUnit(
        job,
        io,
        (path, request, stopped) =>
          scanOne(directories, path, matcherFor(request), request, stopped),
        (answer) => parentPort!.postMessage(answer),
        () => directories.confirm(),
      );
    } finally {
      // A directory kept open past its unit could be one moved since; the next unit verifies anew.
      directories.release();
    }
  });
  // The pool hands a search over to a ready worker at once, not after a stretch on its own thread.
  parentPort?.postMessage({ ready: true } satisfies WorkerReady);
}
