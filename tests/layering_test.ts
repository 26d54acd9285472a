/**
 * The layering of `src/`: every import looks down the one order written
 * here, no two folders import each other (directly or around a cycle), no
 * runtime adapter imports another, and only the session's wiring reaches the
 * runtimes' defaults. Import-map aliases (`#default-backends`) count as
 * imports of what the package's manifest maps them to.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The layers of `src/`, bottom first: a file may import its own layer and the
 * ones below it, never one above. A layer is a folder or a file of `src/`
 * (named without its extension: the npm build runs the same test on `.js`).
 */
const LAYERS: readonly (readonly string[])[] = [
  ["errors", "runtime"],
  ["path"],
  ["search"],
  ["backends"],
  ["index"],
  ["contract"],
  ["permissions"],
  ["artifacts"],
  ["tools"],
  ["session", "finalize"],
  ["adapters"],
  ["mcp"],
  ["cli"],
];

/** Runtime adapters: folders that must never import one another. */
const ADAPTERS: readonly string[] = ["backends/deno", "backends/node", "backends/memory"];

/** The folder that picks each runtime's adapters: what `#default-backends` maps to. */
const DEFAULTS = "backends/defaults";

/**
 * The session's wiring: the files of `src/` (without their extension) that
 * may import an import-map alias, and so the runtime defaults. Everything
 * else is shared code, which gets what is runtime-specific from the session
 * (a backend, a watcher) and never reaches for it.
 */
const WIRING: ReadonlySet<string> = new Set(["session"]);

const here = dirname(fileURLToPath(import.meta.url));
const src = resolve(here, "../src");

/**
 * The package's import map: `deno.json`'s `imports` for the sources, the
 * npm package's `package.json` `imports` for its build; only the aliases (`#…`).
 */
async function aliases(): Promise<Map<string, string>> {
  for (const name of ["deno.json", "package.json"]) {
    let text: string;
    try {
      text = await readFile(resolve(here, "..", name), "utf8");
    } catch {
      continue;
    }
    const map = (JSON.parse(text) as { imports?: Record<string, string> }).imports ?? {};
    return new Map(Object.entries(map).filter(([alias]) => alias.startsWith("#")));
  }
  throw new Error("neither deno.json nor package.json is beside the tests");
}

async function sourceFiles(directory: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) found.push(...await sourceFiles(path));
    else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) found.push(path);
  }
  return found;
}

/**
 * Every relative import of `src/` and every import of an alias, type-only and
 * dynamic ones included, as [from, to] paths below `src/` (an alias as what
 * the manifest maps it to), with the alias when there is one.
 */
async function importsWithAliases(): Promise<[string, string, string | null][]> {
  const map = await aliases();
  const edges: [string, string, string | null][] = [];
  for (const file of await sourceFiles(src)) {
    // Comments (JSDoc examples among them) are not imports.
    const text = (await readFile(file, "utf8")).replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/^\s*\/\/.*$/gm, "");
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["']([.#][^"']+)["']/g)) {
      const specifier = match[1];
      const from = relative(src, file);
      if (specifier.startsWith(".")) {
        edges.push([from, relative(src, resolve(dirname(file), specifier)), null]);
        continue;
      }
      const target = map.get(specifier);
      assert.ok(
        target !== undefined,
        `${from} imports ${specifier}, which the manifest does not map`,
      );
      edges.push([from, relative(src, resolve(here, "..", target)), specifier]);
    }
  }
  return edges;
}

/** Every import of `src/` as [from, to] paths below `src/`; see {@link importsWithAliases}. */
async function imports(): Promise<[string, string][]> {
  return (await importsWithAliases()).map(([from, to]) => [from, to]);
}

function layerOf(path: string): number {
  const top = path.split("/")[0].replace(/\.(ts|js)$/, "");
  const index = LAYERS.findIndex((layer) => layer.includes(top));
  assert.notEqual(index, -1, `${path} is in no layer: add its folder to LAYERS`);
  return index;
}

/** The folder of a file below `src/`; a file of `src/` itself is a layer of its own. */
const folderOf = (path: string) => (path.includes("/") ? dirname(path) : path);

test("契约与分层: every import in src/ looks down the layer order", async () => {
  const edges = await imports();
  assert.ok(edges.length > 100, `${edges.length} imports read`);
  const upward = edges.filter(([from, to]) => {
    assert.ok(!to.startsWith(".."), `${from} imports outside src: ${to}`);
    return layerOf(to) > layerOf(from);
  });
  assert.deepEqual(upward.map(([from, to]) => `${from} → ${to}`), []);
});

test("契约与分层: src/ imports no host code and only the packages it declares (the MCP server SDK in mcp/ alone)", async () => {
  const packages =
    /^(node:|#default-backends$|valibot$|@valibot\/to-json-schema$|diff$|picomatch$|ignore$|re2js$)/;
  // The adapters alone may import the frameworks they adapt to (optional peers).
  const frameworks = /^(ai|@openai\/agents)$/;
  // The MCP server alone may import the official server package (revision 2026-07-28); its
  // client, and the v1 SDK, are the tests' oracles.
  const mcpServer = /^@modelcontextprotocol\/server(\/stdio)?$/;
  let checked = 0;
  for (const file of await sourceFiles(src)) {
    const where = relative(src, file);
    const text = (await readFile(file, "utf8")).replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/^\s*\/\/.*$/gm, "");
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"'.][^"']*)["']/g)) {
      if (where.startsWith("adapters/") && frameworks.test(match[1])) continue;
      if (where.startsWith("mcp/") && mcpServer.test(match[1])) continue;
      assert.match(match[1], packages, `${where} imports ${match[1]}`);
      checked++;
    }
  }
  assert.ok(checked > 20, `only ${checked} package imports were checked`);
});

test("契约与分层: only the path layer, the backends and the search index that decorates them unwrap checked paths", async () => {
  // The index hands real paths to its watcher and to the backend's workers, as a backend does.
  const unwrapping = (await imports()).filter(([from, to]) =>
    /^path\/checked_path\.(ts|js)$/.test(to) && !/^(path|backends|index)\//.test(from)
  );
  assert.deepEqual(unwrapping.map(([from, to]) => `${from} → ${to}`), []);
});

test("契约与分层: no runtime adapter imports another", async () => {
  const adapterOf = (path: string) => ADAPTERS.find((a) => path.startsWith(a + "/"));
  const crossing = (await imports()).filter(([from, to]) => {
    const [a, b] = [adapterOf(from), adapterOf(to)];
    return a !== undefined && b !== undefined && a !== b;
  });
  assert.deepEqual(crossing.map(([from, to]) => `${from} → ${to}`), []);
});

test("契约与分层: only the session's wiring imports an alias, and no shared module reaches a runtime adapter", async () => {
  const edges = await importsWithAliases();
  assert.ok(edges.some(([, , alias]) => alias !== null), "no alias import was read");
  const inside = (path: string, folder: string) => path.startsWith(folder + "/");
  const wiring = (path: string) => WIRING.has(path.replace(/\.(ts|js)$/, ""));
  const reaching = edges.filter(([from, to, alias]) => {
    if (alias !== null) return !wiring(from);
    // The defaults are the session's to pick; an adapter is its own or the defaults'.
    if (inside(to, DEFAULTS)) return !wiring(from) && !inside(from, DEFAULTS);
    const adapter = ADAPTERS.find((a) => inside(to, a));
    return adapter !== undefined && !inside(from, adapter) && !inside(from, DEFAULTS);
  });
  assert.deepEqual(
    reaching.map(([from, to, alias]) => `${from} → ${alias === null ? to : `${alias} (${to})`}`),
    [],
  );
});

/** The cycles of a directed graph given as edges, each as its nodes in order, first node repeated last. */
function cyclesOf(edges: readonly [string, string][]): string[] {
  const graph = new Map<string, Set<string>>();
  for (const [a, b] of edges) {
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  // Depth-first search; a back edge closes a cycle, reported as its nodes in order.
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    path.push(node);
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      if (state.get(next) === "open") {
        cycles.push([...path.slice(path.indexOf(next)), next].join(" → "));
      } else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

test("契约与分层: no folder-level import cycle in src/", async () => {
  const edges = (await imports()).map(([from, to]): [string, string] => [
    folderOf(from),
    folderOf(to),
  ]).filter(([a, b]) => a !== b);
  assert.deepEqual(cyclesOf(edges), []);
});

test("契约与分层: no module of src/ imports itself around a cycle, type-only imports included", async () => {
  const edges = (await imports()).map(([from, to]): [string, string] => [
    from.replace(/\.(ts|js)$/, ""),
    to.replace(/\.(ts|js)$/, ""),
  ]);
  assert.deepEqual(cyclesOf(edges), []);
});
