/**
 * Builds the npm package into `npm/` with what the npm registry offers (the
 * TypeScript compiler), and checks it:
 *
 * 1. stages the sources as they are, without the Deno adapter (its entry
 *    point, `src/backends/deno/` and the defaults that pick it), compiles them
 *    (ESM + .d.ts) with TypeScript 5.9; the manifest maps `#default-backends`
 *    to the Node defaults, as `deno.json` maps it to the Deno ones;
 * 2. runs the same test files under `node --test` against the build;
 * 3. packs it, installs the tarball into a fresh project outside this repo,
 *    runs an ESM smoke script there and type-checks a TypeScript consumer.
 *
 * Run: deno task build:npm [--no-checks]
 */
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("..", import.meta.url));
const out = join(repo, "npm");
const checks = !Deno.args.includes("--no-checks");

interface DenoConfig {
  name: string;
  version: string;
  imports: Record<string, string>;
}
const config = JSON.parse(await Deno.readTextFile(join(repo, "deno.json"))) as DenoConfig;

async function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<string> {
  console.error(`$ (${relative(repo, cwd) || "."}) ${cmd} ${args.join(" ")}`);
  const child = new Deno.Command(cmd, { args, cwd, env, stdout: "piped", stderr: "inherit" });
  const { code, stdout } = await child.output();
  const text = new TextDecoder().decode(stdout);
  if (code !== 0) {
    console.log(text);
    throw new Error(`${cmd} ${args.join(" ")} exited with ${code}`);
  }
  return text;
}

async function* walkFiles(directory: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(directory)) {
    const path = join(directory, entry.name);
    if (entry.isDirectory) yield* walkFiles(path);
    else if (entry.isFile) yield path;
  }
}

/** `npm:name@range` → [name, range]; `null` for other entries. */
function npmDependency(specifier: string): [string, string] | null {
  const match = /^npm:(@?[^@/]+(?:\/[^@/]+)?)@([^/]+)$/.exec(specifier);
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

// Framework adapters: their entry points, and the frameworks as optional peers.
/** The adapter entry points, each its own export of the package. */
const ADAPTER_ENTRIES = ["ai_sdk.ts", "openai_agents.ts"];
/** `name` → its version range, from the `npm:` import of `name` or of `name/`. */
function importedRange(name: string): string {
  const specifier = config.imports[name] ?? config.imports[`${name}/`];
  const match = /^npm:\/?(@?[^@/]+(?:\/[^@/]+)?)@([^/]+)\/?$/.exec(specifier ?? "");
  if (match === null || match[1] !== name) throw new Error(`deno.json imports no npm:${name}`);
  return match[2];
}
/** The frameworks the adapters plug into: optional peer dependencies, never dependencies. */
const PEERS = Object.fromEntries(["ai", "@openai/agents"].map((n) => [n, importedRange(n)]));
/** What only the LangChain recipe's test imports. */
const RECIPE_TEST_ONLY = Object.fromEntries(
  ["@langchain/core"].map((n) => [n, importedRange(n)]),
);

// 1. Stage.
await Deno.remove(out, { recursive: true }).catch(() => {});
await Deno.mkdir(out, { recursive: true });
const sources = ["mod.ts", "cli.ts", "mcp.ts", "node.ts", ...ADAPTER_ENTRIES];
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
      include: [
        "mod.ts",
        "cli.ts",
        "mcp.ts",
        "node.ts",
        ...ADAPTER_ENTRIES,
        "src/**/*.ts",
        "tests/**/*.ts",
      ],
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

const publishPackage = {
  name: config.name,
  version: config.version,
  description:
    "The tool runtime a coding agent hands to its model: read, write, edit, grep, glob, list, bash.",
  license: "MIT",
  type: "module",
  main: "./mod.js",
  types: "./mod.d.ts",
  exports: {
    ".": { types: "./mod.d.ts", default: "./mod.js" },
    "./mcp": { types: "./mcp.d.ts", default: "./mcp.js" },
    "./node": { types: "./node.d.ts", default: "./node.js" },
    "./ai-sdk": { types: "./ai_sdk.d.ts", default: "./ai_sdk.js" },
    "./openai-agents": { types: "./openai_agents.d.ts", default: "./openai_agents.js" },
  },
  imports,
  bin: { "openwork-tools": "./cli.js" },
  engines: { node: ">=20" },
  files: [
    "mod.js",
    "mod.d.ts",
    "cli.js",
    "cli.d.ts",
    "mcp.js",
    "mcp.d.ts",
    "node.js",
    "node.d.ts",
    ...ADAPTER_ENTRIES.flatMap((entry) => [
      entry.replace(/\.ts$/, ".js"),
      entry.replace(/\.ts$/, ".d.ts"),
    ]),
    "src/",
    "README.md",
    "LICENSE",
  ],
  dependencies,
  peerDependencies: PEERS,
  peerDependenciesMeta: Object.fromEntries(
    Object.keys(PEERS).map((name) => [name, { optional: true }]),
  ),
};
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

  // 4. Pack, install into a fresh project, use it from ESM and from TypeScript.
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
  try {
    await Deno.writeTextFile(
      join(project, "package.json"),
      JSON.stringify({ name: "consumer", private: true, type: "module" }),
    );
    await run("npm", [
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      join(out, filename),
      "typescript@~5.9.3",
      "@types/node@^20.19.0",
      ...MODEL_SDKS.map((name) => `${name}@${npmDependency(config.imports[name])![1]}`),
    ], project);
    await Deno.copyFile(join(repo, "scripts/consumer/smoke.mjs"), join(project, "smoke.mjs"));
    await Deno.copyFile(join(repo, "scripts/consumer/consumer.ts"), join(project, "consumer.ts"));
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
    console.log(await run("node", ["smoke.mjs"], project));
    await run("node", ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], project);
    console.log("consumer.ts type-checks against the shipped .d.ts");
  } finally {
    await Deno.remove(project, { recursive: true });
    await Deno.remove(join(out, filename));
  }
  console.error(`checked ${basename(out)}/`);
}
