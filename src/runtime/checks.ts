/**
 * What runtime the code runs on, and what it offers that the rest reads:
 * every runtime check of the library is here.
 *
 * @module
 */
import process from "node:process";

/**
 * Whether the code runs under Deno. Deno names itself in Node's
 * `process.versions`; a Node shim of the `Deno` global does not.
 */
export const isDeno: boolean = process.versions.deno !== undefined;

/**
 * The URL of the module `name` beside the module at `base`, with the
 * extension the code runs with: `.ts` from the sources, `.js` once compiled
 * (the npm build), `.mjs` in a bundle named so.
 */
export function moduleBeside(base: string, name: string): URL {
  const extension = /\.[cm]?[jt]s$/.exec(new URL(base).pathname)?.[0] ?? ".js";
  return new URL(`./${name}${extension}`, base);
}

/** The host's environment, or a minimal one where the runtime refuses to read it. */
export function hostEnvironment(): Record<string, string> {
  try {
    const environment: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined) environment[key] = value;
    }
    return environment;
  } catch {
    // Deno without --allow-env throws on reading the environment.
    return { PATH: "/usr/local/bin:/usr/bin:/bin" };
  }
}

/**
 * This process's user id; `null` where the runtime does not tell it (Deno
 * without `--allow-sys=uid`) or has none (Windows).
 */
export function processUid(): number | null {
  try {
    return process.getuid?.() ?? null;
  } catch {
    return null;
  }
}
