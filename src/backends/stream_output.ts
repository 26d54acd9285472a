/**
 * A web `ReadableStream` as a {@link ProcessOutput}, for the backends whose
 * runtime hands out child pipes as web streams.
 *
 * @module
 */
import type { ProcessOutput } from "./process.ts";

/** Bytes of the one buffer a byte stream is read into. */
const READ_BYTES = 64 * 1024;

/**
 * Reads a web stream to its end for {@link ProcessOutput.forEach}: a byte
 * stream into one reused buffer (a BYOB reader), so `yes` makes no garbage;
 * any other stream chunk by chunk. Cancelling the stream closes the pipe.
 */
export function webStreamOutput(stream: ReadableStream<Uint8Array>): ProcessOutput {
  let reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array> | null = null;
  let closed = false;
  return {
    async forEach(take) {
      if (reader !== null) throw new Error("The pipe is already being read.");
      if (closed) return;
      let byob: ReadableStreamBYOBReader | null = null;
      try {
        byob = stream.getReader({ mode: "byob" });
      } catch {
        byob = null; // not a byte stream
      }
      const reading = reader = byob ?? stream.getReader();
      let buffer = new ArrayBuffer(READ_BYTES);
      try {
        while (true) {
          const next = byob !== null
            ? await byob.read(new Uint8Array(buffer, 0, READ_BYTES))
            : await (reading as ReadableStreamDefaultReader<Uint8Array>).read();
          if (next.done) return;
          take(next.value);
          if (byob !== null) buffer = next.value.buffer as ArrayBuffer;
        }
      } catch (error) {
        await reading.cancel().catch(() => {});
        throw error;
      } finally {
        reading.releaseLock();
      }
    },
    close() {
      if (closed) return;
      closed = true;
      (reader ?? stream).cancel().catch(() => {});
    },
  };
}
