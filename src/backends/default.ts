/**
 * The runtime's own backends: Deno's under Deno, Node's elsewhere. The npm
 * build replaces this file with `default_node.ts`, so the package never
 * references Deno.
 *
 * @module
 */
import type { AsyncFileSystem } from "./filesystem.ts";
import type { ProcessBackend } from "./process.ts";
import { createDenoFileSystem } from "./deno/filesystem.ts";
import { createDenoProcessBackend } from "./deno/process.ts";
import { createNodeFileSystem } from "./node/filesystem.ts";
import { createNodeProcessBackend } from "./node/process.ts";
import { hostEnvironment as nodeEnvironment } from "./default_node.ts";

/** Whether the code runs under Deno (and not a Node shim of it). */
function isDeno(): boolean {
  return typeof Deno !== "undefined" && typeof Deno.Command === "function";
}

/** The default file-system backend of this runtime. */
export function defaultFileSystem(): AsyncFileSystem {
  return isDeno() ? createDenoFileSystem() : createNodeFileSystem();
}

/** The default process backend of this runtime. */
export function defaultProcessBackend(): ProcessBackend {
  return isDeno() ? createDenoProcessBackend() : createNodeProcessBackend();
}

/** The host's environment, or a minimal one where the runtime refuses to read it. */
export function hostEnvironment(): Record<string, string> {
  try {
    return nodeEnvironment();
  } catch {
    return { PATH: "/usr/local/bin:/usr/bin:/bin" };
  }
}
