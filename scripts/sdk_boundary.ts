/**
 * Where the built package may load the MCP server SDK: only the MCP entry
 * (`mcp.js`) and the files it imports, statically or dynamically. Every
 * other entry's static imports must not reach a file that loads it, so that
 * `import "@openwork/tools"` (and the CLI's other commands) never pay for
 * it; the `mcp` command loads the server with a dynamic import. The SDK's client, and the v1 SDK, are
 * the tests' oracles: no file of the package loads them.
 *
 * @module
 */
import { dirname, join, normalize } from "node:path";

/** The one SDK package the package depends on. */
export const SERVER_SDK = "@modelcontextprotocol/server";

/** The relative modules `code` imports statically (`import … from`, `export … from`, `import "…"`). */
export function staticImports(code: string): string[] {
  const found: string[] = [];
  const pattern =
    /(?:^|[;\s])(?:import|export)\s*(?:[^"'`;()]*?\sfrom\s*)?["'](\.{1,2}\/[^"']+)["']/g;
  for (const match of code.matchAll(pattern)) found.push(match[1]);
  return found;
}

/** The MCP SDK packages `code` names in an import, static or dynamic. */
export function sdkImports(code: string): string[] {
  const names = new Set<string>();
  for (const match of code.matchAll(/["'](@modelcontextprotocol\/[a-z0-9-]+)[^"']*["']/g)) {
    names.add(match[1]);
  }
  return [...names];
}

/** The relative modules `code` imports dynamically (`import("…")` with a literal). */
export function dynamicImports(code: string): string[] {
  return [...code.matchAll(/\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g)].map((m) => m[1]);
}

/**
 * The files reached from `entry` by relative imports (paths as in `files`):
 * static ones, and dynamic ones too when `dynamic` is set.
 */
export function reachable(
  entry: string,
  files: ReadonlyMap<string, string>,
  dynamic = false,
): Set<string> {
  const seen = new Set<string>();
  const stack = [normalize(entry)];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file) || !files.has(file)) continue;
    seen.add(file);
    const code = files.get(file)!;
    for (const target of [...staticImports(code), ...(dynamic ? dynamicImports(code) : [])]) {
      stack.push(normalize(join(dirname(file), target)));
    }
  }
  return seen;
}

/**
 * What breaks the rule, one line each (empty when nothing does): `files`
 * maps each built `.js` file (relative paths, comments removed) to its
 * code; `entries` are the package's entry files; `mcpEntry` the one that may
 * load the server SDK.
 */
export function sdkBoundaryProblems(
  files: ReadonlyMap<string, string>,
  entries: readonly string[],
  mcpEntry: string,
): string[] {
  const problems: string[] = [];
  const loaders = new Set<string>();
  for (const [file, code] of files) {
    const names = sdkImports(code);
    if (names.length === 0) continue;
    loaders.add(file);
    for (const name of names.filter((n) => n !== SERVER_SDK)) {
      problems.push(`${file} imports ${name}, which the package does not depend on`);
    }
  }
  const mcp = reachable(mcpEntry, files, true);
  for (const file of loaders) {
    if (!mcp.has(file)) {
      problems.push(`${file} imports the MCP SDK but ${mcpEntry} does not import it`);
    }
  }
  for (const entry of entries.filter((e) => normalize(e) !== normalize(mcpEntry))) {
    for (const file of reachable(entry, files)) {
      if (loaders.has(file)) problems.push(`${entry} loads the MCP SDK (through ${file})`);
    }
  }
  return problems;
}
