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
 *    (printing the install size and its largest parts, and comparing them
 *    with the README's install sentence: the build fails, after its other
 *    checks, when they differ), runs an ESM smoke script there on the oldest
 *    Node the manifest claims, on Node 22 and on the Node running the build,
 *    each with nothing on stderr; type-checks a TypeScript consumer and runs
 *    each framework adapter through its framework, once per line of the
 *    framework the peer range names (the package installed into the project
 *    on that line, with npm's default peer checks); bundles a script with
 *    esbuild (one file, and with the search worker as a second entry) and
 *    runs the bundles away from `node_modules`.
 *
 * Run: deno task build:npm [--no-checks]
 */
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { VERSION } from "../src/cli/version.ts";
import { checkReadmeInstallSize, formatInstallSize, measureInstall } from "./install_size.ts";
import { sdkBoundaryProblems } from "./sdk_boundary.ts";

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
  "tests/fixtures/flags_host.ts",
  "tests/fixtures/guard_agent.ts",
  "tests/fixtures/outside_host.ts",
  "tests/fixtures/overflow_watch_worker.ts",
  "tests/fixtures/race_agent.ts",
  "tests/fixtures/route_agent.ts",
  "tests/fixtures/terminal_agent.ts",
  "tests/fixtures/tty_agent.ts",
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
 * into: optional peer dependencies, never dependencies. Each framework has
 * the ranges (its lines) the consumer check installs one after the other,
 * npm taking the newest version in each, and runs the adapter with; the peer
 * range is their union. When the newest published version is outside the
 * last line (a new major), the build says so loudly: the range needs a new
 * line, tested with the adapter; it does not fail, as a release elsewhere
 * must not turn this repository's CI red. The
 * build's own Node test run, like the Deno tests, uses the one version
 * deno.json names.
 */
const PEER_RANGES: Record<string, readonly string[]> = {
  // Both majors of the AI SDK are maintained. The adapter gives plain objects with the `Tool`
  // fields both declare alike (description, inputSchema as a Standard JSON Schema, needsApproval,
  // execute returning an async iterable, toModelOutput) and imports nothing of the SDK at run
  // time. AI SDK 7 adds a host-wide `toolApproval` that skips needsApproval; AI SDK 6 has none.
  ai: ["^6.0.0", "^7.0.0"],
  // The Agents SDK is 0.x and ships a minor every few weeks, so a caret range (^0.20.0) would
  // refuse each one the day it is published, and a host on it would get ERESOLVE. The adapter
  // uses `tool()` and the run's approval interruptions, which its minors keep; the range
  // follows the SDK up to 1.0, and the consumer check runs the newest published version, so a
  // minor that changes what the adapter uses fails the build rather than a host's install.
  "@openai/agents": [">=0.20.0 <1"],
};
/** The peer dependency ranges of the manifest: each framework's tested ranges, as one. */
const PEERS = Object.fromEntries(
  Object.entries(PEER_RANGES).map(([name, ranges]) => [name, ranges.join(" || ")]),
);
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
/** Imports that only the tests use (the official MCP clients are the server's oracles): dev dependencies. */
const TEST_ONLY = new Set(["@modelcontextprotocol/sdk", "@modelcontextprotocol/client"]);
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
    ...Object.fromEntries(Object.keys(PEER_RANGES).map((n) => [n, importedRange(n)])),
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
// Nothing in the package may reference Deno at run time (comments and message text aside), and
// only the MCP entry and what it imports may load the MCP server SDK.
const built = new Map<string, string>();
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
  }
  built.set(relative(out, file), code);
}
const sdkProblems = sdkBoundaryProblems(
  built,
  entries.map((e) => e.js.slice(2)),
  entry("./mcp").js.slice(2),
);
if (sdkProblems.length > 0) throw new Error(sdkProblems.join("\n"));

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
  /** What the README's install sentence gets wrong, reported once every check has run. */
  let readmeProblem: string | null = null;
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
    // npm's default peer resolution, whatever the environment says: a peer range that refuses
    // a framework's version is an ERESOLVE here, as in a host's install.
    const install = [
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      "--legacy-peer-deps=false",
    ];
    // The package alone first: what a user's install weighs, and what the README says it weighs.
    await run("npm", [...install, join(out, filename)], project);
    const measured = await measureInstall(project, config.name);
    console.log(formatInstallSize(measured));
    const today = new Date().toISOString().slice(0, 10);
    readmeProblem = checkReadmeInstallSize(
      await Deno.readTextFile(join(repo, "README.md")),
      measured,
      today,
    );
    if (readmeProblem !== null) console.error(readmeProblem);
    await run("npm", [
      ...install,
      "typescript@~5.9.3",
      "@types/node@^20.19.0",
      ESBUILD,
      ...MODEL_SDKS.map((name) => `${name}@${importedRange(name)}`),
      // The frameworks the adapter entry points are checked against, as a host installs them:
      // the newest line of each first, the others after the checks below.
      ...Object.entries(PEER_RANGES).map(([name, ranges]) => `${name}@${ranges.at(-1)}`),
      // The AI SDK's declarations name the `json-schema` module's types without depending on them.
      "@types/json-schema@^7.0.15",
    ], project);
    // npm checks a peer range only when the package is installed into a project that has the
    // framework, not when the framework is installed beside the package: take the package out
    // and install it again, as a host on these versions does.
    const reinstall = async () => {
      await run("npm", ["uninstall", ...install.slice(1), config.name], project);
      await run("npm", [...install, join(out, filename)], project);
    };
    await reinstall();
    /** The version of `name` installed in the consumer project. */
    const installed = async (name: string): Promise<string> =>
      (JSON.parse(
        await Deno.readTextFile(join(project, "node_modules", name, "package.json")),
      ) as { version: string }).version;
    // What npm just installed for each framework's last line should be its newest published
    // version; a newer one (a new major) is outside the peer range until a line is added for it.
    for (const name of Object.keys(PEER_RANGES)) {
      const newest = (await run("npm", ["view", name, "version"], project)).trim();
      const tested = await installed(name);
      if (tested !== newest) {
        console.warn(
          `WARNING: ${name} ${newest} is the newest published version; the peer range ` +
            `${PEERS[name]} stops at ${tested}, so a host on ${newest} cannot install this ` +
            `package. Run the adapter with ${newest} and add its line to PEER_RANGES in ` +
            "scripts/build_npm.ts.",
        );
      } else console.log(`${name} ${tested}: the newest published version, in the peer range`);
    }
    for (const file of ["smoke.mjs", "consumer.ts", "bundle.mjs", "adapters.mjs"]) {
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
    /** Type-checks consumer.ts and runs each adapter with the frameworks installed now. */
    const frameworks = async () => {
      await run("node", ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], project);
      const versions = await Promise.all(
        Object.keys(PEER_RANGES).map(async (name) => `${name} ${await installed(name)}`),
      );
      console.log(`consumer.ts type-checks against the shipped .d.ts, with ${versions.join(", ")}`);
      console.log(await run("node", ["adapters.mjs"], project));
    };
    await frameworks();

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

    // Each older line of a framework, then the package installed over it.
    for (const [name, ranges] of Object.entries(PEER_RANGES)) {
      for (const range of ranges.slice(0, -1)) {
        await run("npm", [...install, `${name}@${range}`], project);
        await reinstall();
        await frameworks();
      }
    }
  } finally {
    await Deno.remove(project, { recursive: true });
    await Deno.remove(away, { recursive: true });
    await Deno.remove(join(out, filename));
  }
  if (readmeProblem !== null) throw new Error(readmeProblem);
  console.error(`checked ${basename(out)}/ in ${elapsed()}`);
}
