/**
 * Bounded capture of a byte stream: a fixed head and a fixed tail are kept,
 * everything between is only counted. Memory stays constant however much a
 * command prints, and cuts never split a UTF-8 character.
 *
 * @module
 */
import { utf8Boundary } from "./text.ts";

/** Keeps the first `headBytes` and the last `tailBytes` of everything pushed. */
export class BoundedOutput {
  readonly #head: Uint8Array;
  #headLength = 0;
  readonly #tail: Uint8Array;
  #tailStart = 0; // index of the oldest byte in the ring
  #tailLength = 0;
  #total = 0;

  /** Makes an empty capture. */
  constructor(headBytes: number, tailBytes: number) {
    this.#head = new Uint8Array(headBytes);
    this.#tail = new Uint8Array(tailBytes);
  }

  /** Adds a chunk. */
  push(chunk: Uint8Array): void {
    this.#total += chunk.length;
    const toHead = Math.min(chunk.length, this.#head.length - this.#headLength);
    if (toHead > 0) {
      this.#head.set(chunk.subarray(0, toHead), this.#headLength);
      this.#headLength += toHead;
    }
    let rest = chunk.subarray(toHead);
    const size = this.#tail.length;
    if (rest.length === 0 || size === 0) return;
    if (rest.length >= size) {
      this.#tail.set(rest.subarray(rest.length - size));
      this.#tailStart = 0;
      this.#tailLength = size;
      return;
    }
    while (rest.length > 0) {
      const end = (this.#tailStart + this.#tailLength) % size;
      const room = this.#tailLength < size
        ? Math.min(size - this.#tailLength, size - end)
        : size - end;
      const n = Math.min(rest.length, room);
      this.#tail.set(rest.subarray(0, n), end);
      const overflow = Math.max(0, this.#tailLength + n - size);
      this.#tailLength = Math.min(size, this.#tailLength + n);
      this.#tailStart = (this.#tailStart + overflow) % size;
      rest = rest.subarray(n);
    }
  }

  /** The kept text and how many bytes between head and tail were left out. */
  finish(): { text: string; omittedBytes: number } {
    const decoder = new TextDecoder();
    const head = this.#head.subarray(0, this.#headLength);
    const tail = new Uint8Array(this.#tailLength);
    const firstPart = this.#tail.subarray(this.#tailStart, this.#tailStart + this.#tailLength);
    tail.set(firstPart);
    tail.set(this.#tail.subarray(0, this.#tailLength - firstPart.length), firstPart.length);
    const omitted = this.#total - this.#headLength - this.#tailLength;
    if (omitted === 0) return { text: decoder.decode(joinBytes(head, tail)), omittedBytes: 0 };
    const headEnd = utf8Boundary(head, head.length);
    let tailStart = 0;
    while (tailStart < tail.length && (tail[tailStart] & 0xc0) === 0x80) tailStart++;
    const omittedBytes = omitted + (head.length - headEnd) + tailStart;
    const text = decoder.decode(head.subarray(0, headEnd)) +
      `\n[… ${omittedBytes} bytes omitted …]\n` +
      decoder.decode(tail.subarray(tailStart));
    return { text, omittedBytes };
  }
}

function joinBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}
