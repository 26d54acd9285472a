/**
 * Paths packed into two typed arrays, to be sent between threads: the UTF-8
 * bytes of each path after the other, and where each ends. A listing of a
 * large tree sent as an array of strings is cloned string by string, and
 * the strings stay in the sending thread's heap until it collects them (its
 * heap grown for them); packed, its buffers are handed over whole, and the
 * receiver makes each string once, as it takes it.
 *
 * @module
 */

/** Paths packed; see the module documentation. */
export interface PackedPaths {
  /** The UTF-8 bytes of every path, one after the other. */
  readonly bytes: Uint8Array;
  /** Per path, the offset in {@link bytes} where it ends (it begins where the one before ends). */
  readonly ends: Uint32Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Paths packed as they are added.
 *
 * @example
 * ```ts
 * import { PathPacker, unpackPath } from "./packed_paths.ts";
 *
 * const packer = new PathPacker();
 * packer.add("src");
 * packer.add("src/a.ts");
 * const packed = packer.done();
 * console.log(packed.ends.length, unpackPath(packed, 1)); // 2 "src/a.ts"
 * ```
 */
export class PathPacker {
  #bytes = new Uint8Array(4096);
  #ends = new Uint32Array(256);
  #count = 0;
  #at = 0;

  /** Paths added. */
  get count(): number {
    return this.#count;
  }

  /** Adds a path after the others. */
  add(path: string): void {
    // A UTF-8 character takes at most three bytes per UTF-16 unit.
    if (this.#bytes.length - this.#at < 3 * path.length) {
      const larger = new Uint8Array(Math.max(this.#at + 3 * path.length, 2 * this.#bytes.length));
      larger.set(this.#bytes);
      this.#bytes = larger;
    }
    this.#at += encoder.encodeInto(path, this.#bytes.subarray(this.#at)).written;
    if (this.#count === this.#ends.length) {
      const larger = new Uint32Array(2 * this.#ends.length);
      larger.set(this.#ends);
      this.#ends = larger;
    }
    this.#ends[this.#count++] = this.#at;
  }

  /** The paths added, in arrays of their exact lengths (the packer is not to be used after). */
  done(): PackedPaths {
    return {
      bytes: this.#bytes.slice(0, this.#at),
      ends: this.#ends.slice(0, this.#count),
    };
  }
}

/** `paths` packed. */
export function packPaths(paths: readonly string[]): PackedPaths {
  const packer = new PathPacker();
  for (const path of paths) packer.add(path);
  return packer.done();
}

/** Every path of `packed`, in order. */
export function unpackPaths(packed: PackedPaths): string[] {
  return Array.from(packed.ends, (_, i) => unpackPath(packed, i));
}

/** No paths. */
export function noPaths(): PackedPaths {
  return { bytes: new Uint8Array(0), ends: new Uint32Array(0) };
}

/** The `index`-th path of `packed`, a string of its own. */
export function unpackPath(packed: PackedPaths, index: number): string {
  const from = index === 0 ? 0 : packed.ends[index - 1];
  return decoder.decode(packed.bytes.subarray(from, packed.ends[index]));
}

/** Bytes of a string besides its characters: its header. */
const STRING_HEADER_BYTES = 16;

/** The bytes a string of `display` takes: one per character, two where one is wide. */
export function stringBytes(display: string): number {
  let characters = display.length;
  for (let i = 0; i < display.length; i++) {
    if (display.charCodeAt(i) > 0xff) {
      characters *= 2;
      break;
    }
  }
  return STRING_HEADER_BYTES + ((characters + 7) & ~7);
}
