/**
 * Counts the calls that take a path (each one a permission check under
 * Deno's scoped flags) that the Deno backend makes per file, under exactly
 * the flags `denoPermissionFlags` returns, for grep, glob, list and read, and
 * for the Deno floor (bench/floor_search.mjs) under the same flags.
 *
 * Run: deno task bench:checks [N] (N files a tree, default 1024; it needs strace)
 *
 * How: each case runs as a whole process under `strace -f -e trace=%file`
 * (every system call that takes a file name, in every thread), on two trees
 * that differ only in their number of files (N and 2N, 16 files a
 * directory, as deep as a kernel source file); the difference of the counts,
 * over N, is what one more file costs. Start-up, module loading and the
 * first files scanned on the calling thread cancel out. list is counted per
 * entry (one directory of N, then 2N entries) and per call (N/64 calls, then
 * N/32, on a directory of 16 entries), read per call (N calls, then 2N).
 *
 * The calls are sorted by what the program asked for: `open` (one `openat`
 * with a path), `resolve` (the `readlink` steps with which Deno resolves a
 * path, component by component, before it opens it: `openat` then goes to the
 * path resolved), `readlink` (a readlink the program asked for: a
 * descriptor's path through the link to /proc/self/fd, or through /proc/self/fd
 * itself), `stat` (stat, lstat,
 * access with a path; an fstat, on a descriptor, takes none and is not
 * counted), `other`. "checked" is open + readlink + stat + other: the calls
 * Deno checks against its flags.
 */
import { join } from "node:path";
import { repo, sh } from "./setup.ts";

const N = Number(Deno.args[0] ?? 1024);
const temporary = Deno.env.get("TMPDIR") ?? "/tmp";
const base = join(temporary, "owt-bench-checks");
const PER_DIRECTORY = 16;

/** A tree of `files` files (every third holds the literal), 16 a directory, four levels down. */
async function tree(files: number): Promise<string> {
  const root = join(base, `tree-${files}`);
  if ((await sh(`test -f ${root}/.done`)).code === 0) return root;
  for (let i = 0; i < files; i++) {
    const dir = join(root, "src", "sub", "deep", `d${Math.floor(i / PER_DIRECTORY)}`);
    if (i % PER_DIRECTORY === 0) await Deno.mkdir(dir, { recursive: true });
    const body = `int value_${i}(void) { return ${i}; }\n` +
      (i % 3 === 0 ? "EXPORT_SYMBOL_GPL(x);\n" : "");
    await Deno.writeTextFile(join(dir, `f${i}.c`), body);
  }
  await Deno.writeTextFile(join(root, ".done"), "");
  return root;
}

/** The flags `denoPermissionFlags` returns for `root`, reading `extra` besides. */
async function flags(root: string, extra: string[] = []): Promise<string[]> {
  const { denoPermissionFlags } = await import("../deno.ts");
  return denoPermissionFlags({ workingDirectory: root }).map((flag) =>
    flag.startsWith("--allow-read=") && extra.length > 0 ? `${flag},${extra.join(",")}` : flag
  );
}

/** A readlink the program asked for: a descriptor's path through a route. */
const explicit = /^"(\/tmp\/openwork-tools-fd-\d+|\/proc\/self\/fd)\/\d+"/;

type Counts = Record<"open" | "resolve" | "readlink" | "stat" | "other", number>;

/** The file-name system calls of one process, by what the program asked for. */
async function count(args: string[], cwd: string): Promise<Counts> {
  const out = join(base, "strace.txt");
  const { code, stdout, stderr } = await new Deno.Command("strace", {
    args: ["-f", "-qq", "-e", "trace=%file", "-o", out, "deno", "run", "--quiet", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    throw new Error(
      `${args.join(" ")}: ${new TextDecoder().decode(stdout)}${new TextDecoder().decode(stderr)}`,
    );
  }
  const counts: Counts = { open: 0, resolve: 0, readlink: 0, stat: 0, other: 0 };
  for (const line of (await Deno.readTextFile(out)).split("\n")) {
    const call = /^\d+\s+(\w+)\((.*)$/.exec(line);
    if (call === null) continue; // a resumed call, counted where it began
    const [, name, rest] = call;
    if (/^(\w+, )?""/.test(rest)) continue; // on a descriptor, no path
    if (name === "openat" || name === "open") counts.open++;
    // The program reads only descriptors' links (`<route>/N`); every other readlink is a step of
    // Deno's resolution of a path (the link itself, /proc/self, /proc/PID/fd/N, each directory).
    else if (name === "readlink") counts[explicit.test(rest) ? "readlink" : "resolve"]++;
    else if (/^(statx|newfstatat|stat|lstat|access|faccessat2?)$/.test(name)) counts.stat++;
    else counts.other++;
  }
  return counts;
}

interface Case {
  readonly name: string;
  /** The process's arguments after `deno run`, on the tree of `files` files. */
  readonly args: (root: string, files: number) => Promise<string[]>;
  /** Per what. */
  readonly unit: string;
}

const runner = `${repo}bench/count_calls.ts`;
const floorModule = `${repo}bench/floor_search.mjs`;
const filesOf = (files: number) =>
  Array.from(
    { length: files },
    (_, i) => `src/sub/deep/d${Math.floor(i / PER_DIRECTORY)}/f${i}.c`,
  );

const CASES: Case[] = [
  {
    name: "grep files_with_matches",
    unit: "file",
    args: async (root) => [...await flags(root), runner, root, "grep", "EXPORT_SYMBOL_GPL"],
  },
  {
    name: "glob **/*.c",
    unit: "file",
    args: async (root) => [...await flags(root), runner, root, "glob", "**/*.c"],
  },
  {
    name: "list (one directory)",
    unit: "entry",
    args: async (root) => [...await flags(root), runner, root, "list", "flat"],
  },
  {
    name: "list (calls)",
    unit: "call",
    // N/64 calls, then N/32, on a directory of 16 entries.
    args: async (root, files) => [
      ...await flags(root),
      runner,
      root,
      "list",
      "src/sub/deep/d0",
      String(files / 64),
    ],
  },
  {
    name: "read",
    unit: "call",
    args: async (root, files) => [...await flags(root), runner, root, "read", ...filesOf(files)],
  },
  {
    name: "Deno floor, grep",
    unit: "file",
    args: async (root) => [
      ...await flags(root, [floorModule]),
      floorModule,
      root,
      "grep",
      "EXPORT_SYMBOL_GPL",
    ],
  },
  {
    name: "Deno floor, glob",
    unit: "file",
    args: async (root) => [...await flags(root, [floorModule]), floorModule, root, "glob", ".c"],
  },
];

/** A flat directory of `files` files in the tree, for list. */
async function flat(root: string, files: number): Promise<void> {
  const dir = join(root, "flat");
  if ((await sh(`test -d ${dir}`)).code === 0) return;
  await Deno.mkdir(dir);
  for (let i = 0; i < files; i++) await Deno.writeTextFile(join(dir, `e${i}.c`), "");
}

const small = await tree(N);
const large = await tree(2 * N);
await flat(small, N);
await flat(large, 2 * N);
// The flat directories hold files too: grep and glob count them as the difference (N more).
console.log(
  `Path calls under denoPermissionFlags, per file, entry or call as "per" says (strace -f -e ` +
    `trace=%file; the difference between trees of ${N * 2} and ${N * 4} files, or between ` +
    `N and 2N calls, over the difference):\n`,
);
console.log("| case | per | open | resolve | readlink | stat | other | checked | all |");
console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|");
for (const c of CASES) {
  const a = await count(await c.args(small, N), small);
  const b = await count(await c.args(large, 2 * N), large);
  // grep and glob walk both the deep tree and the flat directory: 2N more files.
  const per = c.unit === "file" ? 2 * N : c.name === "list (calls)" ? N / 64 : N;
  const cell = (key: keyof Counts) => ((b[key] - a[key]) / per).toFixed(2);
  const checked =
    (b.open + b.readlink + b.stat + b.other - a.open - a.readlink - a.stat - a.other) /
    per;
  const all = (Object.values(b).reduce((s, v) => s + v, 0) -
    Object.values(a).reduce((s, v) => s + v, 0)) / per;
  console.log(
    `| ${c.name} | ${c.unit} | ${cell("open")} | ${cell("resolve")} | ${cell("readlink")} | ${
      cell("stat")
    } | ${cell("other")} | ${checked.toFixed(2)} | ${all.toFixed(2)} |`,
  );
}
