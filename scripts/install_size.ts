/**
 * What installing the package weighs in a fresh project, and the README's
 * sentence that states it: the npm build measures the install, prints it,
 * and compares the README's figures with the measured ones, so the sentence
 * cannot go stale.
 *
 * @module
 */
import { join } from "node:path";

/** One part of an install: a package's own files, or a dependency with what only it brings. */
export interface InstallPart {
  /** The package's name, or a dependency's with the count of packages only it brings. */
  readonly label: string;
  /** Bytes of its files. */
  readonly bytes: number;
}

/** What installing a package in a fresh project brings. */
export interface InstallSize {
  /** The package installed. */
  readonly name: string;
  /** Packages in `node_modules`, the package itself among them. */
  readonly packages: number;
  /** Bytes of the files in `node_modules`. */
  readonly bytes: number;
  /** The package's own files and each direct dependency's share, largest first. */
  readonly parts: readonly InstallPart[];
}

/**
 * How far the README's total may be from the measured one, as a fraction of
 * the measured: sizes drift with the dependencies' patch releases.
 */
export const SIZE_TOLERANCE = 0.1;
/** A part may be this many bytes off as well: a 0.1 MB part is at the rounding's edge. */
const PART_SLACK_BYTES = 0.1e6;

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

/** `count` packages, in words. */
const packages = (count: number): string => `${count} package${count === 1 ? "" : "s"}`;

/** `bytes` in MB with one decimal, as the README and the log write sizes. */
export const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * What installing `name` weighs in `project`: the bytes of `node_modules`,
 * its packages, and each direct dependency of `name` with the packages only
 * it brings (from the lockfile), largest first.
 *
 * @example
 * ```ts ignore
 * const size = await measureInstall("/tmp/consumer", "@openwork/tools");
 * console.log(formatInstallSize(size));
 * ```
 */
export async function measureInstall(project: string, name: string): Promise<InstallSize> {
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
  const parts: InstallPart[] = [];
  for (const [dependency, tree] of trees) {
    const shared = new Set(
      [...trees].filter(([other]) => other !== dependency).flatMap(([, t]) => [...t]),
    );
    const only = [...tree].filter((path) => !shared.has(path));
    const bytes = only.reduce((sum, path) => sum + own.get(path)!, 0);
    const brings = only.length === 1 ? "" : ` with the ${packages(only.length - 1)} only it brings`;
    parts.push({ bytes, label: `${dependency}${brings}` });
  }
  parts.push({ bytes: own.get(root)!, label: name });
  parts.sort((a, b) => b.bytes - a.bytes || a.label.localeCompare(b.label));
  const bytes = await bytesBelow(join(project, "node_modules"));
  return { name, packages: installed.length, bytes, parts };
}

/** The build's log of an install: the total, then each part. */
export function formatInstallSize(size: InstallSize): string {
  return [
    `install size: ${mb(size.bytes)} in node_modules, ${packages(size.packages)}`,
    ...size.parts.map((part) => `  ${mb(part.bytes).padStart(8)}  ${part.label}`),
  ].join("\n");
}

/** The command that measures the install and checks the README's sentence. */
const COMMAND = "deno task build:npm";

/**
 * The README's sentence for `size`, measured on `date` (`YYYY-MM-DD`): the
 * form {@link checkReadmeInstallSize} reads.
 */
export function installSentence(size: InstallSize, date: string): string {
  const parts = size.parts.map((part) => `${part.label} ${mb(part.bytes)}`).join(", ");
  return `In a fresh project, \`npm install ${size.name}\` brings ${packages(size.packages)}, ` +
    `${mb(size.bytes)} of files in \`node_modules\`: ${parts} (measured on ${date} with ` +
    `\`${COMMAND}\`).`;
}

/** The sentence's figures, read back from the README (whitespace collapsed). */
const SENTENCE = new RegExp(
  "`npm install ([^`]+)` brings (\\d+) packages?, (\\d+(?:\\.\\d+)?) MB of files in " +
    "`node_modules`: (.+?) \\(measured on (\\d{4}-\\d{2}-\\d{2}) with `" +
    COMMAND.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "`\\)",
  "g",
);
/** One part of the sentence's list: a label, then its size. */
const PART = /^(.+) (\d+(?:\.\d+)?) MB$/;

/**
 * Compares the README's install sentence with `size`: the package counts
 * must be equal, the total within {@link SIZE_TOLERANCE} of the measured,
 * the parts the same, each within that fraction or 0.1 MB. Returns `null`
 * when they agree, else what differs and the sentence the README should
 * have (measured on `date`).
 *
 * @example
 * ```ts ignore
 * const problem = checkReadmeInstallSize(await Deno.readTextFile("README.md"), size, "2026-12-04");
 * if (problem !== null) throw new Error(problem);
 * ```
 */
export function checkReadmeInstallSize(
  readme: string,
  size: InstallSize,
  date: string,
): string | null {
  const text = readme.replace(/\s+/g, " ");
  const found = [...text.matchAll(SENTENCE)];
  const differences: string[] = [];
  if (found.length !== 1) {
    differences.push(
      found.length === 0
        ? "README.md has no install sentence the build can read (`npm install <name>` brings " +
          "N packages, X MB of files in `node_modules`: <part> X MB, … (measured on " +
          `YYYY-MM-DD with \`${COMMAND}\`))`
        : `README.md has ${found.length} install sentences; it should have one`,
    );
  } else {
    const [, name, count, total, list] = found[0];
    if (name !== size.name) differences.push(`it installs ${name}, not ${size.name}`);
    if (Number(count) !== size.packages) {
      differences.push(`it says ${count} packages; the install brought ${size.packages}`);
    }
    const near = (said: number, measured: number, slack: number) =>
      Math.abs(said - measured) <= Math.max(measured * SIZE_TOLERANCE, slack);
    if (!near(Number(total) * 1e6, size.bytes, 0)) {
      differences.push(
        `it says ${total} MB in node_modules; the install measured ${mb(size.bytes)} ` +
          `(more than ${SIZE_TOLERANCE * 100}% apart)`,
      );
    }
    const said = new Map<string, number>();
    for (const item of list.split(", ")) {
      const part = PART.exec(item);
      if (part === null) differences.push(`its part "${item}" is not "<label> X MB"`);
      else said.set(part[1], Number(part[2]) * 1e6);
    }
    for (const part of size.parts) {
      const bytes = said.get(part.label);
      if (bytes === undefined) {
        differences.push(`it does not list ${part.label} (${mb(part.bytes)})`);
      } else if (!near(bytes, part.bytes, PART_SLACK_BYTES)) {
        differences.push(
          `it says ${part.label} ${mb(bytes)}; the install measured ${mb(part.bytes)}`,
        );
      }
      said.delete(part.label);
    }
    for (const label of said.keys()) differences.push(`it lists ${label}, which is not installed`);
  }
  if (differences.length === 0) return null;
  return [
    "README.md's install size does not match this install:",
    ...differences.map((difference) => `  - ${difference}`),
    "Its sentence should read:",
    `  ${installSentence(size, date)}`,
  ].join("\n");
}
