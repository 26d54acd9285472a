/**
 * What runtime the code runs on, and what it offers that the rest reads:
 * every runtime check of the library is here.
 *
 * @module
 */
import process from "node:process";
import { HOST_VARIABLES } from "./host_variables.ts";

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

/**
 * The host's environment, as much of it as the runtime lets the code read
 * without asking: all of it, or, where Deno grants only named variables
 * (`--allow-env=<names>`, as `denoPermissionFlags` does), each of
 * {@link HOST_VARIABLES} it grants, read one by one (Deno refuses to list
 * the environment then). `PATH` is the system default where it is not read.
 *
 * @example
 * ```ts
 * import { hostEnvironment } from "./checks.ts";
 *
 * console.log(hostEnvironment().PATH !== undefined); // true
 * ```
 */
export function hostEnvironment(): Record<string, string> {
  const environment: Record<string, string> = {};
  const whole = permissionState({ name: "env" });
  if (whole === null || whole === "granted") {
    try {
      for (const [key, value] of Object.entries(process.env)) {
        if (value !== undefined) environment[key] = value;
      }
      return environment;
    } catch {
      // Refused after all: read by name below.
    }
  }
  for (const name of HOST_VARIABLES) {
    // Asked first: reading a variable Deno does not grant would prompt on a terminal.
    const state = permissionState({ name: "env", variable: name });
    if (state !== null && state !== "granted") continue;
    try {
      const value = process.env[name];
      if (value !== undefined) environment[name] = value;
    } catch {
      // Not granted after all.
    }
  }
  environment.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  return environment;
}

/** A permission as Deno's `Deno.permissions.querySync` takes it (a subset). */
export type PermissionQuery =
  | { readonly name: "env"; readonly variable?: string }
  | { readonly name: "read" | "write"; readonly path: string }
  | { readonly name: "run"; readonly command?: string }
  | { readonly name: "sys"; readonly kind: "uid" };

/** A permission's state, as Deno's `Deno.permissions.querySync` tells it. */
export type PermissionState = "granted" | "prompt" | "denied";

/** How the runtime's adapter answers {@link permissionState}; `null` until one registers. */
let permissionQuery: ((query: PermissionQuery) => PermissionState) | null = null;

/**
 * Registers how this runtime tells a permission's state without asking.
 * Deno's adapter registers `Deno.permissions.querySync` when it is loaded
 * (the Deno defaults load it before a session starts); shared code never
 * names Deno itself, so the npm build holds no reference to it.
 */
export function registerPermissionQuery(
  query: (query: PermissionQuery) => PermissionState,
): void {
  permissionQuery = query;
}

/**
 * Whether the runtime grants a permission now, without asking
 * (`"granted"`, `"prompt"` or `"denied"`); `null` on a runtime with no
 * permissions (Node), where everything the process may do is allowed. Code
 * that would otherwise make Deno ask on a terminal checks this first.
 *
 * @example
 * ```ts
 * import { permissionState } from "./checks.ts";
 *
 * const state = permissionState({ name: "read", path: "/etc/hostname" });
 * console.log(state === null || state === "granted" ? "may read" : "would be refused");
 * ```
 */
export function permissionState(query: PermissionQuery): PermissionState | null {
  if (!isDeno || permissionQuery === null) return null;
  try {
    return permissionQuery(query);
  } catch {
    return "denied";
  }
}

/**
 * This process's user id; `null` where the runtime does not tell it (Deno
 * without `--allow-sys=uid`) or has none (Windows).
 */
export function processUid(): number | null {
  const state = permissionState({ name: "sys", kind: "uid" });
  if (state !== null && state !== "granted") return null; // asking would prompt on a terminal
  try {
    return process.getuid?.() ?? null;
  } catch {
    return null;
  }
}
