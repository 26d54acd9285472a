// The least a Node or Deno program does for the benchmark's cases, as a floor to
// read the project's figures against: a synchronous walk (readdirSync; Deno's
// readDirSync under Deno), then
// for grep two workers that open, read and close every file looking for a
// literal, reading in 64 KiB chunks into one small buffer (as the search workers
// do: the kernel copies into it at about half the cost of a 1 MiB buffer), a
// literal across a chunk boundary missed. No path boundary, cancellation or output.
//
// What the tools' contract requires of every walk, the floor does in its least
// form: each directory's entries sorted by name (the tools' output is sorted,
// deterministically), `.git` never entered, and the `.gitignore` files met inside
// a git repository (at or below a directory holding `.git`) read, though not
// applied (the README: ignore rules apply there). The Linux tree the benchmark
// walks holds no `.git`: there the floor reads none, as the tools apply none.
//
// Prints the number of results and, as "call N", the milliseconds after start-up.
//
// With "verified" last, not the floor but a reference for what the tools' path boundary costs
// (README, Races), in its least form: each directory is opened by its path without following a
// final link, asked where it is through a route to the process's descriptors (/proc/self/fd, or,
// under Deno's narrow flags, which refuse that path, the link to it the Deno backend keeps,
// /tmp/openwork-tools-fd-<uid>), and listed through its descriptor; each file grep reads is
// opened and asked the same way; the link is compared with itself before the walk once every
// answer through it is in. Anything else it finds is passed over.
//
// Usage: floor_search.mjs ROOT grep LITERAL [verified] | ROOT glob SUFFIX [verified]
import {
  closeSync,
  constants,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
} from "node:fs";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

// Deno's Buffer.indexOf runs in JavaScript: there the floor searches a latin1 string,
// as src/search/bytes.ts does.
const nativeBufferSearch = !("Deno" in globalThis);

const FILE_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Opens `path` for `flags`: with a `route`, only when the kernel says it is there. */
function openThere(path, flags, route) {
  const fd = openSync(path, flags);
  if (route === null || readlinkSync(`${route}/${fd}`) === path) return fd;
  closeSync(fd);
  throw new Error(`${path} moved`);
}

function filesWith(paths, literal, route) {
  const buffer = Buffer.alloc(1 << 16);
  const text = literal.toString("latin1");
  const holds = nativeBufferSearch
    ? (n) => buffer.subarray(0, n).indexOf(literal) !== -1
    : (n) => buffer.toString("latin1", 0, n).indexOf(text) !== -1;
  let found = 0;
  for (const path of paths) {
    let fd;
    try {
      fd = route === null
        ? openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
        : openThere(path, FILE_FLAGS, route);
    } catch {
      continue;
    }
    for (let n; (n = readSync(fd, buffer, 0, buffer.length, null)) > 0;) {
      if (holds(n)) {
        found++;
        break;
      }
    }
    closeSync(fd);
  }
  return found;
}

if (isMainThread) {
  const [root, tool, needle, verified] = process.argv.slice(2);
  const started = performance.now();
  const route = verified === "verified" ? descriptorRoute() : null;
  const pin = route?.startsWith("/proc/") === false ? linkPin(route) : null;
  const files = [];
  // Under Deno its own listing: node:fs wraps the same listing in Dirents, and walking the Linux
  // tree with it takes about 1.7 times as long (measured under the narrow flags: 50 ms against
  // 90 ms for arch/, fs/ and net/). Deno's open and read are as fast as node:fs's there.
  const listing = nativeBufferSearch
    ? (dir) => readdirSync(dir, { withFileTypes: true })
    : (dir) =>
      Array.from(Deno.readDirSync(dir), (entry) => ({
        name: entry.name,
        isDirectory: () => entry.isDirectory,
        isFile: () => entry.isFile,
      }));
  const list = route === null ? listing : (dir) => {
    let fd;
    try {
      fd = openThere(dir, DIRECTORY_FLAGS, route);
    } catch {
      return [];
    }
    try {
      return listing(`${route}/${fd}`);
    } finally {
      closeSync(fd);
    }
  };
  const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const visit = (dir, inRepository) => {
    const entries = list(dir).sort(byName);
    const repository = inRepository || entries.some((entry) => entry.name === ".git");
    for (const entry of entries) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== ".git") visit(path, repository);
      } else if (entry.isFile()) {
        if (repository && entry.name === ".gitignore") {
          if (route === null) readFileSync(path, "utf8");
          else {
            const fd = openThere(path, FILE_FLAGS, route);
            readFileSync(fd, "utf8");
            closeSync(fd);
          }
        }
        files.push(path);
      }
    }
  };
  visit(root, false);
  let found;
  if (tool === "glob") found = files.filter((path) => path.endsWith(needle)).length;
  else {
    const halves = [0, 1].map((half) => files.filter((_, i) => i % 2 === half));
    const counts = await Promise.all(halves.map((paths) =>
      new Promise((resolve, reject) => {
        const worker = new Worker(new URL(import.meta.url), {
          workerData: { paths, needle, route },
        });
        worker.once("message", resolve);
        worker.once("error", reject);
      })
    ));
    found = counts[0] + counts[1];
  }
  // Every answer through the link came in while it was the one pinned before the walk.
  if (pin !== null && !samePin(pin, linkPin(route))) throw new Error(`${route} changed`);
  console.log(`${found} call ${(performance.now() - started).toFixed(1)}`);
} else {
  parentPort.postMessage(filesWith(workerData.paths, workerData.needle, workerData.route));
}

/** /proc/self/fd where the runtime may read it, else the Deno backend's link to it. */
function descriptorRoute() {
  if (!("Deno" in globalThis)) return "/proc/self/fd";
  const state = Deno.permissions.querySync({ name: "read", path: "/proc/self/fd" }).state;
  return state === "granted" ? "/proc/self/fd" : `/tmp/openwork-tools-fd-${Deno.uid()}`;
}

/** The link's identity, once it is known to be a link to /proc/self/fd. */
function linkPin(link) {
  const info = lstatSync(link);
  if (!info.isSymbolicLink() || info.uid !== Deno.uid() || readlinkSync(link) !== "/proc/self/fd") {
    throw new Error(`${link} is not this user's link to /proc/self/fd`);
  }
  return { dev: info.dev, ino: info.ino, ctimeMs: info.ctimeMs };
}

function samePin(a, b) {
  return a.dev === b.dev && a.ino === b.ino && a.ctimeMs === b.ctimeMs;
}
