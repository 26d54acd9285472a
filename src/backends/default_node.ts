/**
 * The Node build's default backends (it replaces `default.ts` there).
 *
 * @module
 */
import process from "node:process";
import type { AsyncFileSystem } from "./filesystem.ts";
import type { ProcessBackend } from "./process.ts";
import { createNodeFileSystem } from "./node/filesystem.ts";
import { createNodeProcessBackend } from "./node/process.ts";

/** The default file-system backend: Node's. */
export function defaultFileSystem(): AsyncFileSystem {
  return createNodeFileSystem();
}

/** The default process backend: Node's. */
export function defaultProcessBackend(): ProcessBackend {
  return createNodeProcessBackend();
}

/** The host's environment. */
export function hostEnvironment(): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) environment[key] = value;
  }
  return environment;
}
