/**
 * The spec's §11 "路径安全" for what a search worker opens
 * (`src/backends/workers/unit.ts`): each file opened where its verified path
 * is, and the answers that came through a link to `/proc/self/fd` relied on
 * only once a check of the link after them passed, one check for a whole
 * batch of files.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs/promises";
import { closeSync, openSync, readdirSync, readlinkSync, readSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import {
  READ_FLAGS,
  runUnit,
  STOP,
  type TreeSpec,
  type UnitAnswer,
  VerifiedDirectories,
  workerWalkIO,
} from "../src/backends/workers/unit.ts";
import { kindOf } from "../src/backends/real_filesystem.ts";
import type { ScanRequest } from "../src/search/scan.ts";
import { Routes } from "../src/backends/descriptor_route.ts";
import {
  answersAt,
  type DescriptorRoute,
  OPEN_RESOLVES_ITSELF,
} from "../src/backends/descriptors.ts";
import { sh, tempDir } from "./helpers.ts";
import { UnitSteps } from "../src/backends/workers/unit.ts";

/** The routes of `candidates`, counting the checks of the route found. */
class CountingRoutes extends Routes {
  checks = 0;
  #wrapped: { route: DescriptorRoute; counting: DescriptorRoute } | null = null;

  override of(fd: number): DescriptorRoute | null {
    const route = super.of(fd);
    if (route === null) return null;
    if (this.#wrapped?.route !== route) {
      const counting = { path: route.path, check: () => (this.checks++, route.check()) };
      this.#wrapped = { route, counting };
    }
    return this.#wrapped.counting;
  }
}

/** A root with d/f0…f{n-1} (each holding its name), a file outside it, and a link to /proc/self/fd. */
async function layout(files: number) {
  const dir = await tempDir();
  const root = join(dir.path, "repo");
  await fs.mkdir(join(root, "d"), { recursive: true });
  for (let i = 0; i < files; i++) await fs.writeFile(join(root, "d", `f${i}`), `f${i}\n`);
  const outside = join(dir.path, "secret.txt");
  await fs.writeFile(outside, "secret\n");
  const link = join(dir.path, "fd");
  await sh('ln -s /proc/self/fd "$1"', link);
  return { ...dir, root, outside, link };
}

/** The text of an open descriptor, closed after. */
function text(fd: number): string {
  const buffer = new Uint8Array(64);
  try {
    return new TextDecoder().decode(buffer.subarray(0, readSync(fd, buffer, 0, 64, 0)));
  } finally {
    closeSync(fd);
  }
}

test("路径安全 (search workers): the files of a batch opened through a link route are relied on after one check of the link, not one each", async () => {
  const dir = await layout(8);
  try {
    const routes = new CountingRoutes([dir.link]);
    const directories = new VerifiedDirectories(routes);
    for (let i = 0; i < 8; i++) {
      const fd = directories.openFile(join(dir.root, "d", `f${i}`), READ_FLAGS);
      assert.notEqual(fd, null);
      assert.equal(text(fd!), `f${i}\n`);
    }
    assert.equal(routes.checks, 0, "no check before the batch is relied on");
    directories.confirm();
    assert.equal(routes.checks, 1);
    // Nothing used through the route since: nothing to check.
    directories.confirm();
    assert.equal(routes.checks, 1);
    directories.release();
  } finally {
    await dir.cleanup();
  }
});

test("路径安全 (search workers): a link route replaced after files were opened through it fails the check that their results wait for", async () => {
  const dir = await layout(2);
  try {
    const directories = new VerifiedDirectories(new Routes([dir.link]));
    const fd = directories.openFile(join(dir.root, "d", "f0"), READ_FLAGS);
    assert.notEqual(fd, null);
    closeSync(fd!);
    // Another link to the same place is still another object: what came through the old one
    // cannot be told apart from what a replacement leading elsewhere would have given.
    await fs.rm(dir.link);
    await sh('ln -s /proc/self/fd "$1"', dir.link);
    assert.throws(() => directories.confirm(), /was replaced or moved/);
    directories.release();
  } finally {
    await dir.cleanup();
  }
});

test("路径安全 (search workers): a file whose place a link to outside took is not opened, and one opened is the object at its path", async () => {
  const dir = await layout(2);
  try {
    const directories = new VerifiedDirectories(new Routes([dir.link]));
    const swapped = join(dir.root, "d", "f1");
    await fs.rm(swapped);
    await sh('ln -s "$1" "$2"', dir.outside, swapped);
    assert.equal(directories.openFile(swapped, READ_FLAGS), null);
    assert.equal(text(directories.openFile(join(dir.root, "d", "f0"), READ_FLAGS)!), "f0\n");
    directories.confirm();
    directories.release();
  } finally {
    await dir.cleanup();
  }
});

test("路径安全 (search workers): a unit that fails sends its error only once the link route its answers came through passed its check", async () => {
  const dir = await layout(1);
  try {
    const unitDir = join(dir.root, "d");
    // Outside: a directory whose name is not to leave the worker.
    const secret = "SECRET-outside-name";
    await fs.mkdir(join(dir.path, "outside", secret), { recursive: true });
    const directories = new VerifiedDirectories(new Routes([dir.link]));
    // The route is verified and pinned with a first use, and relied on.
    closeSync(directories.openFile(join(unitDir, "f0"), READ_FLAGS)!);
    directories.confirm();
    // Another process of this user puts a directory in place of the link, whose entries name
    // every descriptor after the directory the walk opens.
    await sh(
      'rm "$1" && mkdir "$1" && for i in $(seq 0 1023); do ln -s "$2" "$1/$i"; done',
      dir.link,
      unitDir,
    );
    // When the walk lists the directory (by that name, through the replacement), a link to
    // outside is in its place; after, a file is, so that opening the outside name the walk goes
    // on to fails with an error that names it.
    const swap = (script: string) => {
      const done = spawnSync("bash", ["-c", script, "bash", unitDir, join(dir.path, "outside")]);
      assert.equal(done.status, 0, String(done.stderr));
    };
    let listings = 0;
    const list = (path: string) => {
      const first = listings++ === 0;
      if (first) swap('mv "$1" "$1.moved" && ln -s "$2" "$1"');
      const entries = readdirSync(path, { withFileTypes: true }).map((entry) => ({
        name: entry.name,
        kind: kindOf(entry),
      }));
      if (first) swap('rm "$1" && : > "$1"');
      return entries;
    };
    const answers: UnitAnswer[] = [];
    const spec: TreeSpec = {
      id: 1,
      start: ".",
      select: { matching: "no-such-entry" },
      limit: 100,
      flags: new SharedArrayBuffer(8),
      routes: [dir.link],
    };
    runUnit(
      { kind: "unit", spec, unit: { real: unitDir, display: "d", ignore: null } },
      workerWalkIO(list, directories),
      () => {
        throw new Error("no file is scanned");
      },
      (answer) => answers.push(answer),
      () => directories.confirm(),
    );
    directories.release();
    assert.ok(listings > 0, "the walk listed the directory");
    assert.equal(answers.length, 1);
    const sent = JSON.stringify(answers);
    assert.ok(!sent.includes(secret), `a name from outside left the worker: ${sent}`);
    assert.match(sent, /was replaced or moved/);
  } finally {
    await dir.cleanup();
  }
});

test('路径安全 (search workers): an object named like a removed one ("<path> (deleted)") is not taken for the one at the path', async () => {
  const dir = await layout(1);
  try {
    const file = join(dir.root, "d", "f0");
    // A live file literally named "<file> (deleted)", and a link at the file's path leading to it.
    await fs.writeFile(`${file} (deleted)`, "other\n");
    await fs.rm(file);
    await sh('ln -s "$1" "$2"', `${file} (deleted)`, file);
    // The same for the root itself: "<root> (deleted)" is beside the root, outside it.
    const moved = `${dir.root}.moved`;
    await fs.rename(dir.root, moved);
    await fs.mkdir(`${dir.root} (deleted)`);
    await fs.writeFile(join(`${dir.root} (deleted)`, "outside.txt"), "outside\n");
    await sh('ln -s "$1" "$2"', `${dir.root} (deleted)`, dir.root);
    const directories = new VerifiedDirectories(new Routes([dir.link]));
    // Passed over, or refused where the runtime's open does not follow the link at all.
    let root: ReturnType<VerifiedDirectories["directory"]>;
    try {
      root = directories.directory(dir.root);
    } catch {
      root = null;
    }
    assert.equal(root, null);
    assert.equal(directories.openFile(join(dir.root, "outside.txt"), READ_FLAGS), null);
    // The root back in place: its file is still a link, which is not followed.
    await fs.rm(dir.root);
    await fs.rename(moved, dir.root);
    assert.equal(directories.openFile(file, READ_FLAGS), null);
    directories.confirm();
    directories.release();
  } finally {
    await dir.cleanup();
  }
});

test("路径安全 (search workers): a file removed after it was opened is still the one that was at its path", async () => {
  const dir = await layout(1);
  try {
    const file = join(dir.root, "d", "f0");
    const directories = new VerifiedDirectories(new Routes([dir.link]));
    // Verified once, so that the route is found before the file is opened.
    closeSync(directories.openFile(file, READ_FLAGS)!);
    const fd = openSync(file, READ_FLAGS);
    await fs.rm(file);
    assert.equal(answersAt(new Routes([dir.link]).of(fd)!, fd, file), true);
    assert.equal(text(fd), "f0\n");
    directories.confirm();
    directories.release();
  } finally {
    await dir.cleanup();
  }
});

test("路径安全 (search workers): results whose link route failed its check are not sent when the search stops at that moment", async () => {
  const dir = await layout(16);
  try {
    const unitDir = join(dir.root, "d");
    const directories = new VerifiedDirectories(new Routes([dir.link]));
    const flags = new SharedArrayBuffer(8);
    const spec: TreeSpec = {
      id: 1,
      start: ".",
      select: {
        search: {
          pattern: "f",
          caseInsensitive: false,
          mode: "files_with_matches",
          context: 0,
          maxBytes: 1024,
        } satisfies ScanRequest,
        files: undefined,
      },
      limit: 100,
      flags,
      routes: [dir.link],
    };
    let scanned = 0;
    const answers: UnitAnswer[] = [];
    runUnit(
      { kind: "unit", spec, unit: { real: unitDir, display: "d", ignore: null } },
      workerWalkIO((path) =>
        readdirSync(path, { withFileTypes: true }).map((entry) => ({
          name: entry.name,
          kind: kindOf(entry),
        })), directories),
      (path) => {
        const fd = directories.openFile(path, READ_FLAGS);
        assert.notEqual(fd, null);
        closeSync(fd!);
        // With the batch's last file, the link is replaced, and the search stops meanwhile.
        if (++scanned === 16) {
          const done = spawnSync("bash", [
            "-c",
            'rm "$1" && ln -s /proc/self/fd "$1"',
            "bash",
            dir.link,
          ]);
          assert.equal(done.status, 0, String(done.stderr));
          Atomics.store(new Int32Array(flags), STOP, 1);
        }
        return { matches: 1, lines: [] };
      },
      (answer) => answers.push(answer),
      () => directories.confirm(),
    );
    directories.release();
    assert.equal(scanned, 16);
    assert.deepEqual(answers.filter((answer) => "displays" in answer), []);
    assert.match(JSON.stringify(answers), /was replaced or moved/);
  } finally {
    await dir.cleanup();
  }
});

test("路径安全 (search workers): a walk on the calling thread that stops for now after listing a directory through a link route replaced meanwhile sends nothing of that listing", async () => {
  const dir = await layout(0);
  try {
    // a00…a29 fill the first stretch of entries; b is listed last in it, and the walk ends in b.
    await fs.rm(join(dir.root, "d"), { recursive: true });
    for (let i = 0; i < 30; i++) {
      await fs.writeFile(join(dir.root, `a${String(i).padStart(2, "0")}`), "x\n");
    }
    await fs.mkdir(join(dir.root, "b"));
    for (let i = 0; i < 3; i++) await fs.writeFile(join(dir.root, "b", `x${i}`), "inside\n");
    const outside = join(dir.path, "outside");
    await fs.mkdir(outside);
    for (let i = 0; i < 8; i++) await fs.writeFile(join(outside, `OUTSIDE-${i}`), "secret\n");
    // Every descriptor number leads outside through this directory.
    const evil = join(dir.path, "evil");
    await fs.mkdir(evil);
    const swap = (target: string) => {
      const done = spawnSync("bash", [
        "-c",
        'ln -s "$1" "$2.new" && mv -T "$2.new" "$2"',
        "bash",
        target,
        dir.link,
      ]);
      assert.equal(done.status, 0, String(done.stderr));
    };
    const made = spawnSync("bash", [
      "-c",
      'for i in $(seq 0 1023); do ln -s "$1" "$2/$i"; done',
      "bash",
      outside,
      evil,
    ]);
    assert.equal(made.status, 0, String(made.stderr));
    let listings = 0;
    const list = (path: string) => {
      // While b is listed, the link leads to the directory of links to outside; a new link to
      // /proc/self/fd is put back after.
      if (++listings === 2) swap(evil);
      const entries = readdirSync(path, { withFileTypes: true }).map((entry) => ({
        name: entry.name,
        kind: kindOf(entry),
      }));
      if (listings === 2) swap("/proc/self/fd");
      return entries;
    };
    const steps = new UnitSteps(
      {
        id: 0,
        start: ".",
        select: { matching: "b/*" },
        limit: 100,
        flags: new SharedArrayBuffer(8),
        routes: [dir.link],
      },
      { real: dir.root, display: ".", ignore: null },
      new Routes([dir.link]),
      list,
      () => {
        throw new Error("nothing is scanned");
      },
    );
    const sent: string[] = [];
    const failures: string[] = [];
    // The first step's time is up at once: it stops at its first question, after b's listing.
    for (const until of [0, Number.POSITIVE_INFINITY]) {
      try {
        for (const answer of steps.step(until, false).answers) {
          if ("displays" in answer) sent.push(...answer.displays);
        }
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    assert.equal(listings >= 2, true);
    assert.deepEqual(sent.filter((path) => path.includes("OUTSIDE")), []);
    assert.match(failures.join("\n"), /was replaced or moved/);
  } finally {
    await dir.cleanup();
  }
});

test("路径安全 (search workers): each directory a walk lists is listed through its own verified descriptor, closed once listed where the runtime's open resolves paths itself", async () => {
  const dir = await layout(0);
  try {
    const names = ["a", "b", "c"];
    for (const name of names) {
      await fs.mkdir(join(dir.root, name));
      await fs.writeFile(join(dir.root, name, "x"), "x\n");
    }
    const directories = new VerifiedDirectories(new Routes([dir.link]));
    const listed: { path: string; real: string }[] = [];
    const io = workerWalkIO((path) => {
      const previous = listed.at(-1);
      if (previous !== undefined && OPEN_RESOLVES_ITSELF) {
        // Deno: nothing is opened inside a directory's descriptor, so it is not kept open.
        let now: string | null = null;
        try {
          now = readlinkSync(previous.path);
        } catch {
          // Closed, and its number not taken again.
        }
        assert.notEqual(now, previous.real, `${previous.real} is still open`);
      }
      listed.push({ path, real: readlinkSync(path) });
      return readdirSync(path, { withFileTypes: true }).map((entry) => ({
        name: entry.name,
        kind: kindOf(entry),
      }));
    }, directories);
    for (const name of names) {
      assert.deepEqual(io.readDir(join(dir.root, name))?.map((entry) => entry.name), ["x"]);
    }
    directories.confirm();
    directories.release();
    // Each through the route, and each the directory at its path.
    assert.deepEqual(listed.map(({ real }) => real), names.map((name) => join(dir.root, name)));
    for (const { path } of listed) assert.ok(path.startsWith(`${dir.link}/`), path);
  } finally {
    await dir.cleanup();
  }
});
