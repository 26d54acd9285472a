/**
 * The working directory from the MCP client's roots: when the client
 * declares `roots`, its first `file://` root becomes the working directory
 * of the calls that follow, and `notifications/roots/list_changed` moves it
 * for the calls after that. Calls already running keep their toolset.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import process from "node:process";
import * as v from "valibot";
import type { FinalizedToolset } from "../contract/toolset.ts";
import { MAX_ROOTS } from "./options.ts";

/**
 * How long a `roots/list` is waited for: the calls that follow a change of
 * roots wait for its answer, and a client that never answers would hold
 * them up for the request's default timeout (a minute) each time.
 */
export const ROOTS_TIMEOUT_MS = 10_000;

/** What the roots need of the MCP server. */
export interface RootsSource {
  /** Whether the client declared the `roots` capability. */
  declared(): boolean;
  /** The client's roots (`roots/list`). */
  list(): Promise<{ roots: { uri: string; name?: string }[] }>;
}

/**
 * The toolset for new calls: the fallback (`--root`, or the current
 * directory) until the client's roots name a working directory.
 */
export class ClientRoots {
  readonly #source: RootsSource;
  readonly #make: (root: string) => Promise<FinalizedToolset>;
  readonly #warn: (message: string) => void;
  readonly #made = new Map<string, FinalizedToolset>();
  readonly #fallback: Promise<FinalizedToolset>;
  #current: Promise<FinalizedToolset>;
  #reading = false;
  #again = false;

  /**
   * Roots from `source`, with toolsets made by `make` for a root's path;
   * `warn` hears a root that cannot be used.
   */
  constructor(
    source: RootsSource,
    fallback: FinalizedToolset,
    make: (root: string) => Promise<FinalizedToolset>,
    warn: (message: string) => void,
  ) {
    this.#source = source;
    this.#make = make;
    this.#warn = warn;
    this.#current = this.#fallback = Promise.resolve(fallback);
    this.#made.set(fallback.session.workingDirectory, fallback);
  }

  /** The toolset new calls use. */
  current(): Promise<FinalizedToolset> {
    return this.#current;
  }

  /** Every toolset made so far (their processes end with the server). */
  all(): FinalizedToolset[] {
    return [...new Set(this.#made.values())];
  }

  /**
   * Reads the client's roots again; a failure keeps the working directory
   * and is reported. Refreshes asked for while a read is under way are one
   * more read, after it: a burst of changes costs two reads, not one each.
   */
  refresh(): void {
    if (!this.#source.declared()) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    const before = this.#current;
    // One read at a time: two at once would both miss a root not yet made, make it twice, and
    // keep only one, leaving the other's processes running past the server (and the cap short).
    this.#current = before.then(() => this.#read()).catch(async (error) => {
      this.#warn(`The client's roots were not used: ${(error as Error).message}`);
      return await before;
    }).finally(() => {
      this.#reading = false;
      if (this.#again) {
        this.#again = false;
        this.refresh();
      }
    });
  }

  async #read(): Promise<FinalizedToolset> {
    const { roots } = await this.#source.list();
    const files = roots.filter((root) => root.uri.startsWith("file://"));
    if (files.length === 0) throw new Error("the client named no file:// root");
    const [first, ...others] = files;
    if (others.length > 0) {
      this.#warn(
        `Only the first root is the working directory (${first.uri}); ` +
          `${others.map((r) => r.uri).join(", ")} ${others.length === 1 ? "is" : "are"} not used.`,
      );
    }
    // Known by the directory it names, not by its spelling: `/repo`, `/repo/` and a link to it
    // are one working directory, so they neither make a toolset each nor use up the cap.
    const fallback = await this.#fallback;
    const path = await fallback.session.filesystem.realPath(fileURLToPath(first.uri));
    const known = this.#made.get(path);
    if (known !== undefined) return known;
    if (this.#made.size >= MAX_ROOTS) {
      throw new Error(
        `this server serves at most ${MAX_ROOTS} working directories; ${path} is one more`,
      );
    }
    const toolset = await this.#make(path);
    // Replaced by a link meanwhile: the toolset would serve another directory under this name.
    if (toolset.session.workingDirectory !== path) {
      await toolset.session.processes.shutdown();
      throw new Error(`${path} was replaced while its session was made`);
    }
    this.#made.set(path, toolset);
    return toolset;
  }
}

const RootsAnswer = v.object({
  roots: v.array(v.looseObject({ uri: v.string(), name: v.optional(v.string()) })),
});

/** What a 2025-era server gives its roots: the client it talks to. */
export interface RootsClient {
  /** Whether the client declared the `roots` capability. */
  declaresRoots(): boolean;
  /** Sends `roots/list`, waited for at most `timeoutMs`; resolves with the client's answer. */
  listRoots(timeoutMs: number): Promise<unknown>;
  /** Sends a warning to the client (`notifications/message`). */
  warn(message: string): Promise<unknown>;
}

/**
 * The roots of a 2025-era server for `toolset`: read from `client` when the
 * host gives `make` (a toolset for a root's path), else the toolset's own
 * directory. A root that cannot be used is a warning on stderr and to the
 * client.
 */
export function serverRoots(
  toolset: FinalizedToolset,
  make: ((root: string) => Promise<FinalizedToolset>) | undefined,
  client: RootsClient,
): ClientRoots {
  return new ClientRoots(
    {
      declared: () => make !== undefined && client.declaresRoots(),
      list: async () => v.parse(RootsAnswer, await client.listRoots(ROOTS_TIMEOUT_MS)),
    },
    toolset,
    make ?? (() => Promise.resolve(toolset)),
    (message) => {
      process.stderr.write(`openwork-tools: ${message}\n`);
      void client.warn(message).catch(() => {});
    },
  );
}
