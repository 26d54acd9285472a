/**
 * Runs the official MCP conformance suite, pinned, against the package's MCP
 * server over Streamable HTTP, for the 2025-11-25 and the 2026-07-28
 * requirement sets, and compares the checks with the checked-in baseline
 * (`scripts/conformance_baseline.json`). Exits with 1 on any difference: a
 * check that starts failing, or a check the baseline lists as failing that
 * passes (then the baseline is to be updated).
 *
 * The server is started as the README starts it, `cli.ts mcp --http` with the
 * `deno task cli` flags, on a temporary empty root, with a bearer token in
 * `OPENWORK_MCP_TOKEN`. The suite has no option for request headers, so it runs
 * under Node with a module preloaded (`--import`) that adds
 * `Authorization: Bearer <token>` to every request through Node's global HTTP
 * dispatcher, which both its `fetch` and its `undici` requests go through, and
 * through `node:http`'s `request`, which its raw requests use; the requests
 * are otherwise the suite's own, `Host` and `Origin` included.
 *
 * The suite needs Node 22 or later: the `node` on the PATH when it is one, else
 * Node 22 from npm through `npx`. The suite is installed with npm into a cache
 * directory (`$XDG_CACHE_HOME/openwork-tools`, else `~/.cache/openwork-tools`)
 * the first time.
 *
 * ```sh
 * deno task conformance            # run, print the counts, compare with the baseline
 * deno task conformance --update   # rewrite the baseline from this run (write new reasons by hand)
 * ```
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import {
  type Baseline,
  BaselineError,
  compareWithBaseline,
  formatDifferences,
  parseBaseline,
  REASON_TO_WRITE,
  requiredServerScenarios,
  type ScenarioResult,
  type SuiteCheck,
  tallyChecks,
  unwrittenReasons,
  updatedBaseline,
  verdicts,
} from "./conformance_baseline.ts";

/** The suite, pinned: the first version with the 2026-07-28 requirement set. */
const SUITE_PACKAGE = "@modelcontextprotocol/conformance";
const SUITE_VERSION = "0.2.0-alpha.12";
const SUITE = `${SUITE_PACKAGE}@${SUITE_VERSION}`;
/** The requirement sets run, each at its own wire (stateful, then stateless). */
const REVISIONS = ["2025-11-25", "2026-07-28"] as const;
/** The Node the suite needs at least, and the one fetched when the PATH's is older. */
const NODE_MAJOR = 22;

const REPO = new URL("..", import.meta.url).pathname;
const BASELINE_PATH = join(REPO, "scripts", "conformance_baseline.json");
const README_PATH = join(REPO, "README.md");
/** The flags of `deno task cli`, so the server runs as the README runs it. */
const CLI_FLAGS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run=bash",
  "--allow-sys=uid",
  "--allow-net",
  "--no-prompt",
];
/** A bound on one run of the suite: a run takes seconds; a hang must not hold CI. */
const SUITE_TIMEOUT_MS = 10 * 60 * 1000;
/** A bound on the server's start: the first start may compile and fetch the dependencies. */
const SERVER_START_TIMEOUT_MS = 5 * 60 * 1000;

/**
 * The module Node preloads: every request of the process carries the token.
 * It sits in the suite's install directory, so `undici` is the suite's own.
 */
const AUTH_PRELOAD = `// Adds the MCP server's bearer token to every HTTP request of this process.
import http from "node:http";
import { syncBuiltinESMExports } from "node:module";
import { Agent, setGlobalDispatcher } from "undici";
const auth = "Bearer " + process.env.OPENWORK_MCP_TOKEN;
function withAuth(headers) {
  if (headers == null) return { authorization: auth };
  if (Array.isArray(headers)) {
    return headers.length > 0 && Array.isArray(headers[0])
      ? [...headers, ["authorization", auth]]
      : [...headers, "authorization", auth];
  }
  if (typeof headers[Symbol.iterator] === "function") return [...headers, ["authorization", auth]];
  return { ...headers, authorization: auth };
}
setGlobalDispatcher(new Agent().compose((dispatch) => (options, handler) =>
  dispatch({ ...options, headers: withAuth(options.headers) }, handler)));
// Some scenarios send raw requests with node:http, which does not go through the dispatcher.
const request = http.request;
http.request = function (...args) {
  const at = typeof args[0] === "object" && args[0] !== null && !(args[0] instanceof URL)
    ? 0
    : typeof args[1] === "object" && args[1] !== null ? 1 : -1;
  if (at === -1) args.splice(1, 0, { headers: { authorization: auth } });
  else args[at] = { ...args[at], headers: withAuth(args[at].headers) };
  return request.apply(this, args);
};
syncBuiltinESMExports();
`;

/** Runs `command` with `args`, its output inherited; throws unless it exits with 0. */
async function run(command: string, args: string[], cwd?: string): Promise<void> {
  const { code } = await new Deno.Command(command, {
    args,
    cwd,
    stdout: "inherit",
    stderr: "inherit",
  })
    .output();
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${code}`);
}

/**
 * The suite's install directory, installed there with `npm ci` the first
 * time: `scripts/conformance_suite/` pins the suite and its lock file every
 * dependency, so every machine runs the same code. The directory is named
 * after the lock file's hash; a changed lock installs anew.
 */
async function installSuite(): Promise<string> {
  const pinned = new URL("./conformance_suite/", import.meta.url);
  const lock = await Deno.readTextFile(new URL("package-lock.json", pinned));
  const manifest = await Deno.readTextFile(new URL("package.json", pinned));
  const hash = createHash("sha256").update(manifest).update(lock).digest("hex").slice(0, 16);
  const cache = Deno.env.get("XDG_CACHE_HOME") || join(Deno.env.get("HOME") ?? "/tmp", ".cache");
  const directory = join(cache, "openwork-tools", `conformance-${hash}`);
  const done = join(directory, ".installed");
  const installed = await Deno.stat(done).then(() => true, () => false);
  if (!installed) {
    console.error(`conformance: installing ${SUITE} (pinned by its lock file) into ${directory}`);
    await Deno.remove(directory, { recursive: true }).catch(() => {});
    await Deno.mkdir(directory, { recursive: true });
    await Deno.writeTextFile(join(directory, "package.json"), manifest);
    await Deno.writeTextFile(join(directory, "package-lock.json"), lock);
    await run("npm", [
      "ci",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      "--engine-strict=false",
    ], directory);
    const version = (JSON.parse(
      await Deno.readTextFile(join(directory, "node_modules", SUITE_PACKAGE, "package.json")),
    ) as { version?: string }).version;
    if (version !== SUITE_VERSION) {
      throw new Error(`the lock file installs ${SUITE_PACKAGE} ${version}, not ${SUITE_VERSION}`);
    }
    await Deno.writeTextFile(done, "");
  }
  await Deno.writeTextFile(join(directory, "auth_preload.mjs"), AUTH_PRELOAD);
  return directory;
}

/** The command that runs Node 22 or later: the PATH's `node` when it is one, else via npx. */
async function nodeCommand(): Promise<string[]> {
  const found = await new Deno.Command("node", {
    args: ["--version"],
    stdout: "piped",
    stderr: "null",
  })
    .output().catch(() => null);
  const major = found?.success
    ? Number(/^v(\d+)/.exec(new TextDecoder().decode(found.stdout))?.[1])
    : 0;
  return major >= NODE_MAJOR ? ["node"] : ["npx", "-y", `node@${NODE_MAJOR}`];
}

/** A running server: its MCP URL and how to stop it. */
interface Server {
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts `cli.ts mcp --http 127.0.0.1:0` on `root` and waits for the address it announces. */
async function startServer(root: string, token: string): Promise<Server> {
  const child = new Deno.Command("deno", {
    args: [
      "run",
      ...CLI_FLAGS,
      join(REPO, "cli.ts"),
      "mcp",
      "--http",
      "127.0.0.1:0",
      "--root",
      root,
    ],
    env: { OPENWORK_MCP_TOKEN: token },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  let url: string | undefined;
  const timer = setTimeout(() => child.kill("SIGKILL"), SERVER_START_TIMEOUT_MS);
  try {
    while (url === undefined) {
      const { value, done } = await lines.read();
      if (done) break;
      said += value;
      url = /MCP over HTTP at (http:\/\/\S+)/.exec(said)?.[1];
    }
  } finally {
    clearTimeout(timer);
  }
  if (url === undefined) {
    await child.status;
    throw new Error(`the MCP server did not start:\n${said}`);
  }
  // Its later output is read (and dropped) so that a full pipe never blocks it.
  const drained = (async () => {
    while (!(await lines.read()).done);
  })();
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await drained;
    },
  };
}

/** One run of the suite for a requirement set: its scenarios' checks. */
async function runSuite(
  node: string[],
  suiteDirectory: string,
  url: string,
  token: string,
  revision: string,
  output: string,
): Promise<ScenarioResult[]> {
  const entry = join(suiteDirectory, "node_modules", SUITE_PACKAGE, "dist", "index.js");
  const preload = join(suiteDirectory, "auth_preload.mjs");
  const [command, ...prefix] = node;
  const result = await new Deno.Command(command, {
    args: [
      ...prefix,
      "--import",
      preload,
      entry,
      "server",
      "--url",
      url,
      "--requirements",
      revision,
      "-o",
      output,
    ],
    cwd: suiteDirectory,
    env: { OPENWORK_MCP_TOKEN: token, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(SUITE_TIMEOUT_MS),
  }).output();
  const log = new TextDecoder().decode(result.stdout) + new TextDecoder().decode(result.stderr);
  await Deno.writeTextFile(join(output, "suite.log"), log);
  // The summary names every scenario run, one whose run threw among them.
  const scenarios = [...log.matchAll(/^[✓✗] ([^\s:]+): \d+ passed, \d+ failed$/gmu)].map((m) =>
    m[1]
  );
  if (scenarios.length === 0 || (result.code !== 0 && result.code !== 1)) {
    throw new Error(`the suite did not run (exit ${result.code}):\n${log.slice(-4000)}`);
  }
  const directories = new Map<string, string>();
  for await (const entry of Deno.readDir(output)) {
    const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry.name)?.[1];
    if (entry.isDirectory && scenario !== undefined) directories.set(scenario, entry.name);
  }
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    const directory = directories.get(scenario);
    const text = directory === undefined
      ? undefined
      : await Deno.readTextFile(join(output, directory, "checks.json")).catch(() => undefined);
    // A scenario that threw leaves no checks; the suite counts it as one failed check.
    const checks: SuiteCheck[] = text === undefined
      ? [{ id: scenario, status: "FAILURE", errorMessage: "the scenario did not run to its end" }]
      : JSON.parse(text);
    results.push({ scenario, checks });
  }
  return results;
}

/** The scenarios the suite's requirement file for `revision` scores. */
async function required(suiteDirectory: string, revision: string): Promise<Set<string>> {
  const path = join(
    suiteDirectory,
    "node_modules",
    SUITE_PACKAGE,
    "requirements",
    `${revision}.yaml`,
  );
  return requiredServerScenarios(await Deno.readTextFile(path));
}

/** Reads the baseline, or an empty one when there is none yet. */
async function readBaseline(): Promise<Baseline> {
  const text = await Deno.readTextFile(BASELINE_PATH).catch((error) => {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  });
  return text === null ? { suite: SUITE, revisions: {} } : parseBaseline(text);
}

/** The command's entry: 0 when the run agrees with the baseline, 1 when it differs. */
async function main(args: string[]): Promise<number> {
  const update = args.includes("--update");
  const unknown = args.filter((arg) => arg !== "--update");
  if (unknown.length > 0) {
    console.error(`conformance: unknown argument ${unknown[0]}; the only option is --update`);
    return 2;
  }
  const started = Date.now();
  const baseline = await readBaseline();
  const suiteDirectory = await installSuite();
  const node = await nodeCommand();
  const root = await Deno.makeTempDir({ prefix: "openwork-conformance-root-" });
  const output = await Deno.makeTempDir({ prefix: "openwork-conformance-results-" });
  const token = crypto.randomUUID();
  const runs: Record<string, ReturnType<typeof verdicts>> = {};
  const summary: string[] = [];
  const server = await startServer(root, token);
  try {
    for (const revision of REVISIONS) {
      const directory = join(output, revision);
      await Deno.mkdir(directory);
      const results = await runSuite(node, suiteDirectory, server.url, token, revision, directory);
      runs[revision] = verdicts(results);
      const all = tallyChecks(results);
      const scored = tallyChecks(results, await required(suiteDirectory, revision));
      summary.push(
        `${revision}: ${all.passed} passed, ${all.failed} failed, ${all.warnings} warnings ` +
          `(${results.length} scenarios; of the required ones: ${scored.passed} passed, ` +
          `${scored.failed} failed)`,
      );
    }
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`MCP conformance (${SUITE}, checks), in ${seconds} s:`);
  for (const line of summary) console.log(`  ${line}`);

  // The README's Conformance section shows these lines as printed: they must not go stale.
  const readme = await Deno.readTextFile(README_PATH);
  const unstated = summary.filter((line) => !readme.includes(`\n${line}\n`));
  const readmeNote = unstated.length === 0 ? [] : [
    "The README's Conformance section does not show these counts; write them there:",
    ...unstated.map((line) => `  ${line}`),
  ];

  if (update) {
    const next = updatedBaseline(baseline, SUITE, runs);
    await Deno.writeTextFile(BASELINE_PATH, JSON.stringify(next, null, 2) + "\n");
    await Deno.remove(output, { recursive: true });
    console.log(`conformance: wrote ${BASELINE_PATH}`);
    const unwritten = unwrittenReasons(next);
    if (unwritten.length > 0) {
      console.log(`Write the reason of each entry marked "${REASON_TO_WRITE}":`);
      for (const entry of unwritten) console.log(`  ${entry}`);
    }
    for (const line of readmeNote) console.log(line);
    return 0;
  }
  const differences = REVISIONS.flatMap((revision) =>
    compareWithBaseline(baseline, revision, runs[revision])
  );
  const unwritten = unwrittenReasons(baseline);
  const otherSuite = baseline.suite === SUITE
    ? []
    : [`The baseline was taken with ${baseline.suite}; the suite run is ${SUITE}.`];
  if (
    differences.length === 0 && unwritten.length === 0 && otherSuite.length === 0 &&
    readmeNote.length === 0
  ) {
    await Deno.remove(output, { recursive: true });
    console.log("conformance: the results agree with the baseline and the README");
    return 0;
  }
  if (differences.length > 0) console.log(formatDifferences(differences));
  for (const line of otherSuite) console.log(line);
  if (unwritten.length > 0) {
    console.log(`Baseline entries without a reason (write one for each):`);
    for (const entry of unwritten) console.log(`  ${entry}`);
  }
  for (const line of readmeNote) console.log(line);
  console.log(`The suite's results are in ${output}.`);
  if (differences.length > 0 || otherSuite.length > 0) {
    console.log(
      `When the change is intended, update the baseline:\n` +
        `  deno task conformance --update\n` +
        `which rewrites scripts/conformance_baseline.json from this run, keeping the reasons of the\n` +
        `entries that stay; write a one-line reason by hand for each new entry ("${REASON_TO_WRITE}").`,
    );
  }
  return 1;
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (error) {
    const message = error instanceof BaselineError
      ? `${BASELINE_PATH}: ${error.message}`
      : (error as Error).message;
    console.error(`conformance: ${message}`);
    Deno.exit(2);
  }
}
