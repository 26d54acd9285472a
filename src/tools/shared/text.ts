/**
 * Text rules shared by the file tools: caps, binary detection, strict UTF-8
 * decoding, and cuts that never split a UTF-8 character.
 *
 * @module
 */
import { ToolError } from "../../errors.ts";

export { MAX_TEXT_BYTES } from "../../artifacts/file_change.ts";

export { BINARY_SNIFF_BYTES, looksBinary } from "../../search/scan.ts";
import { looksBinary } from "../../search/scan.ts";

/** Decodes strict UTF-8, or throws `invalid_utf8` naming the file. */
export function decodeUtf8(bytes: Uint8Array, shown: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ToolError(
      "invalid_utf8",
      `${shown} is not valid UTF-8 text; it cannot be shown or changed as text.`,
    );
  }
}

/** Decodes a file that must be text: not binary, valid UTF-8. */
export function decodeTextFile(bytes: Uint8Array, shown: string): string {
  if (looksBinary(bytes)) {
    throw new ToolError(
      "binary_file",
      `${shown} is a binary file (it holds a NUL byte); it is not treated as text.`,
    );
  }
  return decodeUtf8(bytes, shown);
}

/** The largest index ≤ `end` that does not fall inside a UTF-8 sequence of `bytes`. */
export function utf8Boundary(bytes: Uint8Array, end: number): number {
  let at = Math.max(0, Math.min(end, bytes.length));
  // Continuation bytes are 10xxxxxx: step back to the start of the character.
  while (at > 0 && at < bytes.length && (bytes[at] & 0xc0) === 0x80) at--;
  return at;
}

/** `text` cut to at most `maxBytes` of UTF-8, on a character boundary. */
export function cutUtf8(text: string, maxBytes: number): { text: string; cut: boolean } {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return { text, cut: false };
  return {
    text: new TextDecoder().decode(bytes.subarray(0, utf8Boundary(bytes, maxBytes))),
    cut: true,
  };
}

/** UTF-8 byte length of a string. */
export function byteLength(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) length += 1;
    else if (code < 0x800) length += 2;
    else if (code >= 0xd800 && code < 0xdc00 && i + 1 < text.length) {
      length += 4;
      i++;
    } else length += 3;
  }
  return length;
}

/** A line as `read` shows it (and edit errors quote it): its 1-based number, right-aligned to 6, a tab, the text. */
export function numberedLine(lineIndex: number, line: string): string {
  return `${String(lineIndex + 1).padStart(6)}\t${line}`;
}
