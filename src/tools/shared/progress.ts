/**
 * Best-effort delivery of progress events: the sink is called one event at a
 * time, its failures are swallowed, and while it is busy events queue up to
 * a byte budget and then are dropped, so a slow sink never slows the tool.
 *
 * @module
 */
import type { ProgressSink, ToolProgress } from "../../contract/result.ts";

const QUEUE_BUDGET = 1024 * 1024;

/** Delivers progress events to a sink without ever blocking the caller. */
export class ProgressRelay {
  readonly #sink: ProgressSink | undefined;
  #queue: ToolProgress[] = [];
  #queued = 0;
  #busy = false;
  #closed = false;

  /** Wraps a sink (or nothing). */
  constructor(sink: ProgressSink | undefined) {
    this.#sink = sink;
  }

  /** Whether anyone listens: without a sink, callers need not even build events. */
  get active(): boolean {
    return this.#sink !== undefined && !this.#closed;
  }

  /** Queues an event; returns at once. */
  emit(event: ToolProgress): void {
    if (this.#sink === undefined || this.#closed) return;
    const size = event.kind === "message" ? event.message.length : event.chunk.length;
    if (this.#queued + size > QUEUE_BUDGET) return; // the sink fell behind: dropped
    this.#queue.push(event);
    this.#queued += size;
    if (!this.#busy) this.#pump();
  }

  /** Stops delivery: the call has its result, so queued events are dropped. */
  close(): void {
    this.#closed = true;
    this.#queue = [];
    this.#queued = 0;
  }

  // Delivers at once while the sink is idle; while an asynchronous sink is
  // busy, later events wait in the queue and are delivered in order.
  #pump(): void {
    this.#busy = true;
    const next = async (): Promise<void> => {
      while (this.#queue.length > 0 && !this.#closed) {
        const event = this.#queue.shift()!;
        this.#queued -= event.kind === "message" ? event.message.length : event.chunk.length;
        try {
          const pending = this.#sink!(event);
          if (typeof (pending as Promise<void> | undefined)?.then === "function") await pending;
        } catch {
          // A failing sink changes nothing: progress is best-effort.
        }
      }
      this.#busy = false;
    };
    void next();
  }
}
