/**
 * Builds the npm package into `npm/` with what the npm registry offers (the
 * TypeScript compiler), and checks it:
 *
 * 1. stages the sources as they are, without the Deno adapter (its entry
 *    point, `src/backends/deno/` and the defaults that pick it), compiles them
 *    (ESM + .d.ts) with TypeScript 5.9; the manifest maps `#default-backends`
 *    to the Node defaults, as `deno.json` maps it to the Deno ones. The entry
 *    points (staged files, `exports`, `files`, the compiler's inputs) are
 *    `deno.json`'s `exports`, less the JSR-only ones;
 * 2. runs the same test files under `node --test` against the build;
 * 3. packs it, installs the tarball into a fresh project outside this repo
 *    (printing the install size and its largest parts), runs an ESM smoke
 *    script there on the oldest Node the manifest claims, on Node 22 and on
 *    the Node running the build, each with nothing on stderr; type-checks a
 *    TypeScript consumer; bundles a script with esbuild (one file, and with
 *    the search worker as a second entry) and runs the bundles away from
 *    `node_modules`.
 *
 * Run: deno task build:npm [--no-checks]
 */
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { VERSION } from "../src/cli/version.ts";

const repo = fileURLToPath(new URL("..", import.meta.url));
const out = join(repo, "npm");
const checks = !Deno.args.includes("--no-checks");
const began = Date.now();
/** Seconds since the build began, for the log. */
const elapsed = () => `${Math.round((Date.now() - began) / 1000)} s`;

interface DenoConfig {
  name: string;
  version: string;
  exports: Record<string, string>;
  imports: Record<string, string>;
}
const config = JSON.parse(await Deno.readTextFile(join(repo, "deno.json"))) as DenoConfig;
// The command prints VERSION: both builds must print the version their manifests carry.
if (VERSION !== config.version) {
  throw new Error(`src/cli/version.ts says ${VERSION}; deno.json says ${config.version}`);
}

/** The oldest Node the package runs on: the manifest's `engines` and a check below. */
const OLDEST_NODE = "20.0.0";
/** The newer Node line the check also runs on. */
const CURRENT_NODE = "22";
/** The bundler a host would use, for the bundling check. */
const ESBUILD = "esbuild@^0.27.0";
/** Where the project lives (no published repository URL yet: one consistent value). */
const REPOSITORY = "https://github.com/openwork/tools";

/** `deno.json` exports the npm package does not ship: the Deno adapter's. */
const JSR_ONLY_EXPORTS = new Set(["./deno"]);

/** One entry point of the package: its export key, its source, its compiled files. */
interface Entry {
  readonly key: string;
  readonly source: string;
  readonly js: string;
  readonly dts: string;
}
const entries: Entry[] = Object.entries(config.exports)
  .filter(([key]) => !JSR_ONLY_EXPORTS.has(key))
  .map(([key, path]) => {
    const source = path.replace(/^\.\//, "");
    if (!source.endsWith(".ts")) {
      throw new Error(`deno.json export ${key}: ${path} is not a .ts file`);
    }
    const base = source.slice(0, -".ts".length);
    return { key, source, js: `./${base}.js`, dts: `./${base}.d.ts` };
  });
function entry(key: string): Entry {
  const found = entries.find((e) => e.key === key);
  if (found === undefined) throw new Error(`deno.json exports no ${key}`);
  return found;
}
/**
 * Exports of the npm package alone: the Node search worker, for a host that
 * bundles it as a second entry point beside its bundle (see the README).
 */
const NPM_ONLY_EXPORTS: Record<string, string> = {
  "./search-worker": "./src/backends/node/search_worker.js",
};
/** Shipped modules that do something when imported: the command, the worker entry. */
const SIDE_EFFECTS = [entry("./cli").js, NPM_ONLY_EXPORTS["./search-worker"]];

async function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<string> {
  console.error(`[${elapsed()}] $ (${relative(repo, cwd) || "."}) ${cmd} ${args.join(" ")}`);
  const child = new Deno.Command(cmd, { args, cwd, env, stdout: "piped", stderr: "inherit" });
  const { code, stdout } = await child.output();
  const text = new TextDecoder().decode(stdout);
  if (code !== 0) {
    console.log(text);
    throw new Error(`${cmd} ${args.join(" ")} exited with ${code}`);
  }
  return text;
}

/** Runs a command that must succeed with nothing on stderr (no warning); returns its stdout. */
async function quiet(cmd: string, args: string[], cwd: string): Promise<string> {
  console.error(`[${elapsed()}] $ (${relative(repo, cwd) || "."}) ${cmd} ${args.join(" ")}`);
  const child = new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" });
  const { code, stdout, stderr } = await child.output();
  const [text, errors] = [new TextDecoder().decode(stdout), new TextDecoder().decode(stderr)];
  if (code !== 0 || errors !== "") {
    console.log(text);
    console.error(errors);
    throw new Error(
      `${cmd} ${args.join(" ")} ${code !== 0 ? `exited with ${code}` : "wrote to stderr"}`,
    );
  }
  return text.trimEnd();
}

/** The bytes of the files below `directory` (symbolic links not followed). */
async function bytesBelow(directory: string): Promise<number> {
  let bytes = 0;
  for await (const entry of Deno.readDir(directory)) {
    const path = join(directory, entry.name);
    if (entry.isDirectory) bytes += await bytesBelow(path);
    else if (entry.isFile) bytes += (await Deno.lstat(path)).size;
  }
  return bytes;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * What installing `name` weighs in `project`: the bytes of `node_modules`,
 * its packages, and each direct dependency of `name` with the packages only
 * it brings (from the lockfile), largest first.
 */
async function installSize(project: string, name: string): Promise<string> {
  const lock = JSON.parse(await Deno.readTextFile(join(project, "package-lock.json"))) as {
    packages: Record<string, { dependencies?: Record<string, string> }>;
  };
  const installed = Object.keys(lock.packages).filter((path) => path.startsWith("node_modules/"));
  const own = new Map<string, number>();
  for (const path of installed) {
    // A package's own files, without the packages nested in it.
    let bytes = 0;
    for await (const entry of Deno.readDir(join(project, path))) {
      if (entry.name === "node_modules") continue;
      const child = join(project, path, entry.name);
      bytes += entry.isDirectory ? await bytesBelow(child) : (await Deno.lstat(child)).size;
    }
    own.set(path, bytes);
  }
  // Node's lookup: a dependency of `from` is the nearest node_modules/<dep> above it.
  const resolve = (from: string, dependency: string): string | null => {
    for (let base = from;; base = base.slice(0, base.lastIndexOf("/node_modules/"))) {
      const path = `${base}/node_modules/${dependency}`;
      if (path.replace(/^\//, "") in lock.packages) return path.replace(/^\//, "");
      if (!base.includes("/node_modules/")) break;
    }
    const top = `node_modules/${dependency}`;
    return top in lock.packages ? top : null;
  };
  const reach = (start: string): Set<string> => {
    const seen = new Set<string>([start]);
    const queue = [start];
    while (queue.length > 0) {
      const path = queue.pop()!;
      for (const dependency of Object.keys(lock.packages[path].dependencies ?? {})) {
        const found = resolve(path, dependency);
        if (found !== null && !seen.has(found)) (seen.add(found), queue.push(found));
      }
    }
    return seen;
  };
  const root = `node_modules/${name}`;
  const direct = Object.keys(lock.packages[root].dependencies ?? {});
  const trees = new Map(direct.map((d) => [d, reach(resolve(root, d)!)]));
  const lines = [];
  for (const [dependency, tree] of trees) {
    const shared = new Set(
      [...trees].filter(([other]) => other !== dependency).flatMap(([, t]) => [...t]),
    );
    const only = [...tree].filter((path) => !shared.has(path));
    const bytes = only.reduce((sum, path) => sum + own.get(path)!, 0);
    const brings = only.length === 1 ? "" : ` and the ${only.length - 1} packages only it brings`;
    lines.push({ bytes, text: `${dependency}${brings}` });
  }
  lines.push({ bytes: own.get(root)!, text: name });
  lines.sort((a, b) => b.bytes - a.bytes);
  const total = await bytesBelow(join(project, "node_modules"));
  return [
    `install size: ${mb(total)} in node_modules, ${installed.length} packages`,
    ...lines.map((line) => `  ${mb(line.bytes).padStart(8)}  ${line.text}`),
  ].join("\n");
}

async function* walkFiles(directory: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(directory)) {
    const path = join(directory, entry.name);
    if (entry.isDirectory) yield* walkFiles(path);
    else if (entry.isFile) yield path;
  }
}

/** `npm:name@range` (or a folder mapping, `npm:/name@range/`) → [name, range]; `null` for other entries. */
function npmDependency(specifier: string): [string, string] | null {
  const match = /^npm:\/?(@?[^@/]+(?:\/[^@/]+)?)@([^/]+)\/?$/.exec(specifier);
  return match === null ? null : [match[1], match[2]];
}

/** Sources of the Deno adapter and what only Deno runs: not in the npm package. */
const DENO_ONLY = [
  "src/backends/deno/",
  "src/backends/defaults/deno.ts",
  "tests/fixtures/guard_agent.ts",
];
/** What `#default-backends` is in the npm package (deno.json maps it to the Deno defaults). */
const imports = { "#default-backends": "./src/backends/defaults/node.js" };

/** `name` → its version range, from the `npm:` import of `name` or of `name/`. */
function importedRange(name: string): string {
  const dependency = npmDependency(config.imports[name] ?? config.imports[`${name}/`] ?? "");
  if (dependency?.[0] !== name) throw new Error(`deno.json imports no npm:${name}`);
  return dependency[1];
}
/**
 * The frameworks the adapters (entry points from deno.json's exports) plug
 * into: optional peer dependencies, never dependencies.
 */
const PEERS = Object.fromEntries(["ai", "@openai/agents"].map((n) => [n, importedRange(n)]));
/** What only the LangChain recipe's test imports. */
const RECIPE_TEST_ONLY = Object.fromEntries(
  ["@langchain/core"].map((n) => [n, importedRange(n)]),
);

// 1. Stage.
await Deno.remove(out, { recursive: true }).catch(() => {});
await Deno.mkdir(out, { recursive: true });
const sources = entries.map((e) => e.source);
for (const folder of ["src", "tests"]) {
  for await (const file of walkFiles(join(repo, folder))) sources.push(relative(repo, file));
}
for (const file of sources) {
  if (!file.endsWith(".ts")) continue;
  // The Deno adapter is not shipped; neither is the agent the Deno guard test runs.
  if (DENO_ONLY.some((prefix) => file.startsWith(prefix))) continue;
  await Deno.mkdir(join(out, dirname(file)), { recursive: true });
  await Deno.copyFile(join(repo, file), join(out, file));
}

/** The model SDKs the consumer project type-checks the converters against. */
const MODEL_SDKS = ["openai", "@anthropic-ai/sdk", "@google/genai"];
/** Imports that only the build and the scripts use: not dependencies of the package. */
const BUILD_ONLY = new Set([
  "typescript",
  "wabt",
  ...MODEL_SDKS,
  ...Object.keys(PEERS),
  ...Object.keys(RECIPE_TEST_ONLY),
]);
/** Imports that only the tests use (the official MCP client is the server's oracle): dev dependencies. */
const TEST_ONLY = new Set(["@modelcontextprotocol/sdk"]);
const dependencies: Record<string, string> = {};
const testDependencies: Record<string, string> = {};
for (const specifier of Object.values(config.imports)) {
  const dependency = npmDependency(specifier);
  if (dependency === null || BUILD_ONLY.has(dependency[0])) continue;
  if (TEST_ONLY.has(dependency[0])) testDependencies[dependency[0]] = dependency[1];
  else dependencies[dependency[0]] = dependency[1];
}
const buildPackage = {
  name: config.name,
  version: config.version,
  private: true,
  type: "module",
  imports,
  dependencies,
  devDependencies: {
    ...testDependencies,
    "typescript": "~5.9.3",
    "@types/node": "^20.19.0",
    "@types/picomatch": "^4.0.0",
    ...PEERS,
    ...RECIPE_TEST_ONLY,
  },
};
await Deno.writeTextFile(join(out, "package.json"), JSON.stringify(buildPackage, null, 2));
await Deno.writeTextFile(
  join(out, "tsconfig.json"),
  JSON.stringify(
    {
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2023"],
        types: ["node"],
        declaration: true,
        isolatedDeclarations: true,
        rewriteRelativeImportExtensions: true,
        strict: true,
        skipLibCheck: true,
        esModuleInterop: true,
        resolveJsonModule: true,
        rootDir: ".",
        outDir: ".",
      },
      include: [...entries.map((e) => e.source), "src/**/*.ts", "tests/**/*.ts"],
      exclude: ["node_modules"],
    },
    null,
    2,
  ),
);

// 2. Compile.
await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], out);
await run("node", ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], out);
for await (const file of walkFiles(out)) {
  if (file.includes("/node_modules/")) continue;
  if (file.endsWith(".ts") && !file.endsWith(".d.ts")) await Deno.remove(file);
}
await Deno.remove(join(out, "tsconfig.json"));
for (const file of ["README.md", "LICENSE"]) await Deno.copyFile(join(repo, file), join(out, file));

/** The manifest's `exports`: a file, or its types and code. */
const packageExports: Record<string, string | { types: string; default: string }> = {
  ...Object.fromEntries(entries.map((e) => [e.key, { types: e.dts, default: e.js }])),
  ...NPM_ONLY_EXPORTS,
  "./package.json": "./package.json",
};
const publishPackage = {
  name: config.name,
  version: config.version,
  description:
    "The tool runtime a coding agent hands to its model: read, write, edit, grep, glob, list, bash.",
  keywords: [
    "agent",
    "coding-agent",
    "llm",
    "tools",
    "tool-calling",
    "function-calling",
    "mcp",
    "model-context-protocol",
    "sandbox",
    "bash",
    "grep",
  ],
  homepage: `${REPOSITORY}#readme`,
  bugs: { url: `${REPOSITORY}/issues` },
  repository: { type: "git", url: `git+${REPOSITORY}.git` },
  license: "MIT",
  type: "module",
  main: entry(".").js,
  types: entry(".").dts,
  exports: packageExports,
  imports,
  bin: { "openwork-tools": entry("./cli").js },
  sideEffects: SIDE_EFFECTS,
  engines: { node: `>=${OLDEST_NODE}` },
  os: ["linux", "darwin"],
  files: [
    ...entries.flatMap((e) => [e.js, e.dts]).map((path) => path.slice(2)),
    "src/",
    "README.md",
    "LICENSE",
  ],
  dependencies,
  ...(Object.keys(PEERS).length === 0 ? {} : {
    peerDependencies: PEERS,
    peerDependenciesMeta: Object.fromEntries(
      Object.keys(PEERS).map((name) => [name, { optional: true }]),
    ),
  }),
};
// Every file the manifest names is built.
const named = [
  ...Object.values(packageExports).flatMap((target) =>
    typeof target === "string" ? [target] : [target.types, target.default]
  ),
  ...SIDE_EFFECTS,
].filter((path) => path !== "./package.json");
for (const path of named) {
  if (!(await Deno.stat(join(out, path)).then((s) => s.isFile, () => false))) {
    throw new Error(`the manifest names ${path}, which the build did not make`);
  }
}
// Nothing in the package may reference Deno at run time, nor import the MCP SDK (comments and
// message text aside).
for await (const file of walkFiles(out)) {
  if (file.includes("/node_modules/") || file.includes("/tests/") || !file.endsWith(".js")) {
    continue;
  }
  const code = (await Deno.readTextFile(file)).replace(/\/\*[\s\S]*?\*\//g, "").replace(
    /\/\/.*$/gm,
    "",
  );
  if (/\bDeno\s*[.[]|globalThis\.Deno/.test(code)) {
    throw new Error(`${relative(out, file)} references Deno at run time`);
  } // The MCP SDK is the tests' oracle, not a dependency of the package.
  if (/["']@modelcontextprotocol\//.test(code)) {
    throw new Error(`${relative(out, file)} imports the MCP SDK`);
  }
}

// The build keeps its dev dependencies installed for the Node test run; the manifest does not list them.
await Deno.writeTextFile(join(out, "package.json"), JSON.stringify(publishPackage, null, 2) + "\n");
console.error(`built ${relative(repo, out)}/ (${config.name}@${config.version})`);

if (checks) {
  // 3. The same tests, under Node, against the build.
  const tests: string[] = [];
  for await (const file of walkFiles(join(out, "tests"))) {
    if (file.endsWith("_test.js")) tests.push(relative(out, file));
  }
  tests.sort();
  const report = await run("node", ["--test", "--test-reporter=spec", ...tests], out);
  const count = (name: string) =>
    Number(new RegExp(`^ℹ ${name} (\\d+)$`, "m").exec(report)?.[1] ?? 0);
  console.log(
    `node: ${count("pass")} passed, ${count("fail")} failed, ${count("skipped")} skipped`,
  );

  // 4. Pack, install into a fresh project, use it from ESM and from TypeScript, bundle it.
  const packed = (await run("npm", ["pack", "--json", "--loglevel=error"], out)).trim();
  const [{ filename, size, unpackedSize, entryCount }] = JSON.parse(packed) as {
    filename: string;
    size: number;
    unpackedSize: number;
    entryCount: number;
  }[];
  console.log(
    `packed ${filename}: ${entryCount} files, ${size} bytes packed, ${unpackedSize} bytes unpacked`,
  );
  const project = await Deno.makeTempDir({ prefix: "owt-consumer-" });
  const away = await Deno.makeTempDir({ prefix: "owt-bundles-" });
  try {
    await Deno.writeTextFile(
      join(project, "package.json"),
      JSON.stringify({ name: "consumer", private: true, type: "module" }),
    );
    const install = ["install", "--no-audit", "--no-fund", "--loglevel=error"];
    // The package alone first: what a user's install weighs.
    await run("npm", [...install, join(out, filename)], project);
    console.log(await installSize(project, config.name));
    await run("npm", [
      ...install,
      "typescript@~5.9.3",
      "@types/node@^20.19.0",
      ESBUILD,
      ...MODEL_SDKS.map((name) => `${name}@${importedRange(name)}`),
      // The frameworks the adapter entry points are checked against, as a host installs them.
      ...Object.entries(PEERS).map(([name, range]) => `${name}@${range}`),
      // The AI SDK's declarations name the `json-schema` module's types without depending on them.
      "@types/json-schema@^7.0.15",
    ], project);
    for (const file of ["smoke.mjs", "consumer.ts", "bundle.mjs"]) {
      await Deno.copyFile(join(repo, "scripts/consumer", file), join(project, file));
    }
    await Deno.writeTextFile(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          strict: true,
          noEmit: true,
          types: ["node"],
        },
        files: ["consumer.ts"],
      }),
    );
    // The smoke script on the Node running the build, the oldest Node claimed, and Node 22.
    console.log(await quiet("node", ["smoke.mjs"], project));
    for (const version of [OLDEST_NODE, CURRENT_NODE]) {
      const node = ["exec", "--yes", `--package=node@${version}`, "--", "node"];
      // Fetching that Node may print npm's notes: the run that counts is the next one.
      const actual = (await run("npm", [...node, "--version"], project)).trim();
      console.log(`node ${actual}:`);
      console.log(await quiet("npm", [...node, "smoke.mjs"], project));
    }
    await run("node", ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], project);
    console.log("consumer.ts type-checks against the shipped .d.ts");

    // Bundled with esbuild, run from a folder with no node_modules: one file (the searches
    // stay on the calling thread), then with the search worker as a second entry beside it.
    const esbuild = ["exec", "--no", "--", "esbuild", "--bundle", "--platform=node"];
    const options = ["--format=esm", "--log-level=warning"];
    await quiet(
      "npm",
      [...esbuild, ...options, "bundle.mjs", `--outfile=${away}/one/bundle.mjs`],
      project,
    );
    await quiet("npm", [
      ...esbuild,
      ...options,
      "bundle=bundle.mjs",
      `search_worker=${config.name}/search-worker`,
      `--outdir=${away}/two`,
      "--out-extension:.js=.mjs",
    ], project);
    console.log(await quiet("node", [join(away, "one/bundle.mjs"), "thread"], away));
    console.log(await quiet("node", [join(away, "two/bundle.mjs"), "workers"], away));
  } finally {
    await Deno.remove(project, { recursive: true });
    await Deno.remove(away, { recursive: true });
    await Deno.remove(join(out, filename));
  }
  console.error(`checked ${basename(out)}/ in ${elapsed()}`);
}
