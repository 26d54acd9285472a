/**
 * The search index's entry table: every file and directory the walk visits
 * from the working directory, by display path and in walk order, with each
 * file's number (its id), its place in the content segments, and the stamp
 * its content was read with (see `search/index/stamps.ts`). It knows nothing
 * of segments, watchers or the file system: the index keeps it in step with
 * them.
 *
 * @module
 */
import { walkOrder } from "../search/walk.ts";
import type { IgnoreState } from "../search/walk.ts";
import { STAMP_FIELDS } from "../search/index/stamps.ts";

/** A file's place when its content is in no segment: a candidate of every search. */
export const IN_NO_SEGMENT = -1;
/** A file's place while its content is not indexed (not read yet, or taken out to be read again). */
export const NOT_INDEXED = -2;

/** A file of the table. */
export interface FileRecord {
  /** Its path relative to the working directory. */
  readonly display: string;
  /** Index of its segment; {@link IN_NO_SEGMENT} or {@link NOT_INDEXED}. */
  segment: number;
  /** Its local id in the segment. */
  local: number;
  /** The bytes of it the segment indexed. */
  bytes: number;
}

/** A directory of the table. */
export interface DirectoryRecord {
  /** Tells it from a file's entry. */
  readonly kind: "directory";
  /** The ignore rules in force in its parent (the walk's state when it met the directory). */
  outer: IgnoreState | null;
  /** Its entries' names, and what each is. */
  readonly children: Map<string, "file" | "directory">;
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
 * console.log(table.file(id)?.display); // "src/a.ts"
 * console.log(table.below("src")); // ["src/a.ts"]
 * ```
 */
export class EntryTable {
  readonly #entries = new Map<string, Entry>();
  /** Every entry but the working directory, in walk order, and its file id (-1: a directory). */
  readonly #sorted: string[] = [];
  readonly #sortedIds: number[] = [];
  readonly #files: (FileRecord | null)[] = [];
  /** The stamp of each file id as its content was read (NaN: unknown, or not read yet). */
  #stamps = new Float64Array(0);
  readonly #freeIds: number[] = [];

  /** A table that holds the working directory alone, with the ignore rules `outer` around it. */
  constructor(outer: IgnoreState | null) {
    this.#entries.set(".", { kind: "directory", outer, children: new Map() });
  }

  /** The entry at a display path (`.`: the working directory). */
  get(display: string): Entry | undefined {
    return this.#entries.get(display);
  }

  /** The file of an id, or `null`/`undefined` when the id is free. */
  file(id: number): FileRecord | null | undefined {
    return this.#files[id];
  }

  /** One more than the largest file id ever given. */
  get idSpace(): number {
    return this.#files.length;
  }

  /** Entries but the working directory. */
  get length(): number {
    return this.#sorted.length;
  }

  /** How many files and directories (the working directory counted) the table holds. */
  counts(): { files: number; directories: number } {
    let files = 0;
    for (const id of this.#sortedIds) if (id >= 0) files++;
    return { files, directories: this.#entries.size - files };
  }

  /** Every entry but the working directory, in walk order. */
  displays(): readonly string[] {
    return this.#sorted;
  }

  /** Per entry of {@link displays}, its file id, or -1 for a directory. */
  ids(): readonly number[] {
    return this.#sortedIds;
  }

  /** The stamps, `STAMP_FIELDS` numbers per file id. */
  get stamps(): Float64Array {
    return this.#stamps;
  }

  /** Sets a file's stamp from the `index`-th stamp of `stamps`. */
  setStamp(id: number, stamps: Float64Array, index: number): void {
    this.#stamps.set(
      stamps.subarray(index * STAMP_FIELDS, (index + 1) * STAMP_FIELDS),
      id * STAMP_FIELDS,
    );
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

  /** The entries strictly below a directory: `[from, to)` of {@link displays}. */
  range(directory: string): [number, number] {
    if (directory === ".") return [0, this.#sorted.length];
    let from = this.lowerBound(directory);
    if (this.#sorted[from] === directory) from++;
    const prefix = `${directory}/`;
    let to = from;
    while (to < this.#sorted.length && this.#sorted[to].startsWith(prefix)) to++;
    return [from, to];
  }

  /** Every entry below a directory, in walk order. */
  below(directory: string): string[] {
    const [from, to] = this.range(directory);
    return this.#sorted.slice(from, to);
  }

  #insert(display: string, id: number): void {
    const sorted = this.#sorted;
    const last = sorted.length - 1;
    if (last < 0 || walkOrder(sorted[last], display) < 0) {
      sorted.push(display);
      this.#sortedIds.push(id);
      return;
    }
    const at = this.lowerBound(display);
    sorted.splice(at, 0, display);
    this.#sortedIds.splice(at, 0, id);
  }

  /** Adds a file not indexed yet, with an unknown stamp; returns its id. */
  addFile(display: string): number {
    const id = this.#freeIds.pop() ?? this.#files.length;
    this.#files[id] = { display, segment: NOT_INDEXED, local: 0, bytes: 0 };
    if (this.#stamps.length < (id + 1) * STAMP_FIELDS) {
      const grown = new Float64Array(Math.max(1024, 2 * (id + 1)) * STAMP_FIELDS).fill(NaN);
      grown.set(this.#stamps);
      this.#stamps = grown;
    }
    this.#stamps.fill(NaN, id * STAMP_FIELDS, (id + 1) * STAMP_FIELDS);
    this.#entries.set(display, { kind: "file", id });
    this.#insert(display, id);
    const parent = this.#entries.get(parentOf(display));
    if (parent?.kind === "directory") parent.children.set(nameOf(display), "file");
    return id;
  }

  /** Adds a directory, with the ignore rules in force in its parent. */
  addDirectory(display: string, outer: IgnoreState | null): void {
    this.#entries.set(display, { kind: "directory", outer, children: new Map() });
    this.#insert(display, -1);
    const parent = this.#entries.get(parentOf(display));
    if (parent?.kind === "directory") parent.children.set(nameOf(display), "directory");
  }

  /**
   * Removes an entry, and everything below it for a directory, calling
   * `removing` with each entry's display and file id (-1: a directory)
   * while its file is still there; the ids are free from then on.
   */
  remove(display: string, removing: (display: string, id: number) => void): void {
    const entry = this.#entries.get(display);
    if (entry === undefined) return;
    const from = this.lowerBound(display);
    let to = from + 1;
    if (entry.kind === "directory") {
      const prefix = `${display}/`;
      while (to < this.#sorted.length && this.#sorted[to].startsWith(prefix)) to++;
    }
    for (let i = from; i < to; i++) {
      const id = this.#sortedIds[i];
      removing(this.#sorted[i], id);
      this.#entries.delete(this.#sorted[i]);
      if (id >= 0) {
        this.#files[id] = null;
        this.#freeIds.push(id);
      }
    }
    this.#sorted.splice(from, to - from);
    this.#sortedIds.splice(from, to - from);
    const parent = this.#entries.get(parentOf(display));
    if (parent?.kind === "directory") parent.children.delete(nameOf(display));
  }
}
