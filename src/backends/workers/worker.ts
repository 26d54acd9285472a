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
import { compileMatcher } from "../../search/matcher.ts";
import type { LineMatcher } from "../../search/matcher.ts";
import { BINARY_SNIFF_BYTES, looksBinary, scanBytes, ScanStopped } from "../../search/scan.ts";
import { SimdSearch } from "../../search/simd.ts";
import { holdsLiteral, NATIVE_BUFFER_SEARCH } from "../../search/bytes.ts";
import type { ByteLiteral } from "../../search/bytes.ts";
import { Buffer } from "node:buffer";
import { READ_FLAGS, runUnit, VerifiedDirectories, workerWalkIO } from "./unit.ts";
import type { ListSync, UnitJob, WorkerReady } from "./unit.ts";
import type { ScanRequest, ScanResult } from "../../search/scan.ts";
import { SegmentBuilder } from "../../index/segment.ts";
import type {
  FilesAnswer,
  FilesJob,
  SegmentAnswer,
  SegmentJob,
  StampAnswer,
  StampJob,
} from "../../index/jobs.ts";
import { STAMP_FIELDS, writeStamp } from "../../index/stamps.ts";

/**
 * Files are read in chunks of this size into one small buffer. Kept below
 * glibc's mmap threshold (128 KiB), the buffer sits on the heap, and reading
 * the Linux tree into it costs the kernel about half of what reading into a
 * 1 MiB buffer does (measured: 0.45–0.75 s against 0.9–1.4 s of system time).
 */
const CHUNK = 64 * 1024;
/**
 * Byte search in place with WebAssembly SIMD, where the runtime's own byte
 * search is not native (Deno's `node:buffer`). Node's `Buffer.indexOf` for
 * a literal's rarest byte is glibc's memchr, which the module does not
 * beat (profiled in these workers on the Linux tree: about 40 ms against
 * 60 ms of both workers' time; end to end the two are within noise).
 */
const simd = NATIVE_BUFFER_SEARCH ? null : SimdSearch.create();
/** The chunk buffer: in the SIMD module's memory when there is one, so nothing is copied. */
const head = simd?.buffer.subarray(0, CHUNK) ?? Buffer.alloc(CHUNK);
/** A whole file that a scan needs in one piece; grown as needed, reused. */
let whole = new Uint8Array(0);
let compiled: { request: ScanRequest; key: string; matcher: LineMatcher } | null = null;

/** The matcher of a request: compiled once per pattern, and looked up once per request object. */
function matcherFor(request: ScanRequest): LineMatcher {
  if (compiled?.request === request) return compiled.matcher;
  const key = `${request.caseInsensitive ? "i" : "s"}:${request.pattern}`;
  const matcher = compiled?.key === key ? compiled.matcher : compileMatcher(request.pattern, {
    caseInsensitive: request.caseInsensitive,
    checked: true,
  });
  compiled = { request, key, matcher };
  return matcher;
}

const UNREADABLE: ScanResult = Object.freeze({ skip: "unreadable", matches: 0, lines: [] });
const BINARY: ScanResult = Object.freeze({ skip: "binary", matches: 0, lines: [] });
const MATCHED: ScanResult = Object.freeze({ matches: 1, lines: [] });
const TOO_LARGE: ScanResult = Object.freeze({ skip: "too_large", matches: 0, lines: [] });
const NO_MATCH: ScanResult = Object.freeze({ matches: 0, lines: [] });

/** Whether the first `length` bytes of `head` hold `literal`. */
function headHolds(length: number, literal: ByteLiteral): boolean {
  if (simd !== null && simd.setLiteral(literal)) return simd.findLiteral(0, length) !== -1;
  return holdsLiteral(head.subarray(0, length), literal);
}

/** Whether the first `length` bytes of `head` are a binary file's (a NUL in its first 8 KiB). */
function headIsBinary(length: number): boolean {
  if (simd !== null) return simd.findByte(0, Math.min(length, BINARY_SNIFF_BYTES), 0) !== -1;
  return looksBinary(head.subarray(0, length));
}

/**
 * Whether the rest of a file, read chunk by chunk after the full first chunk
 * in `head`, holds `literal`. Consecutive chunks overlap by the literal's
 * length less one, so a literal across a boundary is found.
 */
function restHolds(fd: number, literal: ByteLiteral): boolean {
  let length = CHUNK;
  while (true) {
    const keep = Math.min(literal.bytes.length - 1, length);
    head.copyWithin(0, length - keep, length);
    const read = readSync(fd, head, keep, CHUNK - keep, null);
    if (read === 0) return false;
    length = keep + read;
    if (headHolds(length, literal)) return true;
  }
}

/** A whole file of `size` bytes (it may have grown: read to its end, never past the cap). */
function readWhole(fd: number, size: number, maxBytes: number): Uint8Array | null {
  if (whole.length < size + 1) whole = new Uint8Array(Math.max(size + 1, whole.length * 2));
  let filled = 0;
  while (true) {
    if (filled === whole.length) {
      const larger = new Uint8Array(whole.length * 2);
      larger.set(whole);
      whole = larger;
    }
    const read = readSync(fd, whole, filled, whole.length - filled, filled);
    if (read === 0) return whole.subarray(0, filled);
    filled += read;
    if (filled > maxBytes) return null;
  }
}

/** Scans one file; throws {@link ScanStopped} when `stopped` says its search stopped during it. */
function scanOne(
  directories: VerifiedDirectories,
  path: string,
  matcher: LineMatcher,
  request: ScanRequest,
  stopped: () => boolean,
): ScanResult {
  // Opened inside its verified directory: a link put in its place, or in a directory's, is not
  // followed.
  const fd = directories.openFile(path, READ_FLAGS);
  if (fd === null) return UNREADABLE;
  try {
    // Most files are smaller than a chunk: one read, no fstat, scanned where they lie. The
    // binary test and the literal come first, on the bytes in place; only a file holding the
    // literal is scanned further, and none when the literal alone decides.
    const read = readSync(fd, head, 0, CHUNK, null);
    const { literal } = matcher;
    if (read < CHUNK) {
      if (literal !== null) {
        if (headIsBinary(read)) return BINARY;
        if (!headHolds(read, literal)) return NO_MATCH;
        if (matcher.exact && request.mode === "files_with_matches") return MATCHED;
      }
      return scanBytes(head.subarray(0, read), matcher, request, stopped);
    }
    const stats = fstatSync(fd);
    if (!stats.isFile()) return UNREADABLE;
    if (stats.size > request.maxBytes) return TOO_LARGE;
    if (headIsBinary(CHUNK)) return BINARY;
    // A larger file is read whole only when its chunks hold the pattern's required literal.
    if (literal !== null && !headHolds(CHUNK, literal) && !restHolds(fd, literal)) {
      return NO_MATCH;
    }
    const bytes = readWhole(fd, stats.size, request.maxBytes);
    return bytes === null ? TOO_LARGE : scanBytes(bytes, matcher, request, stopped);
  } catch (error) {
    if (error instanceof ScanStopped) throw error;
    return UNREADABLE;
  } finally {
    closeSync(fd);
  }
}

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
    else bytes = readWhole(fd, stats.size, maxBytes);
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
 * The stamps of a {@link StampJob}'s files, each looked up inside its
 * verified directory; anything but a regular file has an unknown stamp.
 */
function stampFiles(directories: VerifiedDirectories, job: StampJob): StampAnswer {
  const stamps = new Float64Array(job.files.length * STAMP_FIELDS).fill(NaN);
  try {
    for (let i = 0; i < job.files.length; i++) {
      const stats = directories.statFile(job.files[i]);
      if (stats?.isFile()) writeStamp(stamps, i, stats, Date.now());
    }
    // Looked up through the route: the stamps stand only if it did not change.
    directories.confirm();
  } catch {
    // A route to descriptors that changed or cannot be had: the stamps are unknown, so their
    // files are read again (and that read fails as any other would).
    stamps.fill(NaN);
  }
  return { id: job.id, stamps };
}

/** Scans the files of a {@link FilesJob} in order, stopping when its search stops. */
function scanFiles(directories: VerifiedDirectories, job: FilesJob): FilesAnswer {
  const flag = new Int32Array(job.flags);
  const matcher = matcherFor(job.request);
  const results: (ScanResult | null)[] = [];
  const stopped = () => Atomics.load(flag, 0) !== 0;
  try {
    for (const file of job.files) {
      if (stopped()) break;
      const result = scanOne(directories, file, matcher, job.request, stopped);
      results.push(result.matches > 0 || result.skip !== undefined ? result : null);
    }
  } catch (error) {
    // Stopped during a file: the files scanned whole are answered.
    if (!(error instanceof ScanStopped)) throw error;
  }
  // The files were opened through the route: their results stand only if it did not change.
  directories.confirm();
  return { id: job.id, results };
}

/** Answers the jobs posted to this worker, listing directories with `list`. */
export function serveSearches(list: ListSync): void {
  // The pool serves every backend of the process: each job names its backend's routes.
  let last: { key: string; directories: VerifiedDirectories; io: WalkSyncIO<string> } | null = null;
  parentPort?.on("message", (job: UnitJob | SegmentJob | FilesJob | StampJob) => {
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
        let answer: FilesAnswer;
        try {
          answer = scanFiles(directories, job);
        } catch (error) {
          // A route to descriptors that changed or cannot be had: the job fails, the worker stays.
          answer = { id: job.id, results: [], error: (error as Error)?.message ?? String(error) };
        }
        parentPort!.postMessage(answer);
        return;
      }
      if (job.kind === "stamps") {
        const answer = stampFiles(directories, job);
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
