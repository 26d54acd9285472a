/**
 * The search index's entry table: every file and directory the walk visits
 * from the working directory, by display path and in walk order, with each
 * file's number (its id), its place in the content segments, and the stamp
 * its content was read with (see `search/index/stamps.ts`). It knows nothing
 * of segments, watchers or the file system: the index keeps it in step with
 * them.
 *
 * A file is numbers in typed arrays by id, and its display path, held once
 * (the walk-ordered list and the list by id share the string); only the
 * directories, far fewer, are records. A path is found by a binary search
 * of the walk-ordered list, so no map of every path is kept; the table
 * counts what it holds ({@link EntryTable.memory}).
 *
 * @module
 */
import { walkOrder } from "../search/walk.ts";
import type { IgnoreState } from "../search/walk.ts";
import { STAMP_FIELDS } from "../search/index/stamps.ts";
import { stringBytes } from "../search/index/packed_paths.ts";

/** A file's place when its content is in no segment: a candidate of every search. */
export const IN_NO_SEGMENT = -1;
/** A file's place while its content is not indexed (not read yet, or taken out to be read again). */
export const NOT_INDEXED = -2;
/** The place of a file id that names no file (removed, free to be given again). */
const FREE = -3;

/** A file of the table, as it is when asked for (a copy: the table holds numbers). */
export interface FileRecord {
  /** Its path relative to the working directory. */
  readonly display: string;
  /** Index of its segment; {@link IN_NO_SEGMENT} or {@link NOT_INDEXED}. */
  readonly segment: number;
  /** Its local id in the segment. */
  readonly local: number;
  /** The bytes of it the segment indexed. */
  readonly bytes: number;
}

/** A directory of the table. */
export interface DirectoryRecord {
  /** Tells it from a file's entry. */
  readonly kind: "directory";
  /** The ignore rules in force in its parent (the walk's state when it met the directory). */
  outer: IgnoreState | null;
}

/** An entry of the table: a file (by id) or a directory. */
export type Entry = { readonly kind: "file"; readonly id: number } | DirectoryRecord;

/** The directory part of a display path (`.` for a name of the working directory). */
export function parentOf(display: string): string {
  const slash = display.lastIndexOf("/");
  return slash === -1 ? "." : display.slice(0, slash);
}

/** The last name of a display path. */
export function nameOf(display: string): string {
  return display.slice(display.lastIndexOf("/") + 1);
}

/** A name's display path in a directory. */
export function joinDisplay(directory: string, name: string): string {
  return directory === "." ? name : `${directory}/${name}`;
}

/** Bytes of a reference in a list (a JavaScript array of strings). */
const REFERENCE_BYTES = 8;
/** Bytes of a directory's record and its place in the map of directories, beyond its path. */
const DIRECTORY_BYTES = 96;
/** Bytes per file id of the typed arrays: segment, local id, bytes indexed, stamp. */
const ID_BYTES = 3 * 4 + STAMP_FIELDS * 8;
/** Bytes per entry of the walk-ordered id list. */
const ORDER_BYTES = 4;
/**
 * The bytes a file's entry takes in the table besides its path's string
 * (see {@link stringBytes}): what a listing of the tree counts per entry.
 */
export const LISTED_ENTRY_BYTES: number = 2 * REFERENCE_BYTES + ORDER_BYTES + ID_BYTES;
/** File ids (and entries) room is first made for. */
const FIRST_ROOM = 64;

/** Room for `needed`, grown by half again at least. */
function grownRoom(room: number, needed: number): number {
  return Math.max(needed, FIRST_ROOM, room + (room >> 1));
}

/**
 * The entries of an index. File ids are reused once their file is removed;
 * a stamp is kept per id.
 *
 * @example
 * ```ts
 * import { EntryTable } from "./entries.ts";
 *
 * const table = new EntryTable(null);
 * table.addDirectory("src", null);
 * const id = table.addFile("src/a.ts");
 * table.addFile("README.md");
 * console.log(table.displays()); // ["README.md", "src", "src/a.ts"]
 * console.log(table.display(id)); // "src/a.ts"
 * console.log(table.below("src")); // ["src/a.ts"]
 * ```
 */
export class EntryTable {
  /** The directories, the working directory (`.`) among them. */
  readonly #directories = new Map<string, DirectoryRecord>();
  /** Every entry but the working directory, in walk order. */
  readonly #sorted: string[] = [];
  /** Per entry of {@link #sorted}, its file id (-1: a directory); `#sorted.length` are used. */
  #sortedIds = new Int32Array(0);
  /** Per file id: its display (`""` once free), its place, and the stamp it was read with. */
  readonly #displays: string[] = [];
  #segments = new Int32Array(0);
  #locals = new Int32Array(0);
  #bytes = new Int32Array(0);
  /** The stamp of each file id as its content was read (NaN: unknown, or not read yet). */
  #stamps = new Float64Array(0);
  readonly #freeIds: number[] = [];
  #files = 0;
  /** Bytes of the strings and records held (see {@link memory}). */
  #held = 0;
  /** The first display path two entries were added under, if any. */
  #alike: string | null = null;

  /** A table that holds the working directory alone, with the ignore rules `outer` around it. */
  constructor(outer: IgnoreState | null) {
    this.#directories.set(".", { kind: "directory", outer });
    this.#held = DIRECTORY_BYTES + stringBytes(".");
  }

  /**
   * The bytes the table takes: its typed arrays' lengths exactly, its
   * strings by their characters (one byte each, two where a wide one is
   * among them) and header, a reference per path in its lists, and a
   * directory's record by its usual size.
   */
  get memory(): number {
    return this.#held + this.#sortedIds.byteLength + this.#stamps.byteLength +
      this.#segments.byteLength + this.#locals.byteLength + this.#bytes.byteLength +
      REFERENCE_BYTES * (this.#sorted.length + this.#displays.length);
  }

  /** How many more bytes {@link memory} would be once an entry at `display` is added. */
  growth(display: string, kind: "file" | "directory"): number {
    let bytes = stringBytes(display) + REFERENCE_BYTES +
      this.#roomGrowth(this.#sortedIds.length, this.#sorted.length + 1, ORDER_BYTES);
    if (kind === "directory") return bytes + DIRECTORY_BYTES;
    if (this.#freeIds.length === 0) {
      bytes += REFERENCE_BYTES +
        this.#roomGrowth(this.#segments.length, this.#displays.length + 1, ID_BYTES);
    }
    return bytes;
  }

  #roomGrowth(room: number, needed: number, bytes: number): number {
    return needed <= room ? 0 : (grownRoom(room, needed) - room) * bytes;
  }

  /** Makes room at once for `entries` entries, `files` of them files (a listing's count). */
  reserve(entries: number, files: number): void {
    if (entries > this.#sortedIds.length) this.#growOrder(entries);
    if (files > this.#segments.length) this.#growIds(files);
  }

  /** How many more bytes {@link reserve} would take. */
  reserveGrowth(entries: number, files: number): number {
    return Math.max(0, entries - this.#sortedIds.length) * ORDER_BYTES +
      Math.max(0, files - this.#segments.length) * ID_BYTES;
  }

  #growOrder(room: number): void {
    const grown = new Int32Array(room);
    grown.set(this.#sortedIds.subarray(0, this.#sorted.length));
    this.#sortedIds = grown;
  }

  #growIds(room: number): void {
    const grow = <T extends Int32Array | Float64Array>(old: T, make: (n: number) => T): T => {
      const grown = make(room);
      grown.set(old);
      return grown;
    };
    this.#segments = grow(this.#segments, (n) => new Int32Array(n).fill(FREE));
    this.#locals = grow(this.#locals, (n) => new Int32Array(n));
    this.#bytes = grow(this.#bytes, (n) => new Int32Array(n));
    this.#stamps = grow(this.#stamps, (n) => new Float64Array(n * STAMP_FIELDS).fill(NaN));
  }

  /**
   * A display path two entries were added under, or `null`: names that are
   * not UTF-8 are shown with U+FFFD in their place, so two such may show
   * alike, and the table, which finds entries by their display paths,
   * cannot tell them apart.
   */
  get alike(): string | null {
    return this.#alike;
  }

  /** The entry at a display path (`.`: the working directory). */
  get(display: string): Entry | undefined {
    const directory = this.#directories.get(display);
    if (directory !== undefined) return directory;
    const at = this.lowerBound(display);
    if (this.#sorted[at] !== display) return undefined;
    const id = this.#sortedIds[at];
    return id >= 0 ? { kind: "file", id } : undefined;
  }

  /** Whether an id names a file of the table. */
  has(id: number): boolean {
    return id >= 0 && id < this.#displays.length && this.#segments[id] !== FREE;
  }

  /** A copy of the file of an id, or `null`/`undefined` when the id is free. */
  file(id: number): FileRecord | null | undefined {
    if (id < 0 || id >= this.#displays.length) return undefined;
    if (this.#segments[id] === FREE) return null;
    return {
      display: this.#displays[id],
      segment: this.#segments[id],
      local: this.#locals[id],
      bytes: this.#bytes[id],
    };
  }

  /** The display path of a file id (`""` when the id is free). */
  display(id: number): string {
    return this.#displays[id];
  }

  /** Index of a file's segment; {@link IN_NO_SEGMENT} or {@link NOT_INDEXED}. */
  segment(id: number): number {
    return this.#segments[id];
  }

  /** A file's local id in its segment. */
  local(id: number): number {
    return this.#locals[id];
  }

  /** The bytes of a file its segment indexed. */
  bytes(id: number): number {
    return this.#bytes[id];
  }

  /** Sets where a file's content is indexed (`segment`, {@link IN_NO_SEGMENT} or {@link NOT_INDEXED}). */
  place(id: number, segment: number, local = 0, bytes = 0): void {
    this.#segments[id] = segment;
    this.#locals[id] = local;
    this.#bytes[id] = bytes;
  }

  /** One more than the largest file id ever given. */
  get idSpace(): number {
    return this.#displays.length;
  }

  /** Entries but the working directory. */
  get length(): number {
    return this.#sorted.length;
  }

  /** How many files and directories (the working directory counted) the table holds. */
  counts(): { files: number; directories: number } {
    return { files: this.#files, directories: this.#directories.size };
  }

  /** Every entry but the working directory, in walk order. */
  displays(): readonly string[] {
    return this.#sorted;
  }

  /** Per entry of {@link displays}, its file id, or -1 for a directory (a view: do not keep it). */
  ids(): Int32Array {
    return this.#sortedIds.subarray(0, this.#sorted.length);
  }

  /** The stamps, `STAMP_FIELDS` numbers per file id. */
  get stamps(): Float64Array {
    return this.#stamps;
  }

  /** Sets a file's stamp from the `index`-th stamp of `stamps`. */
  setStamp(id: number, stamps: Float64Array, index: number): void {
    // Field by field: a view per file would be garbage made per file of a large load.
    for (let k = 0; k < STAMP_FIELDS; k++) {
      this.#stamps[id * STAMP_FIELDS + k] = stamps[index * STAMP_FIELDS + k];
    }
  }

  /** Index in {@link displays} of the first entry not before `display`. */
  lowerBound(display: string): number {
    const sorted = this.#sorted;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (walkOrder(sorted[mid], display) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The first index from `from` on whose entry is not below `prefix`
   * (`directory/`); the entries below a directory are next to each other
   * in walk order, so a binary search finds it.
   */
  #endBelow(from: number, prefix: string): number {
    const sorted = this.#sorted;
    let lo = from;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid].startsWith(prefix)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The entries strictly below a directory: `[from, to)` of {@link displays}. */
  range(directory: string): [number, number] {
    if (directory === ".") return [0, this.#sorted.length];
    let from = this.lowerBound(directory);
    if (this.#sorted[from] === directory) from++;
    return [from, this.#endBelow(from, `${directory}/`)];
  }

  /** Every entry below a directory, in walk order. */
  below(directory: string): string[] {
    const [from, to] = this.range(directory);
    return this.#sorted.slice(from, to);
  }

  /** The entries right in a directory (not deeper), in walk order. */
  children(directory: string): string[] {
    const [from, to] = this.range(directory);
    const found: string[] = [];
    for (let i = from; i < to;) {
      const display = this.#sorted[i];
      found.push(display);
      i = this.#sortedIds[i] >= 0 ? i + 1 : this.#endBelow(i + 1, `${display}/`);
    }
    return found;
  }

  #insert(display: string, id: number): void {
    const sorted = this.#sorted;
    const count = sorted.length;
    if (count === this.#sortedIds.length) {
      this.#growOrder(grownRoom(this.#sortedIds.length, count + 1));
    }
    if (count === 0 || walkOrder(sorted[count - 1], display) < 0) {
      sorted.push(display);
      this.#sortedIds[count] = id;
      return;
    }
    const at = this.lowerBound(display);
    if (sorted[at] === display) this.#alike ??= display;
    sorted.splice(at, 0, display);
    this.#sortedIds.copyWithin(at + 1, at, count);
    this.#sortedIds[at] = id;
  }

  /** Adds a file not indexed yet, with an unknown stamp; returns its id. */
  addFile(display: string): number {
    let id = this.#freeIds.pop();
    if (id === undefined) {
      id = this.#displays.length;
      if (id === this.#segments.length) this.#growIds(grownRoom(this.#segments.length, id + 1));
      this.#displays.push(display);
    } else this.#displays[id] = display;
    this.#segments[id] = NOT_INDEXED;
    this.#locals[id] = 0;
    this.#bytes[id] = 0;
    this.#stamps.fill(NaN, id * STAMP_FIELDS, (id + 1) * STAMP_FIELDS);
    this.#files++;
    this.#held += stringBytes(display);
    this.#insert(display, id);
    return id;
  }

  /** Adds a directory, with the ignore rules in force in its parent. */
  addDirectory(display: string, outer: IgnoreState | null): void {
    this.#directories.set(display, { kind: "directory", outer });
    this.#held += DIRECTORY_BYTES + stringBytes(display);
    this.#insert(display, -1);
  }

  /**
   * Removes an entry, and everything below it for a directory, calling
   * `removing` with each entry's display and file id (-1: a directory)
   * while its file is still there; the ids are free from then on.
   */
  remove(display: string, removing: (display: string, id: number) => void): void {
    const from = this.lowerBound(display);
    if (this.#sorted[from] !== display) return;
    const to = this.#sortedIds[from] >= 0 ? from + 1 : this.#endBelow(from + 1, `${display}/`);
    for (let i = from; i < to; i++) {
      const id = this.#sortedIds[i];
      const removed = this.#sorted[i];
      removing(removed, id);
      this.#held -= stringBytes(removed);
      if (id >= 0) {
        this.#segments[id] = FREE;
        this.#displays[id] = "";
        this.#freeIds.push(id);
        this.#files--;
      } else {
        this.#directories.delete(removed);
        this.#held -= DIRECTORY_BYTES;
      }
    }
    const count = this.#sorted.length;
    this.#sorted.splice(from, to - from);
    this.#sortedIds.copyWithin(from, to, count);
  }
}
