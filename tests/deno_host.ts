/**
 * The Deno entry point for tests that start a Deno host as a child process
 * under the documented flags. The specifier is computed so that the Node
 * build, which ships no Deno backend, neither compiles nor resolves it.
 */
import type { DiskFileSystemOptions } from "../node.ts";

/** What the tests use of `@openwork/tools/deno`. */
export interface DenoEntry {
  denoPermissionFlags(options: {
    workingDirectory: string;
    skillRoot?: string | null;
    descriptorLink?: string;
    environment?: Readonly<Record<string, string>>;
    sandbox?: boolean;
    processNamespace?: boolean;
    cacheDirectory?: string | null;
  }): string[];
  createDenoFileSystem(options?: DiskFileSystemOptions): unknown;
}

/** Imports the Deno entry point (under Deno only). */
export function denoEntry(): Promise<DenoEntry> {
  const specifier = "../deno.ts";
  return import(specifier) as Promise<DenoEntry>;
}
