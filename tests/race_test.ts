/**
 * Races with other processes, on the real disk backends: the spec's §11
 * "路径安全" while a process swaps a directory and a file of the root with
 * links to outside it, and "工具语义" (edit never overwrites what it did not
 * read) while a process replaces or rewrites the file being edited.
 *
 * The other processes are python3 scripts started through bash, so that the
 * same file runs under Deno's narrow flags (--allow-run=bash) and under Node.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import { dirname, join } from "node:path";
import { type Artifact, type ToolResult, undoFileChanges } from "../mod.ts";
import { backendFixtures, sh, workspace } from "./helpers.ts";
import {
  finalReport,
  type Helper,
  namesIn,
  startPython,
  SWAPPER,
  treeState,
} from "./race_helpers.ts";

/**
 * The real disk backends only: the in-memory one has no other process to race with. Nothing is
 * set up for them: under the tests' flags the Deno backend makes and checks its own link to
 * /proc/self/fd.
 */
const fixtures = (await backendFixtures()).filter(
  (fixture) => fixture.name !== "memory",
);

/** How long each backend's swap loop runs, and the fewest tool attempts it must make. */
const SWAP_LOOP_MS = 12_000;
const MIN_SWAP_ATTEMPTS = 1_000;
/** How long each external writer runs. */
const WRITER_SECONDS = 5;

/**
 * Writes versions 1, 2, … of a file for some seconds, each `version N`,
 * `marker: TAG-N`, `anchor`: by rename of a temporary file over it
 * ("rename") or by opening it with O_TRUNC and writing ("inplace"). Before
 * writing version N+1 it reads the file, which must hold version N with
 * zero or more `edit K` lines after `anchor` (what the test's edits insert):
 * any other version there means an edit overwrote version N without having
 * read it. It then prints its counts.
 */
const WRITER = String.raw`
import json, os, random, re, sys, threading, time
target, mode, seconds, tag = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
temporary = os.path.join(os.path.dirname(target), ".writer-" + tag + ".tmp")
shape = re.compile(r"version (\d+)\nmarker: " + re.escape(tag) + r"-(\d+)\nanchor\n(?:edit \d+\n)*\Z")
stopping = threading.Event()
def watch_stdin():
    while os.read(0, 4096):
        pass
    stopping.set()
threading.Thread(target=watch_stdin, daemon=True).start()
counts = {"versions": 0, "checks": 0, "edited": 0, "lost": 0, "unrecognized": 0, "transient": 0,
          "missing": 0, "displaced": 0}
examples = []
class Vanished(Exception):
    pass
def retrying(operation):
    # A backend may take the file away for an instant while it commits; gone for 2 s is gone.
    since = None
    while True:
        try:
            return operation()
        except FileNotFoundError:
            counts["missing"] += 1
            since = since or time.monotonic()
            if time.monotonic() - since > 2:
                raise Vanished()
            time.sleep(0.0001)
def read():
    def once():
        with open(target, "rb") as f:
            return f.read().decode("utf-8", "replace")
    return retrying(once)
def verdict(text, n):
    match = shape.match(text)
    if match and match.group(1) == match.group(2) == str(n):
        return "kept"
    return "lost" if match else "unrecognized"
def check(n):
    text = read()
    counts["checks"] += 1
    found = verdict(text, n)
    if found == "kept":
        if text != "version %d\nmarker: %s-%d\nanchor\n" % (n, tag, n):
            counts["edited"] += 1
        return
    # A backend that finds the file changed under its commit may put it back: wait for that.
    # Nothing else writes version n again, so a version that comes back was never lost.
    deadline = time.monotonic() + 0.1
    while time.monotonic() < deadline:
        time.sleep(0.001)
        if verdict(read(), n) == "kept":
            counts["transient"] += 1
            return
    counts[found] += 1
    if len(examples) < 5:
        examples.append({"expected": n, "found": text[:200]})
def write(n):
    data = ("version %d\nmarker: %s-%d\nanchor\n" % (n, tag, n)).encode()
    if mode == "rename":
        with open(temporary, "wb") as f:
            f.write(data)
        os.rename(temporary, target)
        return
    # An in-place writer's open looks the name up before it truncates: if another process moved
    # the file aside in between, the bytes land in a file no longer at the path. Such a write
    # never became the file's version, so it is made again until the path holds what was written.
    while True:
        fd = retrying(lambda: os.open(target, os.O_WRONLY | os.O_TRUNC))
        try:
            os.write(fd, data)
            written = os.fstat(fd)
            at_path = retrying(lambda: os.lstat(target))
        finally:
            os.close(fd)
        if (written.st_dev, written.st_ino) == (at_path.st_dev, at_path.st_ino):
            return
        counts["displaced"] += 1
print("ready", flush=True)
end = time.monotonic() + seconds
n = 0
try:
    while time.monotonic() < end and not stopping.is_set():
        check(n)
        n += 1
        write(n)
        counts["versions"] = n
        # Bursts with short pauses between them, so that some edits fit between two versions.
        if random.random() < 0.05:
            time.sleep(random.uniform(0, 0.005))
except Vanished:
    counts["unrecognized"] += 1
    examples.append({"expected": n, "found": "(no file for 2 s)"})
counts["last"] = n
print(json.dumps({"counts": counts, "examples": examples}), flush=True)
os._exit(0)
`;

/** Counts by key, for the logs. */
function tally(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/**
 * The same disk backends with grep and glob on the calling thread (as where
 * the worker module is missing, in a one-file bundle): the swap race only.
 */
const inThreadFixtures = (await backendFixtures({ searchWorker: null }))
  .filter((fixture) => fixture.name !== "memory")
  .map((fixture) => ({ ...fixture, name: `${fixture.name}, searches on the calling thread` }));

for (const fixture of [...fixtures, ...inThreadFixtures]) {
  const name = fixture.name;

  test(`路径安全 (${name}): while another process swaps a directory and a file with links to outside, no tool reads or changes anything outside the root`, async () => {
    const marker = `OUTSIDE-SECRET-${randomBytes(8).toString("hex")}`;
    const ws = await workspace(fixture, {
      "d/f.txt": "f\nkey: value\ninside\n",
      "d/sub/g.txt": "g\nkey: value\ninside\n",
      "t.txt": "t\nkey: value\ninside\n",
    });
    const helpers: Helper[] = [];
    try {
      // Outside: the same names as inside, holding the marker, plus names made of it.
      const mirror = join(ws.outside, "d");
      await fs.mkdir(join(mirror, "sub"), { recursive: true });
      await fs.writeFile(join(mirror, "f.txt"), `f\nkey: value\n${marker}\n`);
      await fs.writeFile(join(mirror, "sub/g.txt"), `g\nkey: value\n${marker}\n`);
      await fs.writeFile(join(mirror, `${marker}.txt`), `${marker}\n`);
      await fs.writeFile(join(mirror, `sub/${marker}.txt`), `${marker}\n`);
      await fs.writeFile(join(ws.outside, "t.txt"), `t\nkey: value\n${marker}\n`);
      // The links wait beside the root; each exchange puts one in place of the real entry.
      const top = dirname(ws.root);
      const swap = join(top, "swap");
      await fs.mkdir(swap);
      await sh('ln -s "$1" "$2"', mirror, join(swap, "d"));
      await sh('ln -s "$1" "$2"', join(ws.outside, "t.txt"), join(swap, "t.txt"));
      // A write to t.txt may rename its file over the link while the link is in place; that
      // changes nothing outside, but ends the file's swaps. A second name of the link shows
      // when that happened (one link left), and the link is then put back.
      const hold = join(top, "hold");
      await fs.mkdir(hold);
      await sh('ln -P "$1" "$2"', join(swap, "t.txt"), join(hold, "t.txt"));
      let relinks = 0;
      const keepFileLink = async () => {
        if ((await fs.lstat(join(hold, "t.txt"))).nlink > 1) return;
        relinks++;
        await sh(
          'rm "$2/t.txt" && ln -s "$1" "$2/t.txt" && ln -P "$2/t.txt" "$3/.t.txt.new" && ' +
            'mv -T "$3/.t.txt.new" "$3/t.txt"',
          join(ws.outside, "t.txt"),
          hold,
          swap,
        );
      };
      const outsideBefore = await treeState(ws.outside);
      const topBefore = await namesIn(top);

      helpers.push(startPython(SWAPPER, join(ws.root, "d"), join(swap, "d")));
      helpers.push(startPython(SWAPPER, join(ws.root, "t.txt"), join(swap, "t.txt")));
      await Promise.all(helpers.map((h) => h.ready));

      let attempts = 0;
      let succeeded = 0;
      let leaks = 0;
      let outsideChanges = 0;
      const refusals: Record<string, number> = {};
      const leaked: string[] = [];
      const changed: string[] = [];
      const seen = (what: string, value: unknown) => {
        const text = JSON.stringify(value);
        if (text.includes(marker)) {
          leaks++;
          if (leaked.length < 5) leaked.push(`${what}: ${text.slice(0, 400)}`);
        }
      };
      const call = async (tool: string, input: Record<string, unknown>): Promise<ToolResult> => {
        const result = await ws.call(tool, input);
        attempts++;
        if (result.ok) succeeded++;
        else tally(refusals, `${tool}:${result.error?.code}`);
        seen(`${tool} ${JSON.stringify(input)}`, result);
        return result;
      };

      let outsideLast = outsideBefore;
      const deadline = Date.now() + SWAP_LOOP_MS;
      for (let i = 1; Date.now() < deadline || attempts < MIN_SWAP_ATTEMPTS; i++) {
        await call("read", { path: "d/f.txt" });
        await call("read", { path: "d/sub/g.txt" });
        await call("read", { path: "t.txt" });
        await call("list", { path: "d" });
        await call("list", { path: "d/sub" });
        await call("glob", { pattern: "**/*", path: "d" });
        await call("glob", { pattern: "**/*.txt" });
        await call("grep", { pattern: "key|inside|OUTSIDE", path: "d" });
        await call("grep", { pattern: "key|inside|OUTSIDE" });
        const changes: Artifact[] = [];
        for (
          const [tool, input] of [
            ["write", { path: `d/new-${i}.txt`, content: `new ${i}\n` }],
            ["write", { path: "d/f.txt", content: `f\nkey: value\nwritten ${i}\n` }],
            ["edit", { path: "d/f.txt", old_text: "key: value", new_text: `key: edit ${i}` }],
            ["write", { path: "t.txt", content: `t\nkey: value\nwritten ${i}\n` }],
            ["edit", { path: "t.txt", old_text: "key: value", new_text: `key: edit ${i}` }],
          ] as const
        ) changes.push(...(await call(tool, input)).artifacts);
        if (changes.length > 0) {
          const report = await undoFileChanges(ws.session, changes);
          for (const outcome of report.outcomes) {
            attempts++;
            if (outcome.status === "undone") succeeded++;
            else tally(refusals, `undo:${outcome.status}`);
          }
          seen("undo", report.outcomes);
        }
        await keepFileLink();
        const outsideNow = await treeState(ws.outside);
        if (outsideNow.join("\n") !== outsideLast.join("\n")) {
          outsideChanges++;
          if (changed.length < 5) {
            changed.push(
              outsideNow.filter((line) => !outsideLast.includes(line)).join("; ") || "(removed)",
            );
          }
          outsideLast = outsideNow;
        }
      }

      for (const helper of helpers) helper.stop();
      const [directorySwaps, fileSwaps] = await Promise.all(
        helpers.map((h) => finalReport<{ swaps: number; failures: Record<string, number> }>(h)),
      );
      console.log(
        `路径安全 (${name}) swap race: ${attempts} attempts, ${succeeded} succeeded, ` +
          `${attempts - succeeded} refused ${JSON.stringify(refusals)}; ` +
          `${directorySwaps.swaps} directory swaps, ${fileSwaps.swaps} file swaps ` +
          `(link put back ${relinks} times); ` +
          `escapes: ${leaks} results holding outside bytes, ${outsideChanges} changes outside`,
      );
      // The test means something only if the exchanges happened and the tools ran meanwhile.
      assert.ok(directorySwaps.swaps > 0, `no directory swap: ${JSON.stringify(directorySwaps)}`);
      assert.ok(fileSwaps.swaps > 0, `no file swap: ${JSON.stringify(fileSwaps)}`);
      assert.ok(attempts >= MIN_SWAP_ATTEMPTS);
      assert.ok(succeeded > 0, "every call was refused");
      assert.deepEqual(
        { leaked, changed },
        { leaked: [], changed: [] },
        `${leaks} results held bytes from outside the root; ${outsideChanges} changes outside it`,
      );
      assert.deepEqual(await treeState(ws.outside), outsideBefore);
      assert.deepEqual(await namesIn(top), topBefore);
      assert.deepEqual(await namesIn(swap), ["d", "t.txt"]);
    } finally {
      for (const helper of helpers) helper.stop();
      await Promise.all(helpers.map((h) => h.done.catch(() => {})));
      await ws.cleanup();
    }
  });

  if (inThreadFixtures.includes(fixture)) continue;
  for (const mode of ["rename", "inplace"] as const) {
    const how = mode === "rename"
      ? "replaces the file by rename"
      : "rewrites the file in place (O_TRUNC, write)";
    test(`工具语义 (${name}): while another process ${how}, edit and undo never overwrite a version they did not read, and a lost race is stale_edit or conflict`, async () => {
      const tag = `w${randomBytes(6).toString("hex")}`;
      const version = (n: number) => `version ${n}\nmarker: ${tag}-${n}\nanchor\n`;
      const ws = await workspace(fixture, { "target.txt": version(0) });
      let writer: Helper | null = null;
      try {
        writer = startPython(
          WRITER,
          join(ws.root, "target.txt"),
          mode,
          String(WRITER_SECONDS),
          tag,
        );
        await writer.ready;
        let running = true;
        const ended = () => (running = false);
        writer.done.then(ended, ended);
        let edits = 0;
        let succeeded = 0;
        let stale = 0;
        const otherCodes: Record<string, number> = {};
        // Every other successful edit is undone at once: the writer may have written since.
        const undos: Record<string, number> = {};
        while (running) {
          edits++;
          const result = await ws.call("edit", {
            path: "target.txt",
            old_text: "anchor\n",
            new_text: `anchor\nedit ${edits}\n`,
          });
          if (result.ok) succeeded++;
          else if (result.error?.code === "stale_edit") stale++;
          else tally(otherCodes, result.error?.code ?? "none");
          if (result.ok && edits % 2 === 0) {
            const report = await undoFileChanges(ws.session, result.artifacts);
            for (const outcome of report.outcomes) {
              tally(
                undos,
                outcome.message ? `${outcome.status}: ${outcome.message}` : outcome.status,
              );
            }
          }
        }
        const { counts, examples } = await finalReport<{
          counts: Record<string, number>;
          examples: unknown[];
        }>(writer);
        // The last version is checked here, after the writer stopped and the last edit ended.
        const final = await fs.readFile(join(ws.root, "target.txt"), "utf8");
        const finalHolds = final.startsWith(version(counts.last)) &&
          /^(?:edit \d+\n)*$/.test(final.slice(version(counts.last).length));
        console.log(
          `工具语义 (${name}) ${mode} writer: ${counts.versions} versions, ${counts.checks} checks ` +
            `(${counts.edited} found edited), ${counts.lost} lost, ${counts.unrecognized} unrecognized, ` +
            `${counts.transient} overwritten and put back, ` +
            `${counts.displaced} written into a file moved aside meanwhile and made again, ` +
            `${counts.missing} reads of a missing file; ${edits} edits: ${succeeded} succeeded, ` +
            `${stale} stale_edit, others ${JSON.stringify(otherCodes)}; undo ${
              JSON.stringify(undos)
            }; final version kept: ${finalHolds}`,
        );
        // Both outcomes happened, so the oracle saw edits land and races lost.
        assert.ok(succeeded > 0, "no edit succeeded");
        assert.ok(stale > 0, "no edit returned stale_edit");
        assert.ok(counts.edited > 0, "the writer never found an edit of its version");
        assert.deepEqual(
          { lost: counts.lost, unrecognized: counts.unrecognized, finalHolds },
          { lost: 0, unrecognized: 0, finalHolds: true },
          `writer versions overwritten by edits that did not read them: ${
            JSON.stringify(examples)
          }`,
        );
        // In place, an edit may read the instant between the writer's truncation and its write:
        // the file is empty then, so old_text is truly not there and nothing is written.
        if (mode === "inplace") delete otherCodes.old_text_not_found;
        assert.deepEqual(otherCodes, {}, "edits failed with codes other than stale_edit");
        const undoStatuses = Object.keys(undos).map((key) => key.split(":")[0]);
        // Under load the writer may win every race: undos must have run, not necessarily landed.
        assert.ok(undoStatuses.length > 0, "no edit succeeded to be undone");
        assert.deepEqual(
          undoStatuses.filter((status) => status !== "undone" && status !== "conflict"),
          [],
          `undos ended other than undone or conflict: ${JSON.stringify(undos)}`,
        );
      } finally {
        writer?.stop();
        await writer?.done.catch(() => {});
        await ws.cleanup();
      }
    });
  }
}
