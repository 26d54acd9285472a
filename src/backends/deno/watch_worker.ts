/**
 * The worker that holds the Deno tree watcher's `Deno.watchFs`: adding the
 * recursive watches of a large tree takes the calling thread most of a
 * second (about 0.8 s for the Linux tree), which here blocks no caller. It
 * posts `{ started: true }` once the watches are in place, then every event
 * in order (`{ events, overrun }`, a batch at a time; `overrun` when the
 * runtime may have dropped some), then `{ ended: true, error? }`; a message `"close"` closes it.
 *
 * @module
 */

/** What the watcher's thread is asked to watch. */
interface Start {
  readonly paths: readonly string[];
}

/** The worker's own scope, as much of it as is used. */
interface Scope {
  onmessage: ((event: MessageEvent<Start | "close">) => void) | null;
  postMessage(message: unknown): void;
  close(): void;
}

const scope = globalThis as unknown as Scope;
/** Events the runtime's channel holds between its watcher and this thread. */
const CHANNEL_EVENTS = 16;
/**
 * Events read this many milliseconds apart or closer are one run: a run as
 * long as the channel holds may be a backlog it could not hold, and is taken
 * as a possible loss. A thread kept from reading while its channel fills, and
 * reading the backlog slower than this, is missed (best effort).
 */
const BURST_GAP_MS = 5;
let watcher: Deno.FsWatcher | null = null;

scope.onmessage = ({ data }) => {
  if (data === "close") {
    watcher?.close();
    return;
  }
  void run(data.paths);
};

async function run(paths: readonly string[]): Promise<void> {
  let error: string | undefined;
  try {
    watcher = Deno.watchFs([...paths], { recursive: true });
    scope.postMessage({ started: true });
    // Events go in batches, in order: one message per event would slow a burst of thousands.
    let batch: unknown[] = [];
    let overrun = false;
    let run = 0;
    let last = Number.NEGATIVE_INFINITY;
    const flush = () => {
      scope.postMessage({ events: batch, overrun });
      batch = [];
      overrun = false;
    };
    for await (const event of watcher) {
      if (batch.length === 0) setTimeout(flush, 0);
      batch.push({ kind: event.kind, paths: event.paths, flag: event.flag ?? null });
      // The runtime hands events over through a channel of 16 and drops, without a word, any
      // that find it full. So many events close together means the channel may have filled
      // while this thread was not reading: some may be lost.
      const now = performance.now();
      run = now - last <= BURST_GAP_MS ? run + 1 : 1;
      last = now;
      if (run >= CHANNEL_EVENTS) overrun = true;
    }
    if (batch.length > 0) flush();
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
  }
  scope.postMessage({ ended: true, error });
}
