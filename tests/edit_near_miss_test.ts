/**
 * The near-miss corpus of `edit`: realistic wrong `old_text`s (whitespace,
 * line ends, final newlines, stale lines and tokens) against realistic files.
 * For each, a scripted retry that copies only from the error text — the
 * fenced block, as `old_text`, and the intended change made on it, as
 * `new_text` — must edit the right region. Also: what the notes say, the
 * bounds, the short answer when nothing is close, and the occurrences listed
 * by `old_text_not_unique`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type BackendFixture, backendFixtures, workspace } from "./helpers.ts";

const fixtures = await backendFixtures();

const SERVER_TS = `import { createServer } from "node:http";
import { readConfig } from "./config.ts";

export interface Options {
  port: number;
  host?: string;
  verbose: boolean;
}

export async function start(options: Options): Promise<void> {
  const config = await readConfig();
  const server = createServer((req, res) => {
    if (req.url === "/health") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
      return;
    }
    res.writeHead(404);
    res.end();
  });
  server.listen(options.port, options.host ?? config.host);
  if (options.verbose) {
    console.log(\`listening on \${options.port}\`);
  }
}

export function stop(server: { close(): void }): void {
  server.close();
}
`;

const SYNC_PY = [
  "import os",
  "import sys",
  "",
  "",
  "def sync(source, target, dry_run=False):",
  '\t"""Copy changed files from source to target."""',
  "\tchanged = []",
  "\tfor name in sorted(os.listdir(source)):",
  "\t\tsrc = os.path.join(source, name)",
  "\t\tdst = os.path.join(target, name)",
  "\t\tif not os.path.exists(dst) or os.path.getmtime(src) > os.path.getmtime(dst):",
  "\t\t\tchanged.append(name)",
  "\t\t\tif not dry_run:",
  "\t\t\t\tcopy(src, dst)",
  "\treturn changed",
  "",
  "",
  "def copy(src, dst):",
  '\twith open(src, "rb") as f:',
  "\t\tdata = f.read()",
  '\twith open(dst, "wb") as f:',
  "\t\tf.write(data)",
  "",
  "",
  'if __name__ == "__main__":',
  '\tprint(sync(sys.argv[1], sys.argv[2], "--dry-run" in sys.argv))',
  "",
].join("\n");

const CACHE_PY = `class Cache:
    def __init__(self, size=128):
        self.size = size
        self.items = {}

    def get(self, key, default=None):
        if key in self.items:
            return self.items[key]
        return default

    def put(self, key, value):
        if len(self.items) >= self.size:
            self.items.pop(next(iter(self.items)))
        self.items[key] = value
`;

const MAKEFILE = [
  "CC ?= cc",
  "CFLAGS = -O2 -Wall -Wextra",
  "OBJS = main.o util.o",
  "",
  "all: app",
  "",
  "app: $(OBJS)",
  "\t$(CC) $(CFLAGS) -o $@ $(OBJS)",
  "",
  "%.o: %.c",
  "\t$(CC) $(CFLAGS) -c $< -o $@",
  "",
  "clean:",
  "\trm -f app $(OBJS)",
  "",
  ".PHONY: all clean",
  "",
].join("\n");

const CI_YML = `name: CI
on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        node: [20, 22]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: \${{ matrix.node }}
      - run: npm ci
      - run: npm test -- --coverage
`;

const MAIN_GO = [
  "package main",
  "",
  "import (",
  '\t"fmt"',
  '\t"os"',
  '\t"strings"',
  ")",
  "",
  "type Config struct {",
  "\tName    string",
  "\tVerbose bool",
  "}",
  "",
  "func parse(args []string) (Config, error) {",
  "\tvar c Config",
  "\tfor _, a := range args {",
  "\t\tswitch {",
  '\t\tcase a == "-v":',
  "\t\t\tc.Verbose = true",
  '\t\tcase strings.HasPrefix(a, "-name="):',
  '\t\t\tc.Name = strings.TrimPrefix(a, "-name=")',
  "\t\tdefault:",
  '\t\t\treturn c, fmt.Errorf("unknown flag %q", a)',
  "\t\t}",
  "\t}",
  "\treturn c, nil",
  "}",
  "",
  "func main() {",
  "\tc, err := parse(os.Args[1:])",
  "\tif err != nil {",
  "\t\tfmt.Fprintln(os.Stderr, err)",
  "\t\tos.Exit(2)",
  "\t}",
  '\tfmt.Printf("hello, %s\\n", c.Name)',
  "}",
  "",
].join("\n");

/** A Windows source file: CRLF line endings throughout. */
const PROGRAM_CS = [
  "using System;",
  "",
  "namespace Demo",
  "{",
  "    public static class Program",
  "    {",
  "        public static int Main(string[] args)",
  "        {",
  "            if (args.Length == 0)",
  "            {",
  '                Console.WriteLine("usage: demo <name>");',
  "                return 1;",
  "            }",
  '            Console.WriteLine($"Hello, {args[0]}!");',
  "            return 0;",
  "        }",
  "    }",
  "}",
  "",
].join("\r\n");

/** No line break at the end, as many editors save JSON. */
const PACKAGE_JSON = `{
  "name": "demo",
  "version": "1.2.0",
  "scripts": {
    "build": "tsc -p .",
    "test": "node --test"
  },
  "dependencies": {
    "left-pad": "^1.3.0"
  }
}`;

/** Markdown with hard line breaks (two trailing spaces), non-breaking spaces and a code fence. */
const NOTES_MD = [
  "# Release notes",
  "",
  "## 1.2.0",
  "Faster startup.  ",
  "Smaller install (12 MB).",
  "",
  "Distances are now shown as 10\u00a0km and 3\u00a0mi.",
  "See the [changelog](CHANGELOG.md) for details.",
  "",
  "## Usage",
  "",
  "```sh",
  "npm install demo",
  "```",
  "",
].join("\n");

const FILES: Readonly<Record<string, string>> = {
  "src/server.ts": SERVER_TS,
  "tools/sync.py": SYNC_PY,
  "cache.py": CACHE_PY,
  "Makefile": MAKEFILE,
  ".github/workflows/ci.yml": CI_YML,
  "main.go": MAIN_GO,
  "Program.cs": PROGRAM_CS,
  "package.json": PACKAGE_JSON,
  "NOTES.md": NOTES_MD,
};

/** One wrong `old_text`: what the model sent, the text it meant, and the change it wants. */
interface NearMiss {
  readonly name: string;
  readonly path: string;
  /** The file's exact current text the model means (it occurs once). */
  readonly truth: string;
  /** The `old_text` the model sent. */
  readonly wrong: string;
  /** The change the model wants, made on whatever text it edits: `[from, to]`. */
  readonly change: readonly [string, string];
  /** Whether it misses only by whitespace, or also by a stale line or token. */
  readonly kind: "whitespace" | "stale";
}

const lf = (text: string) => text.replaceAll("\r\n", "\n");
const crlf = (text: string) => lf(text).replaceAll("\n", "\r\n");
/** Leading tabs to `width` spaces each. */
const tabsToSpaces = (text: string, width = 4) =>
  text.replace(/^\t+/gm, (tabs) => " ".repeat(tabs.length * width));
/** Leading runs of `width` spaces to one tab each. */
const spacesToTabs = (text: string, width: number) =>
  text.replace(/^ +/gm, (spaces) => "\t".repeat(Math.floor(spaces.length / width)));
/** Every line's indentation multiplied by `factor` (spaces). */
const scaleIndent = (text: string, factor: number) =>
  text.replace(/^ +/gm, (spaces) => " ".repeat(Math.round(spaces.length * factor)));

const CORPUS: readonly NearMiss[] = [
  // src/server.ts: two-space TypeScript.
  {
    name: "ts: tabs for two-space indentation",
    path: "src/server.ts",
    truth:
      '    if (req.url === "/health") {\n      res.writeHead(200, { "content-type": "text/plain" });',
    wrong:
      '\t\tif (req.url === "/health") {\n\t\t\tres.writeHead(200, { "content-type": "text/plain" });',
    change: ['"/health"', '"/healthz"'],
    kind: "whitespace",
  },
  {
    name: "ts: four-space indentation for two",
    path: "src/server.ts",
    truth: "  if (options.verbose) {\n    console.log(`listening on ${options.port}`);\n  }",
    wrong:
      "    if (options.verbose) {\n        console.log(`listening on ${options.port}`);\n    }",
    change: ["listening on", "listening at"],
    kind: "whitespace",
  },
  {
    name: "ts: indentation left out on every line",
    path: "src/server.ts",
    truth: "server.listen(options.port, options.host ?? config.host);\n  if (options.verbose) {",
    wrong: "server.listen(options.port, options.host ?? config.host);\nif (options.verbose) {",
    change: ["config.host", "config.hostname"],
    kind: "whitespace",
  },
  {
    name: "ts: a trailing space added",
    path: "src/server.ts",
    truth: "export function stop(server: { close(): void }): void {\n  server.close();",
    wrong: "export function stop(server: { close(): void }): void { \n  server.close();",
    change: ["server.close();", "server.close(); // idempotent"],
    kind: "whitespace",
  },
  {
    name: "ts: CRLF old_text for an LF file",
    path: "src/server.ts",
    truth: "export interface Options {\n  port: number;\n  host?: string;\n  verbose: boolean;\n}",
    wrong:
      "export interface Options {\r\n  port: number;\r\n  host?: string;\r\n  verbose: boolean;\r\n}",
    change: ["verbose: boolean", "verbose?: boolean"],
    kind: "whitespace",
  },
  {
    name: "ts: a blank line that is not there",
    path: "src/server.ts",
    truth: "    res.writeHead(404);\n    res.end();",
    wrong: "    res.writeHead(404);\n\n    res.end();",
    change: ["404", "410"],
    kind: "whitespace",
  },
  {
    name: "ts: a stale line (the file changed since it was read)",
    path: "src/server.ts",
    truth: "    res.writeHead(404);\n    res.end();\n  });",
    wrong: '    res.writeHead(404, { "content-type": "text/plain" });\n    res.end();\n  });',
    change: ["res.end();", 'res.end("not found");'],
    kind: "stale",
  },
  {
    name: "ts: a stale token in one line",
    path: "src/server.ts",
    truth: "const config = await readConfig();",
    wrong: "const config = await loadConfig();",
    change: ["const config", "const settings"],
    kind: "stale",
  },
  {
    name: "ts: a stale token with a tab and a trailing space",
    path: "src/server.ts",
    truth: "  const config = await readConfig();",
    wrong: "\tconst config = await loadConfig(); ",
    change: ["const config", "const settings"],
    kind: "stale",
  },
  {
    name: "ts: a stale import path",
    path: "src/server.ts",
    truth: 'import { readConfig } from "./config.ts";',
    wrong: 'import { readConfig } from "./config.js";',
    change: ["readConfig }", "readConfig, writeConfig }"],
    kind: "stale",
  },
  {
    name: "ts: a non-breaking space copied from a rendered page",
    path: "src/server.ts",
    truth: "export async function start(options: Options): Promise<void> {",
    wrong: "export async\u00a0function start(options: Options): Promise<void> {",
    change: ["Promise<void>", "Promise<number>"],
    kind: "whitespace",
  },
  {
    name: "ts: spaces inside braces left out",
    path: "src/server.ts",
    truth: 'res.writeHead(200, { "content-type": "text/plain" });',
    wrong: 'res.writeHead(200, {"content-type": "text/plain"});',
    change: ["text/plain", "text/plain; charset=utf-8"],
    kind: "whitespace",
  },
  {
    name: "ts: a stale string in a fragment of a line",
    path: "src/server.ts",
    truth: 'res.writeHead(200, { "content-type": "text/plain" })',
    wrong: 'res.writeHead(200, { "content-type": "text/html" })',
    change: ["(200,", "(203,"],
    kind: "stale",
  },
  // tools/sync.py: Python indented with tabs.
  {
    name: "py/tabs: four spaces for a tab",
    path: "tools/sync.py",
    truth: "\tchanged = []\n\tfor name in sorted(os.listdir(source)):",
    wrong: tabsToSpaces("\tchanged = []\n\tfor name in sorted(os.listdir(source)):"),
    change: ["os.listdir(source)", "os.scandir(source)"],
    kind: "whitespace",
  },
  {
    name: "py/tabs: four spaces per tab, three levels deep",
    path: "tools/sync.py",
    truth: "\t\t\tchanged.append(name)\n\t\t\tif not dry_run:\n\t\t\t\tcopy(src, dst)",
    wrong: tabsToSpaces(
      "\t\t\tchanged.append(name)\n\t\t\tif not dry_run:\n\t\t\t\tcopy(src, dst)",
    ),
    change: ["copy(src, dst)", "copy(src, dst, follow=False)"],
    kind: "whitespace",
  },
  {
    name: "py/tabs: eight spaces per tab",
    path: "tools/sync.py",
    truth: "\t\tsrc = os.path.join(source, name)\n\t\tdst = os.path.join(target, name)",
    wrong: tabsToSpaces(
      "\t\tsrc = os.path.join(source, name)\n\t\tdst = os.path.join(target, name)",
      8,
    ),
    change: ["dst =", "dest ="],
    kind: "whitespace",
  },
  {
    name: "py/tabs: two spaces per tab",
    path: "tools/sync.py",
    truth: '\twith open(src, "rb") as f:\n\t\tdata = f.read()',
    wrong: tabsToSpaces('\twith open(src, "rb") as f:\n\t\tdata = f.read()', 2),
    change: ['"rb"', '"rb", buffering=0'],
    kind: "whitespace",
  },
  {
    name: "py/tabs: a tab then spaces",
    path: "tools/sync.py",
    truth: "\t\tsrc = os.path.join(source, name)\n\t\tdst = os.path.join(target, name)",
    wrong: "\t    src = os.path.join(source, name)\n\t    dst = os.path.join(target, name)",
    change: ["src =", "source_path ="],
    kind: "whitespace",
  },
  {
    name: "py/tabs: trailing spaces after a def",
    path: "tools/sync.py",
    truth: "def copy(src, dst):\n\twith open(src",
    wrong: "def copy(src, dst):  \n\twith open(src",
    change: ["def copy(src, dst)", "def copy(src, dst, follow=True)"],
    kind: "whitespace",
  },
  {
    name: "py/tabs: a stale condition",
    path: "tools/sync.py",
    truth:
      "\t\tif not os.path.exists(dst) or os.path.getmtime(src) > os.path.getmtime(dst):\n\t\t\tchanged.append(name)",
    wrong: "\t\tif os.path.getmtime(src) > os.path.getmtime(dst):\n\t\t\tchanged.append(name)",
    change: ["changed.append(name)", "changed.append(src)"],
    kind: "stale",
  },
  {
    name: "py/tabs: a stale docstring, indented with spaces",
    path: "tools/sync.py",
    truth: '\t"""Copy changed files from source to target."""\n\tchanged = []',
    wrong: '    """Copy files from source to target."""\n    changed = []',
    change: ["changed = []", "changed: list[str] = []"],
    kind: "stale",
  },
  {
    name: "py/tabs: CRLF and spaces for tabs",
    path: "tools/sync.py",
    truth:
      'if __name__ == "__main__":\n\tprint(sync(sys.argv[1], sys.argv[2], "--dry-run" in sys.argv))',
    wrong: crlf(
      tabsToSpaces(
        'if __name__ == "__main__":\n\tprint(sync(sys.argv[1], sys.argv[2], "--dry-run" in sys.argv))',
      ),
    ),
    change: ['"--dry-run" in sys.argv', '"-n" in sys.argv'],
    kind: "whitespace",
  },
  {
    name: "py/tabs: one blank line where the file has two",
    path: "tools/sync.py",
    truth: "\treturn changed\n\n\ndef copy(src, dst):",
    wrong: "\treturn changed\n\ndef copy(src, dst):",
    change: ["return changed", "return sorted(changed)"],
    kind: "whitespace",
  },
  // cache.py: Python indented with four spaces.
  {
    name: "py/spaces: tabs for four spaces",
    path: "cache.py",
    truth: "    def get(self, key, default=None):\n        if key in self.items:",
    wrong: spacesToTabs("    def get(self, key, default=None):\n        if key in self.items:", 4),
    change: ["default=None", "default=MISSING"],
    kind: "whitespace",
  },
  {
    name: "py/spaces: one level too shallow",
    path: "cache.py",
    truth: "            self.items.pop(next(iter(self.items)))\n        self.items[key] = value",
    wrong: "        self.items.pop(next(iter(self.items)))\n    self.items[key] = value",
    change: ["= value", "= (value, time.time())"],
    kind: "whitespace",
  },
  {
    name: "py/spaces: a stale comparison",
    path: "cache.py",
    truth:
      "        if len(self.items) >= self.size:\n            self.items.pop(next(iter(self.items)))",
    wrong:
      "        if len(self.items) > self.size:\n            self.items.pop(next(iter(self.items)))",
    change: ["self.items.pop(next(iter(self.items)))", "self.evict()"],
    kind: "stale",
  },
  {
    name: "py/spaces: the blank line between methods left out",
    path: "cache.py",
    truth: "        self.items = {}\n\n    def get(self, key, default=None):",
    wrong: "        self.items = {}\n    def get(self, key, default=None):",
    change: ["self.items = {}", "self.items: dict = {}"],
    kind: "whitespace",
  },
  {
    name: "py/spaces: an extra blank line at the end",
    path: "cache.py",
    truth: "        self.items[key] = value\n",
    wrong: "        self.items[key] = value\n\n",
    change: ["= value", "= value  # newest last"],
    kind: "whitespace",
  },
  {
    name: "py/spaces: two-space indentation",
    path: "cache.py",
    truth: "    def put(self, key, value):\n        if len(self.items) >= self.size:",
    wrong: scaleIndent(
      "    def put(self, key, value):\n        if len(self.items) >= self.size:",
      0.5,
    ),
    change: ["def put(self, key, value)", "def put(self, key, value, ttl=None)"],
    kind: "whitespace",
  },
  // Makefile: recipes start with a tab.
  {
    name: "make: four spaces for the recipe tab",
    path: "Makefile",
    truth: "app: $(OBJS)\n\t$(CC) $(CFLAGS) -o $@ $(OBJS)",
    wrong: "app: $(OBJS)\n    $(CC) $(CFLAGS) -o $@ $(OBJS)",
    change: ["-o $@ $(OBJS)", "-o $@ $(OBJS) $(LDLIBS)"],
    kind: "whitespace",
  },
  {
    name: "make: eight spaces for the recipe tab",
    path: "Makefile",
    truth: "clean:\n\trm -f app $(OBJS)",
    wrong: "clean:\n        rm -f app $(OBJS)",
    change: ["rm -f app", "rm -f app app.map"],
    kind: "whitespace",
  },
  {
    name: "make: a stale variable line",
    path: "Makefile",
    truth: "CFLAGS = -O2 -Wall -Wextra\nOBJS = main.o util.o",
    wrong: "CFLAGS = -O2 -Wall\nOBJS = main.o util.o",
    change: ["util.o", "util.o log.o"],
    kind: "stale",
  },
  {
    name: "make: one space for the recipe tab",
    path: "Makefile",
    truth: "%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@",
    wrong: "%.o: %.c\n $(CC) $(CFLAGS) -c $< -o $@",
    change: ["-c $<", "-c $< -MMD"],
    kind: "whitespace",
  },
  {
    name: "make: a stale .PHONY list",
    path: "Makefile",
    truth: ".PHONY: all clean",
    wrong: ".PHONY: all clean test",
    change: ["all clean", "all clean install"],
    kind: "stale",
  },
  // .github/workflows/ci.yml: YAML, two-space indentation.
  {
    name: "yaml: list items two spaces too shallow",
    path: ".github/workflows/ci.yml",
    truth: "      - run: npm ci\n      - run: npm test -- --coverage",
    wrong: "    - run: npm ci\n    - run: npm test -- --coverage",
    change: ["npm ci", "npm ci --ignore-scripts"],
    kind: "whitespace",
  },
  {
    name: "yaml: tabs for indentation",
    path: ".github/workflows/ci.yml",
    truth: "    strategy:\n      matrix:\n        node: [20, 22]",
    wrong: spacesToTabs("    strategy:\n      matrix:\n        node: [20, 22]", 2),
    change: ["[20, 22]", "[20, 22, 24]"],
    kind: "whitespace",
  },
  {
    name: "yaml: a stale matrix",
    path: ".github/workflows/ci.yml",
    truth: "        node: [20, 22]",
    wrong: "        node: [18, 20]",
    change: ["22]", "22, 24]"],
    kind: "stale",
  },
  {
    name: "yaml: trailing spaces after keys",
    path: ".github/workflows/ci.yml",
    truth: "  push:\n    branches: [main]\n  pull_request:",
    wrong: "  push: \n    branches: [main] \n  pull_request:",
    change: ["branches: [main]", "branches: [main, next]"],
    kind: "whitespace",
  },
  {
    name: "yaml: a nested key at the wrong depth",
    path: ".github/workflows/ci.yml",
    truth: "        with:\n          node-version: ${{ matrix.node }}",
    wrong: "        with:\n        node-version: ${{ matrix.node }}",
    change: [
      "node-version: ${{ matrix.node }}",
      "node-version: ${{ matrix.node }}\n          cache: npm",
    ],
    kind: "whitespace",
  },
  {
    name: "yaml: stale action versions",
    path: ".github/workflows/ci.yml",
    truth: "      - uses: actions/checkout@v4\n      - uses: actions/setup-node@v4",
    wrong: "      - uses: actions/checkout@v3\n      - uses: actions/setup-node@v3",
    change: ["checkout@v4", "checkout@v5"],
    kind: "stale",
  },
  {
    name: "yaml: too shallow and a stale version",
    path: ".github/workflows/ci.yml",
    truth:
      "      - uses: actions/setup-node@v4\n        with:\n          node-version: ${{ matrix.node }}",
    wrong:
      "    - uses: actions/setup-node@v3\n      with:\n        node-version: ${{ matrix.node }}",
    change: ["${{ matrix.node }}", "${{ matrix.node }}\n          cache: npm"],
    kind: "stale",
  },
  // main.go: gofmt, tabs.
  {
    name: "go: four spaces for a tab",
    path: "main.go",
    truth: "\tif err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(2)\n\t}",
    wrong: tabsToSpaces("\tif err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(2)\n\t}"),
    change: ["os.Exit(2)", "os.Exit(1)"],
    kind: "whitespace",
  },
  {
    name: "go: struct fields without gofmt's alignment",
    path: "main.go",
    truth: "\tName    string\n\tVerbose bool",
    wrong: "\tName string\n\tVerbose bool",
    change: ["Verbose bool", "Verbose bool\n\tDebug   bool"],
    kind: "whitespace",
  },
  {
    name: "go: a stale case label",
    path: "main.go",
    truth: '\t\tcase a == "-v":\n\t\t\tc.Verbose = true',
    wrong: '\t\tcase a == "-verbose":\n\t\t\tc.Verbose = true',
    change: ["c.Verbose = true", "c.Verbose = !c.Verbose"],
    kind: "stale",
  },
  {
    name: "go: an import block with spaces",
    path: "main.go",
    truth: 'import (\n\t"fmt"\n\t"os"\n\t"strings"\n)',
    wrong: tabsToSpaces('import (\n\t"fmt"\n\t"os"\n\t"strings"\n)'),
    change: ['"os"', '"os"\n\t"path/filepath"'],
    kind: "whitespace",
  },
  {
    name: "go: one tab too few",
    path: "main.go",
    truth: '\t\tdefault:\n\t\t\treturn c, fmt.Errorf("unknown flag %q", a)',
    wrong: '\tdefault:\n\t\treturn c, fmt.Errorf("unknown flag %q", a)',
    change: ["unknown flag", "unknown option"],
    kind: "whitespace",
  },
  {
    name: "go: the last lines with spaces",
    path: "main.go",
    truth: '\tfmt.Printf("hello, %s\\n", c.Name)\n}\n',
    wrong: '    fmt.Printf("hello, %s\\n", c.Name)\n}\n',
    change: ['"hello', '"Hello'],
    kind: "whitespace",
  },
  {
    name: "go: no space before a brace",
    path: "main.go",
    truth: "for _, a := range args {",
    wrong: "for _, a := range args{",
    change: ["range args", "range args[1:]"],
    kind: "whitespace",
  },
  {
    name: "go: a stale format string in a fragment",
    path: "main.go",
    truth: 'fmt.Errorf("unknown flag %q", a)',
    wrong: 'fmt.Errorf("unknown flag: %q", a)',
    change: ["unknown flag", "bad flag"],
    kind: "stale",
  },
  // Program.cs: CRLF line endings.
  {
    name: "cs/CRLF: a stale condition sent with LF",
    path: "Program.cs",
    truth:
      '            if (args.Length == 0)\r\n            {\r\n                Console.WriteLine("usage: demo <name>");',
    wrong:
      '            if (args.Length < 1)\n            {\n                Console.WriteLine("usage: demo <name>");',
    change: ["usage: demo <name>", "usage: demo NAME"],
    kind: "stale",
  },
  {
    name: "cs/CRLF: tabs for spaces, sent with LF",
    path: "Program.cs",
    truth: "        public static int Main(string[] args)\r\n        {",
    wrong: "\t\tpublic static int Main(string[] args)\n\t\t{",
    change: ["string[] args", "string[] argv"],
    kind: "whitespace",
  },
  {
    name: "cs/CRLF: mixed line endings in old_text",
    path: "Program.cs",
    truth: '            Console.WriteLine($"Hello, {args[0]}!");\r\n            return 0;\r\n',
    wrong: '            Console.WriteLine($"Hello, {args[0]}!");\r\n            return 0;\n',
    change: ["return 0;", "return 0; // ok"],
    kind: "whitespace",
  },
  {
    name: "cs/CRLF: a trailing space, sent with LF",
    path: "Program.cs",
    truth: "namespace Demo\r\n{",
    wrong: "namespace Demo \n{",
    change: ["namespace Demo", "namespace Demo.App"],
    kind: "whitespace",
  },
  {
    name: "cs/CRLF: the closing braces two spaces short",
    path: "Program.cs",
    truth: "        }\r\n    }\r\n}\r\n",
    wrong: "    }\n  }\n}\n",
    change: ["    }\r\n}", "    }\r\n} // namespace"],
    kind: "whitespace",
  },
  // package.json: no line break at the end.
  {
    name: "json: a final newline the file does not have",
    path: "package.json",
    truth: '  "dependencies": {\n    "left-pad": "^1.3.0"\n  }\n}',
    wrong: '  "dependencies": {\n    "left-pad": "^1.3.0"\n  }\n}\n',
    change: ["^1.3.0", "^1.3.1"],
    kind: "whitespace",
  },
  {
    name: "json: tabs for two spaces",
    path: "package.json",
    truth: '  "scripts": {\n    "build": "tsc -p .",',
    wrong: '\t"scripts": {\n\t\t"build": "tsc -p .",',
    change: ["tsc -p .", "tsc -b"],
    kind: "whitespace",
  },
  {
    name: "json: a stale version",
    path: "package.json",
    truth: '  "version": "1.2.0",',
    wrong: '  "version": "1.1.0",',
    change: ["1.2.0", "1.3.0"],
    kind: "stale",
  },
  {
    name: "json: four-space indentation",
    path: "package.json",
    truth: '    "test": "node --test"\n  },',
    wrong: '        "test": "node --test"\n    },',
    change: ["node --test", "node --test --experimental-strip-types"],
    kind: "whitespace",
  },
  // NOTES.md: hard line breaks, non-breaking spaces, a code fence.
  {
    name: "md: the two trailing spaces of a hard break left out",
    path: "NOTES.md",
    truth: "Faster startup.  \nSmaller install (12 MB).",
    wrong: "Faster startup.\nSmaller install (12 MB).",
    change: ["12 MB", "9 MB"],
    kind: "whitespace",
  },
  {
    name: "md: plain spaces for non-breaking ones",
    path: "NOTES.md",
    truth: "Distances are now shown as 10\u00a0km and 3\u00a0mi.",
    wrong: "Distances are now shown as 10 km and 3 mi.",
    change: ["Distances are now", "Distances are"],
    kind: "whitespace",
  },
  {
    name: "md: a stale heading",
    path: "NOTES.md",
    truth: "## 1.2.0\nFaster startup.  ",
    wrong: "## 1.1.0\nFaster startup.  ",
    change: ["## 1.2.0", "## 1.2.1"],
    kind: "stale",
  },
  {
    name: "md: an extra blank line after a paragraph",
    path: "NOTES.md",
    truth: "See the [changelog](CHANGELOG.md) for details.\n",
    wrong: "See the [changelog](CHANGELOG.md) for details.\n\n\n",
    change: ["for details", "for all details"],
    kind: "whitespace",
  },
  {
    name: "md: an indented command inside a code fence",
    path: "NOTES.md",
    truth: "```sh\nnpm install demo\n```",
    wrong: "```sh\n    npm install demo\n```",
    change: ["npm install demo", "npm install --save demo"],
    kind: "whitespace",
  },
];

/**
 * The first fenced block of an error text, read as a model would: the text
 * between an opening line of three or more backticks and the next line
 * holding exactly the same fence.
 */
function fencedBlock(text: string): string | null {
  const match = text.match(/^(`{3,})\n([\s\S]*?)\n\1$/m);
  return match === null ? null : match[2];
}

function occurrenceCount(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) count++;
  return count;
}

/** One line-number computation, independent of the tool's. */
function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

async function withFiles(
  fixture: BackendFixture,
  body: (ws: Awaited<ReturnType<typeof workspace>>) => Promise<void>,
): Promise<void> {
  const ws = await workspace(fixture, FILES);
  try {
    await body(ws);
  } finally {
    await ws.cleanup();
  }
}

test("the near-miss corpus is well formed: 50+ cases, each meaning text that occurs once and missing", () => {
  assert.ok(CORPUS.length >= 50, `${CORPUS.length} cases`);
  for (const c of CORPUS) {
    const file = FILES[c.path];
    assert.equal(occurrenceCount(file, c.truth), 1, `${c.name}: the meant text occurs once`);
    assert.equal(occurrenceCount(file, c.wrong), 0, `${c.name}: old_text misses`);
    // The tool matches an all-LF old_text in a CRLF file: that is not a miss either.
    if (file.includes("\r\n") && !c.wrong.includes("\r")) {
      assert.equal(occurrenceCount(file, crlf(c.wrong)), 0, `${c.name}: misses in CRLF too`);
    }
    assert.ok(c.truth.includes(c.change[0]), `${c.name}: the change applies to the meant text`);
  }
});

for (const fixture of fixtures) {
  const name = fixture.name;

  test(`edit near misses (${name}): a retry copying only the error's block succeeds for every case`, async () => {
    await withFiles(fixture, async (ws) => {
      const failures: string[] = [];
      let succeeded = 0;
      for (const c of CORPUS) {
        const original = FILES[c.path];
        await fixture.writeText(ws.filesystem, `${ws.root}/${c.path}`, original);
        const [from, to] = c.change;
        const first = await ws.call("edit", {
          path: c.path,
          old_text: c.wrong,
          new_text: c.wrong.includes(from) ? c.wrong.replace(from, to) : `${c.wrong}${to}`,
        });
        if (first.error?.code !== "old_text_not_found") {
          failures.push(`${c.name}: first call gave ${first.error?.code ?? "success"}`);
          continue;
        }
        const expectedKind = c.kind === "whitespace"
          ? /match(es)? it except for whitespace/
          : /differs from old_text beyond whitespace/;
        if (!expectedKind.test(first.output)) {
          failures.push(`${c.name}: not described as a ${c.kind} miss:\n${first.output}`);
          continue;
        }
        // The model's retry: the block, byte for byte, and the same change made on it.
        const block = fencedBlock(first.output);
        if (block === null || !block.includes(from)) {
          failures.push(`${c.name}: no block holding ${JSON.stringify(from)}:\n${first.output}`);
          continue;
        }
        const retry = await ws.call("edit", {
          path: c.path,
          old_text: block,
          new_text: block.replace(from, to),
        });
        const after = await fixture.readText(ws.filesystem, `${ws.root}/${c.path}`);
        const expected = original.replace(c.truth, c.truth.replace(from, to));
        if (!retry.ok || after !== expected) {
          failures.push(
            `${c.name}: the retry ${retry.ok ? "edited the wrong text" : retry.output}\n` +
              `${JSON.stringify(after)}`,
          );
          continue;
        }
        succeeded++;
      }
      assert.deepEqual(failures, []);
      assert.equal(succeeded, CORPUS.length);
    });
  });

  test(`edit near misses (${name}): the notes name where the whitespace differs`, async () => {
    await withFiles(fixture, async (ws) => {
      const notes = async (path: string, oldText: string) => {
        const result = await ws.call("edit", { path, old_text: oldText, new_text: "x" });
        assert.equal(result.error?.code, "old_text_not_found", result.output);
        return result.output;
      };
      assert.match(
        await notes("tools/sync.py", "    changed = []\n    for name in"),
        /lines 7–8: the file indents with a tab where old_text indents with 4 spaces\n/,
      );
      assert.match(
        await notes("Makefile", "clean:\n        rm -f app"),
        /line 14: the file indents with a tab where old_text indents with 8 spaces/,
      );
      assert.match(
        await notes("NOTES.md", "Faster startup.\nSmaller install"),
        /line 4: the file has 2 spaces at the end of the line where old_text has none/,
      );
      assert.match(
        await notes("src/server.ts", "export function stop(server: { close(): void }): void { \n"),
        /line 27: old_text has a space at the end of the line where the file has none/,
      );
      assert.match(
        await notes("NOTES.md", "shown as 10 km"),
        /line 7: inside the line the file has a non-breaking space \(U\+00A0\) where old_text has a space/,
      );
      assert.match(
        await notes("src/server.ts", "  port: number;\r\n  host?: string;"),
        /the file has LF line endings \(\\n\) where old_text has CRLF line endings \(\\r\\n\)/,
      );
      assert.match(
        await notes("package.json", '    "left-pad": "^1.3.0"\n  }\n}\n'),
        /line 11 is the last line and the file has no line break after it; old_text ends with one/,
      );
      assert.match(
        await notes("main.go", "\tName string\n"),
        /line 10: inside the line the file has 4 spaces where old_text has a space/,
      );
      const stale = await notes("Makefile", "CFLAGS = -O2 -Wall\nOBJS = main.o util.o");
      assert.match(stale, /The closest text is lines 2–3; it differs .* at line 2 /);
      assert.match(stale, /line 2: the file has "Wall -Wextra" where old_text has "Wall"\n/);
      assert.match(
        await notes("src/server.ts", "\tconst config = await loadConfig();"),
        /line 11: the file has "readConfig" where old_text has "loadConfig"\n- line 11: the file indents with 2 spaces where old_text indents with a tab\n/,
      );
      assert.match(
        await notes("cache.py", "        self.items[key] = value\n\n"),
        /old_text ends with a blank line after its last line of text; the block ends with the line break of line 14/,
      );
      // A stale line of one character still scores (no division by zero in the similarity).
      const brace = await notes(
        "main.go",
        "\tVerbose bool\n)\n\nfunc parse(args []string) (Config, error) {",
      );
      assert.match(brace, /line 12: the file has "\}" where old_text has "\)"/);
      assert.equal(
        fencedBlock(brace),
        "\tVerbose bool\n}\n\nfunc parse(args []string) (Config, error) {",
      );
      // The block's bytes travel intact through JSON: tabs and carriage returns included.
      const cs = await notes("Program.cs", "\t\tpublic static int Main(string[] args)\n\t\t{");
      const block = fencedBlock(JSON.parse(JSON.stringify(cs)));
      assert.equal(block, "        public static int Main(string[] args)\r\n        {");
      const py = await notes("tools/sync.py", "    changed = []");
      assert.equal(fencedBlock(JSON.parse(JSON.stringify(py))), "\tchanged = []");
    });
  });

  test(`edit near misses (${name}): text nowhere near gets a short answer and no quote`, async () => {
    await withFiles(fixture, async (ws) => {
      for (
        const [path, oldText] of [
          ["src/server.ts", "class Database {\n  connect() {}\n}"],
          ["Makefile", "install: app\n\tcp app /usr/local/bin"],
          ["tools/sync.py", "def main(argv):\n\tparser = argparse.ArgumentParser()"],
          ["package.json", "quantum chromodynamics"],
        ] as const
      ) {
        const result = await ws.call("edit", { path, old_text: oldText, new_text: "x" });
        assert.equal(result.error?.code, "old_text_not_found", result.output);
        assert.match(result.output, /Nothing in the file is close to it/);
        assert.equal(fencedBlock(result.output), null, result.output);
        assert.ok(result.output.length < 250, result.output);
      }
      const blank = await ws.call("edit", { path: "main.go", old_text: " \n\t\n", new_text: "x" });
      assert.equal(blank.error?.code, "old_text_not_found");
      assert.match(blank.output, /holds only whitespace/);
    });
  });

  test(`edit near misses (${name}): a long region is quoted within 4 KiB, cut at a line and still exact`, async () => {
    const body = Array.from({ length: 300 }, (_, i) => `\tvalue_${i} = compute(${i})`).join("\n");
    const file = `def table():\n${body}\n\treturn locals()\n`;
    const ws = await workspace(fixture, { "table.py": file });
    try {
      const wrong = tabsToSpaces(`def table():\n${body}\n`);
      const result = await ws.call("edit", { path: "table.py", old_text: wrong, new_text: "x" });
      assert.equal(result.error?.code, "old_text_not_found");
      assert.match(result.output, /is \d+ bytes; the block below holds its first \d+ bytes/);
      const block = fencedBlock(result.output);
      assert.ok(block !== null && block.length <= 4096 && block.length > 3000, result.output);
      assert.ok(file.startsWith(block), "the cut block is the exact start of the region");
      assert.ok(block.endsWith("\n"), "cut after a line break");
      assert.ok(result.output.length < 5000, `${result.output.length} characters`);
      // One note for the 300 lines indented alike.
      assert.match(
        result.output,
        /\n- lines 2–301: the file indents with a tab where old_text indents with 4 spaces\n/,
      );
      const retry = await ws.call("edit", {
        path: "table.py",
        old_text: block,
        new_text: block.replace("def table():", "def table(scale=1):"),
      });
      assert.equal(retry.ok, true, retry.output);
      assert.equal(
        await fixture.readText(ws.filesystem, `${ws.root}/table.py`),
        file.replace("def table():", "def table(scale=1):"),
      );
    } finally {
      await ws.cleanup();
    }
  });

  test(`edit near misses (${name}): a block whose text is not unique is widened until it is`, async () => {
    await withFiles(fixture, async (ws) => {
      // "\t}" closes three blocks in main.go; with spaces it misses, and the quote is widened.
      const result = await ws.call("edit", {
        path: "main.go",
        old_text: "    }\n    return c, nil",
        new_text: "x",
      });
      assert.equal(result.error?.code, "old_text_not_found");
      const block = fencedBlock(result.output);
      assert.equal(block, "\t}\n\treturn c, nil");
      const wide = await ws.call("edit", {
        path: "main.go",
        old_text: "        }\n",
        new_text: "x",
      });
      assert.equal(wide.error?.code, "old_text_not_found");
      const widened = fencedBlock(wide.output);
      assert.ok(widened !== null, wide.output);
      assert.equal(occurrenceCount(MAIN_GO, widened), 1, wide.output);
      assert.ok(widened.includes("}\n"), widened);
      assert.match(
        wide.output,
        /widened to whole neighbouring lines, to lines \d+–\d+, where it occurs once/,
      );
    });
  });

  test(`edit near misses (${name}): old_text_not_unique lists each occurrence's line with context`, async () => {
    await withFiles(fixture, async (ws) => {
      const result = await ws.call("edit", {
        path: "Makefile",
        old_text: "$(CC) $(CFLAGS)",
        new_text: "$(CC) $(CFLAGS) $(CPPFLAGS)",
      });
      assert.equal(result.error?.code, "old_text_not_unique");
      assert.match(result.output, /occurs 2 times in Makefile/);
      const lines = MAKEFILE.split("\n");
      const at = [MAKEFILE.indexOf("$(CC) $(CFLAGS)"), MAKEFILE.lastIndexOf("$(CC) $(CFLAGS)")]
        .map((i) => lineOf(MAKEFILE, i));
      assert.deepEqual(at, [8, 11]);
      for (const line of at) {
        assert.match(result.output, new RegExp(`At line ${line}:`));
        // The line itself and one line either side, numbered as read numbers them.
        for (const n of [line - 1, line, line + 1]) {
          assert.ok(
            result.output.includes(`${String(n).padStart(6)}\t${lines[n - 1]}\n`) ||
              result.output.endsWith(`${String(n).padStart(6)}\t${lines[n - 1]}`),
            `line ${n} shown:\n${result.output}`,
          );
        }
      }
      // Extending old_text with the context shown makes the retry unique.
      const retry = await ws.call("edit", {
        path: "Makefile",
        old_text: "%.o: %.c\n\t$(CC) $(CFLAGS)",
        new_text: "%.o: %.c\n\t$(CC) $(CFLAGS) $(CPPFLAGS)",
      });
      assert.equal(retry.ok, true, retry.output);
    });
  });

  test(`edit near misses (${name}): old_text_not_unique lists at most 20 occurrences and gives the count`, async () => {
    const file = Array.from({ length: 45 }, (_, i) => `# step ${i}\nretries = 3\n`).join("");
    const ws = await workspace(fixture, { "steps.toml": file });
    try {
      const result = await ws.call("edit", {
        path: "steps.toml",
        old_text: "retries = 3",
        new_text: "retries = 5",
      });
      assert.equal(result.error?.code, "old_text_not_unique");
      assert.match(result.output, /occurs 45 times in steps\.toml/);
      const listed = [...result.output.matchAll(/^At line (\d+):$/gm)].map((m) => Number(m[1]));
      assert.deepEqual(listed, Array.from({ length: 20 }, (_, i) => 2 * i + 2));
      assert.match(result.output, /the first 20 with a line of context/);
      assert.ok(result.output.length < 5000, `${result.output.length} characters`);
    } finally {
      await ws.cleanup();
    }
  });
}
