// The least a Node or Deno program does for the benchmark's cases, as a floor to
// read the project's figures against: a synchronous walk (readdirSync; Deno's
// readDirSync under Deno), then
// for grep two workers that open, read and close every file looking for a
// literal, reading in 64 KiB chunks into one small buffer (as the search workers
// do: the kernel copies into it at about half the cost of a 1 MiB buffer), a
// literal across a chunk boundary missed. No path boundary, ordering, ignore
// rules, cancellation or output.
// Prints the number of results and, as "call N", the milliseconds after start-up.
//
// Usage: floor_search.mjs ROOT grep LITERAL | glob SUFFIX
import { closeSync, constants, openSync, readdirSync, readSync } from "node:fs";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

// Deno's Buffer.indexOf runs in JavaScript: there the floor searches a latin1 string,
// as src/search/bytes.ts does.
const nativeBufferSearch = !("Deno" in globalThis);

function filesWith(paths, literal) {
  const buffer = Buffer.alloc(1 << 16);
  const text = literal.toString("latin1");
  const holds = nativeBufferSearch
    ? (n) => buffer.subarray(0, n).indexOf(literal) !== -1
    : (n) => buffer.toString("latin1", 0, n).indexOf(text) !== -1;
  let found = 0;
  for (const path of paths) {
    let fd;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
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
  const [root, tool, needle] = process.argv.slice(2);
  const started = performance.now();
  const files = [];
  // Under Deno its own listing: node:fs wraps the same listing in Dirents, and walking the Linux
  // tree with it takes about 1.7 times as long (measured under the narrow flags: 50 ms against
  // 90 ms for arch/, fs/ and net/). Deno's open and read are as fast as node:fs's there.
  const list = nativeBufferSearch
    ? (dir) => readdirSync(dir, { withFileTypes: true })
    : (dir) =>
      Array.from(Deno.readDirSync(dir), (entry) => ({
        name: entry.name,
        isDirectory: () => entry.isDirectory,
        isFile: () => entry.isFile,
      }));
  const visit = (dir) => {
    for (const entry of list(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) visit(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  visit(root);
  let found;
  if (tool === "glob") found = files.filter((path) => path.endsWith(needle)).length;
  else {
    const halves = [0, 1].map((half) => files.filter((_, i) => i % 2 === half));
    const counts = await Promise.all(halves.map((paths) =>
      new Promise((resolve, reject) => {
        const worker = new Worker(new URL(import.meta.url), { workerData: { paths, needle } });
        worker.once("message", resolve);
        worker.once("error", reject);
      })
    ));
    found = counts[0] + counts[1];
  }
  console.log(`${found} call ${(performance.now() - started).toFixed(1)}`);
} else {
  parentPort.postMessage(filesWith(workerData.paths, workerData.needle));
}
