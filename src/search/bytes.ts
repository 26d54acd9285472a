/**
 * Byte search that runs natively on every runtime, for the scans of `grep`:
 * a NUL byte, a literal. Node's `Buffer.prototype.indexOf` is a native
 * memchr / memmem; Deno's `node:buffer` runs it in JavaScript, more than ten
 * times slower on the Linux tree (measured: 5.6 s against 0.38 s for 1.3 GB).
 * There the bytes are taken as a one-byte string (one byte, one character:
 * latin1) and searched with `String.prototype.indexOf`, which V8 runs
 * natively, about 0.55 s for the same bytes.
 *
 * A literal is looked for by its rarest byte first (see `byte_ranks.ts`):
 * the native single-byte search skips most of a text between candidates,
 * each checked here, about three times faster than the native search for
 * the whole literal on source code. Where that byte turns out to be common
 * in a text, the rest of the text goes to the native search for the whole
 * literal.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { BYTE_RANKS } from "./byte_ranks.ts";
import { isDeno } from "../runtime/checks.ts";

/** A literal to search bytes for, in the form each way of searching needs. */
export interface ByteLiteral {
  /** The literal's bytes. */
  readonly bytes: Uint8Array;
  /** The same bytes as a one-byte string. */
  readonly latin1: string;
  /** Index of its rarest byte in text, the one looked for first. */
  readonly rare: number;
  /** Index of its next rarest byte, another than `rare` where it has two or more. */
  readonly second: number;
}

/** A literal's bytes, ready to search for. */
export function byteLiteral(bytes: Uint8Array): ByteLiteral {
  const rarest = (except: number) => {
    let found = -1;
    for (let i = 0; i < bytes.length; i++) {
      if (i !== except && (found === -1 || BYTE_RANKS[bytes[i]] < BYTE_RANKS[bytes[found]])) {
        found = i;
      }
    }
    return found;
  };
  const rare = Math.max(0, rarest(-1));
  const second = bytes.length > 1 ? rarest(rare) : rare;
  return { bytes, latin1: asBuffer(bytes).toString("latin1"), rare, second };
}

/**
 * Candidates checked before the rare byte's density is judged, and the
 * fewest bytes of text per candidate below which the byte counts as common
 * in this text.
 */
const SETTLE_CANDIDATES = 16;
const BYTES_PER_CANDIDATE = 64;

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** Whether `Buffer.prototype.indexOf` is the runtime's own native search (Node's, not Deno's). */
export const NATIVE_BUFFER_SEARCH: boolean = !isDeno;

/**
 * Bytes made ready to search: the bytes themselves as a `Buffer` where its
 * search is native, else a one-byte string of them. Positions are byte
 * offsets either way.
 */
export type Haystack = Buffer | string;

/** `bytes` made ready to search on this runtime. */
export function haystack(bytes: Uint8Array): Haystack {
  const buffer = asBuffer(bytes);
  return NATIVE_BUFFER_SEARCH ? buffer : buffer.toString("latin1");
}

/** Whether `bytes` holds a NUL byte. */
export function holdsNul(bytes: Uint8Array): boolean {
  return findByte(haystack(bytes), 0, 0) !== -1;
}

/** Whether `bytes` holds `literal`. */
export function holdsLiteral(bytes: Uint8Array, literal: ByteLiteral): boolean {
  return findLiteral(haystack(bytes), literal, 0) !== -1;
}

/** The first position at or after `from` of a byte value, or -1. */
export function findByte(text: Haystack, byte: number, from: number): number {
  return typeof text === "string"
    ? text.indexOf(String.fromCharCode(byte), from)
    : text.indexOf(byte, from);
}

/** The last position at or before `at` of a byte value, or -1. */
export function findByteBefore(text: Haystack, byte: number, at: number): number {
  return typeof text === "string"
    ? text.lastIndexOf(String.fromCharCode(byte), at)
    : text.lastIndexOf(byte, at);
}

/** The first position at or after `from` where `literal` starts, or -1. */
export function findLiteral(text: Haystack, literal: ByteLiteral, from: number): number {
  return typeof text === "string"
    ? findInText(text, literal, from)
    : findInBuffer(text, literal, from);
}

// The two searches below are one algorithm over two representations, written out twice: a
// shared version would call through closures for every candidate, on the hottest path of grep.

/** {@link findLiteral} in a buffer, with Node's native byte search. */
function findInBuffer(buffer: Buffer, literal: ByteLiteral, from: number): number {
  const { bytes, rare } = literal;
  const target = bytes[rare];
  // The rare byte of a match stands at most here.
  const last = buffer.length - bytes.length + rare;
  let candidates = 0;
  for (let at = buffer.indexOf(target, from + rare); at !== -1 && at <= last;) {
    const start = at - rare;
    let same = 0;
    while (same < bytes.length && buffer[start + same] === bytes[same]) same++;
    if (same === bytes.length) return start;
    if (++candidates > SETTLE_CANDIDATES && candidates * BYTES_PER_CANDIDATE > at - from) {
      return buffer.indexOf(bytes, start + 1);
    }
    at = buffer.indexOf(target, at + 1);
  }
  return -1;
}

/** {@link findLiteral} in a one-byte string, with V8's native string search. */
function findInText(text: string, literal: ByteLiteral, from: number): number {
  const { latin1, rare } = literal;
  const target = latin1[rare];
  const last = text.length - latin1.length + rare;
  let candidates = 0;
  for (let at = text.indexOf(target, from + rare); at !== -1 && at <= last;) {
    const start = at - rare;
    if (text.startsWith(latin1, start)) return start;
    if (++candidates > SETTLE_CANDIDATES && candidates * BYTES_PER_CANDIDATE > at - from) {
      return text.indexOf(latin1, start + 1);
    }
    at = text.indexOf(target, at + 1);
  }
  return -1;
}
