/**
 * Loads the bash grammar (tree-sitter-bash on web-tree-sitter) once, and
 * turns a command line into simple commands of literal words, failing
 * closed on every construct whose words are not known before it runs.
 *
 * @module
 */
import type { Node, Parser } from "web-tree-sitter";
import { readFile } from "node:fs/promises";
import process from "node:process";
import { Worker } from "node:worker_threads";
// Keeps the grammar package in the module graph, so that its wasm file
// resolves to a local file under Deno as under Node.
import grammarPackage from "tree-sitter-bash/package.json" with { type: "json" };

/** A simple command whose every word is a literal known before it runs. */
export interface LiteralCommand {
  /** The words, program first, after the shell's quote removal. */
  readonly words: readonly string[];
}

/** The commands of a line, or why it cannot be proven to be only those. */
export type ParsedLine =
  | { readonly ok: true; readonly commands: readonly LiteralCommand[] }
  | { readonly ok: false; readonly reason: string };

let parser: Promise<Parser | null> | undefined;

async function loadParser(): Promise<Parser | null> {
  let runtime: Uint8Array;
  let grammar: Uint8Array;
  try {
    if (typeof grammarPackage.version !== "string") return null;
    // Both wasm files are read here, so a refused read (narrow Deno flags)
    // is caught instead of aborting inside the Emscripten loader.
    runtime = await readFile(new URL(import.meta.resolve("web-tree-sitter/tree-sitter.wasm")));
    grammar = await readFile(
      new URL(import.meta.resolve("tree-sitter-bash/tree-sitter-bash.wasm")),
    );
  } catch {
    // Without a parser nothing is proven read-only: every command asks.
    return null;
  }
  try {
    // Loaded on first use: a host that never classifies a command never pays for it.
    const { Language, Parser } = await import("web-tree-sitter");
    await Parser.init({ wasmBinary: runtime });
    const language = await Language.load(new Uint8Array(grammar));
    const instance = new Parser();
    instance.setLanguage(language);
    return instance;
  } catch {
    return null;
  }
}

class NotLiteral extends Error {}

const SEPARATORS = new Set([";", "&&", "||", "|", "|&", "\n", ";;"]);
// Characters that make an unquoted word expand (globs, braces, tilde) or that
// the grammar should have split off already; any of them fails closed.
const UNQUOTED_SPECIAL = /[*?[\]{}~$`<>()&;|]/;

function unescapeUnquoted(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") {
      const next = text[i + 1];
      if (next === undefined) throw new NotLiteral("a trailing backslash");
      i++;
      if (next !== "\n") out += next;
      continue;
    }
    if (UNQUOTED_SPECIAL.test(c)) {
      throw new NotLiteral(
        `the unquoted character ${JSON.stringify(c)} in ${JSON.stringify(text)}`,
      );
    }
    out += c;
  }
  return out;
}

function unescapeDoubleQuoted(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "$" || c === "`") throw new NotLiteral("an expansion inside double quotes");
    if (c === "\\" && i + 1 < text.length && '$`"\\\n'.includes(text[i + 1])) {
      if (text[i + 1] !== "\n") out += text[i + 1];
      i++;
      continue;
    }
    out += c;
  }
  return out;
}

function literalOf(node: Node): string {
  switch (node.type) {
    case "word":
    case "number": {
      return unescapeUnquoted(node.text);
    }
    case "raw_string":
      return node.text.slice(1, -1);
    case "string": {
      let value = "";
      for (const child of node.children) {
        if (child === null) continue;
        if (!child.isNamed) continue;
        if (child.type !== "string_content") {
          throw new NotLiteral(`a ${child.type} inside double quotes`);
        }
        value += unescapeDoubleQuoted(child.text);
      }
      return value;
    }
    case "concatenation":
      return node.children.map((child) => (child === null ? "" : literalOf(child))).join("");
    default:
      throw new NotLiteral(`a ${node.type.replaceAll("_", " ")}`);
  }
}

function commandOf(node: Node): LiteralCommand {
  const words: string[] = [];
  for (const child of node.children) {
    if (child === null) continue;
    if (child.type === "command_name") {
      const inner = child.firstNamedChild;
      if (inner === null) throw new NotLiteral("an empty command name");
      words.push(literalOf(inner));
    } else if (child.isNamed) {
      if (child.type === "variable_assignment") {
        throw new NotLiteral("a variable assignment before the command");
      }
      words.push(literalOf(child));
    } else {
      throw new NotLiteral(`the token ${JSON.stringify(child.type)}`);
    }
  }
  return { words };
}

function collect(node: Node, into: LiteralCommand[]): void {
  for (const child of node.children) {
    if (child === null) continue;
    if (!child.isNamed) {
      if (SEPARATORS.has(child.type)) continue;
      throw new NotLiteral(
        child.type === "&" ? "a background job (&)" : `the token ${JSON.stringify(child.type)}`,
      );
    }
    switch (child.type) {
      case "comment":
        break;
      case "command":
        into.push(commandOf(child));
        break;
      case "list":
      case "pipeline":
        collect(child, into);
        break;
      default:
        throw new NotLiteral(`a ${child.type.replaceAll("_", " ")}`);
    }
  }
}

/**
 * Parses a command line into simple literal commands joined by `;`, `&&`,
 * `||`, `|` and newlines. Anything else (expansions, substitutions,
 * redirections, assignments, subshells, background jobs, functions, control
 * flow, globs, parse errors) fails closed with the reason.
 *
 * Under Node the parsing runs in a worker: there V8's first optimizing
 * compile of the grammar's wasm holds the thread for 0.4–0.8 s, which on the
 * main thread would stall every other call of the host. Deno does not stall.
 */
export function parseLiteralCommands(line: string): Promise<ParsedLine> {
  return process.versions.deno === undefined ? parseInWorker(line) : parseHere(line);
}

/** Parses on the calling thread. */
export async function parseHere(line: string): Promise<ParsedLine> {
  parser ??= loadParser();
  const instance = await parser;
  if (instance === null) return { ok: false, reason: "the shell parser could not be loaded" };
  const tree = instance.parse(line);
  if (tree === null) return { ok: false, reason: "the shell parser gave no tree" };
  try {
    if (tree.rootNode.hasError) return { ok: false, reason: "the command does not parse as bash" };
    const commands: LiteralCommand[] = [];
    collect(tree.rootNode, commands);
    if (commands.length === 0) return { ok: false, reason: "no command" };
    return { ok: true, commands };
  } catch (error) {
    if (error instanceof NotLiteral) return { ok: false, reason: `it contains ${error.message}` };
    throw error;
  } finally {
    tree.delete();
  }
}

interface ParserWorker {
  readonly worker: Worker;
  /** Pending lines; `null` answers one the worker can no longer parse. */
  readonly waiting: Map<number, (parsed: ParsedLine | null) => void>;
}

let worker: ParserWorker | null | undefined;
let lastId = 0;

/** The parser worker, started on first use; `null` once it cannot run (then parsing is local). */
function parserWorker(): ParserWorker | null {
  if (worker !== undefined) return worker;
  try {
    // The worker module sits beside this one: .ts from source, .js in the npm build.
    const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
    const started: ParserWorker = {
      worker: new Worker(new URL(`./shell_parser_worker.${extension}`, import.meta.url)),
      waiting: new Map(),
    };
    started.worker.on("message", ({ id, parsed }: { id: number; parsed: ParsedLine }) => {
      started.waiting.get(id)?.(parsed);
      started.waiting.delete(id);
      if (started.waiting.size === 0) started.worker.unref();
    });
    // A failed worker hands its pending lines, and every later one, to the calling thread.
    const retire = () => {
      worker = null;
      const pending = [...started.waiting.values()];
      started.waiting.clear();
      for (const resolve of pending) resolve(null);
    };
    started.worker.on("error", retire);
    started.worker.on("exit", retire);
    started.worker.unref();
    worker = started;
  } catch {
    worker = null;
  }
  return worker;
}

async function parseInWorker(line: string): Promise<ParsedLine> {
  const running = parserWorker();
  if (running === null) return parseHere(line);
  const id = ++lastId;
  const parsed = await new Promise<ParsedLine | null>((resolve) => {
    running.waiting.set(id, resolve);
    running.worker.ref();
    running.worker.postMessage({ id, line });
  });
  return parsed ?? parseHere(line);
}
