/**
 * The worker that holds the Deno tree watcher's `Deno.watchFs`: adding the
 * recursive watches of a large tree takes the calling thread most of a
 * second (about 0.8 s for the Linux tree), which here blocks no caller. It
 * posts `{ started: true }` once the watches are in place, then every event
 * in order, then `{ ended: true, error? }`; a message `"close"` closes it.
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
    for await (const event of watcher) {
      scope.postMessage({ kind: event.kind, paths: event.paths, flag: event.flag ?? null });
    }
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
  }
  scope.postMessage({ ended: true, error });
}
