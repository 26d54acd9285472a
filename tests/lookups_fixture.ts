/**
 * What the input-bound tests share: a file system that counts (and can
 * interrupt) the lookups made through it, a session on it, and the
 * commands they classify.
 */
import {
  type AsyncFileSystem,
  createMemoryFileSystem,
  createSession,
  MAX_CLASSIFIER_LOOKUPS,
  type ToolSessionContext,
} from "../mod.ts";

/**
 * Counts the file-system lookups made through a file system (realPath,
 * lstat, stat), calling `onLookup` with each path before looking it up.
 * Past `refuseAfter` a lookup fails, so that code without bounds ends soon
 * and shows its count.
 */
export class Lookups {
  count = 0;
  last = "";
  onLookup: (path: string) => void | Promise<void> = () => {};
  constructor(readonly refuseAfter: number = 20 * MAX_CLASSIFIER_LOOKUPS) {}

  wrap(inner: AsyncFileSystem): AsyncFileSystem {
    return new Proxy(inner, {
      get: (target, key) => {
        const value = Reflect.get(target, key, target);
        if (typeof value !== "function") return value;
        if (key !== "realPath" && key !== "lstat" && key !== "stat") return value.bind(target);
        return async (...args: unknown[]) => {
          this.count++;
          this.last = String(args[0]);
          await this.onLookup(this.last);
          if (this.count > this.refuseAfter) throw new Error("too many lookups");
          return value.apply(target, args);
        };
      },
    });
  }
}

/**
 * A session on a memory file system whose lookups `lookups` counts, with
 * files `f0`…`f9`, and a `PATH` of its own (the classifier looks its
 * entries up too).
 */
export async function countedSession(lookups: Lookups): Promise<ToolSessionContext> {
  const memory = createMemoryFileSystem();
  memory.mkdirp("/repo");
  for (let i = 0; i < 10; i++) memory.writeFile(`/repo/f${i}`, `${i}\n`);
  const session = await createSession({
    workingDirectory: "/repo",
    filesystem: lookups.wrap(memory),
    environment: { PATH: "/usr/bin:/bin" },
  });
  lookups.count = 0; // the session's own, canonicalizing its root
  return session;
}

/** `ls f0 f1 … f(n-1)`. */
export function lsCommand(operands: number): string {
  const words = ["ls"];
  for (let i = 0; i < operands; i++) words.push(`f${i}`);
  return words.join(" ");
}

/** The 2 MB command: `ls f0 … f249999`, more than bash can be started with. */
export const TWO_MB: string = lsCommand(250_000);

/**
 * `ls f0 … f14999`, 94 KB: longer than a command is classified, shorter than
 * bash can be started with.
 */
export const LONG_COMMAND: string = lsCommand(15_000);
