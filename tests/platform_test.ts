/**
 * Session creation on this machine: relative roots taken from the current
 * directory, and the platform check, which refuses a machine the local
 * backends cannot work on before anything runs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir, realpath, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import process from "node:process";
import {
  createMemoryFileSystem,
  createSession,
  type ProcessBackend,
  UnsupportedPlatformError,
} from "../mod.ts";
import { hostPlatformFacts, platformProblem } from "../src/runtime/platform.ts";
import { tempDir } from "./helpers.ts";

test("platform: Windows is refused whatever shell it has, with WSL named", () => {
  for (const bash of ["found", "missing", "unknown", "unused"] as const) {
    const problem = platformProblem({ platform: "win32", bash });
    assert.ok(problem !== null, bash);
    assert.match(problem, /Windows is not supported/);
    assert.match(problem, /WSL/);
  }
});

test("platform: Linux and macOS pass unless bash is known to be missing", () => {
  for (const platform of ["linux", "darwin"]) {
    for (const bash of ["found", "unknown", "unused"] as const) {
      assert.equal(platformProblem({ platform, bash }), null, `${platform} ${bash}`);
    }
    assert.match(
      platformProblem({ platform, bash: "missing" }) ?? "",
      /bash was not found on the PATH/,
    );
  }
});

test("platform: bash is looked for on the PATH the session's processes run with", async () => {
  const dir = await tempDir();
  try {
    const withBash = join(dir.path, "with");
    const without = join(dir.path, "without");
    await mkdir(withBash);
    await mkdir(without);
    await writeFile(join(withBash, "bash"), "#!/bin/sh\n");
    await chmod(join(withBash, "bash"), 0o755);
    await writeFile(join(without, "bash"), "not executable");
    const platform = process.platform;
    assert.deepEqual(hostPlatformFacts({ PATH: `${without}:${withBash}` }, true), {
      platform,
      bash: platform === "win32" ? "unknown" : "found",
    });
    if (platform !== "win32") {
      assert.equal(hostPlatformFacts({ PATH: without }, true).bash, "missing");
      // A relative entry depends on where a process starts: not known to be missing.
      assert.equal(hostPlatformFacts({ PATH: `${without}:bin` }, true).bash, "unknown");
    }
    assert.equal(hostPlatformFacts({ PATH: without }, false).bash, "unused");
  } finally {
    await dir.cleanup();
  }
});

test("platform: createSession refuses a PATH without bash before anything runs", async () => {
  const dir = await tempDir();
  try {
    const filesystem = createMemoryFileSystem();
    filesystem.mkdirp("/repo");
    let looked = false;
    const watched = {
      ...filesystem,
      realPath: (path: string) => {
        looked = true;
        return filesystem.realPath(path);
      },
    };
    await assert.rejects(
      createSession({
        workingDirectory: "/repo",
        filesystem: watched,
        environment: { PATH: dir.path },
      }),
      (error: unknown) => {
        assert.ok(error instanceof UnsupportedPlatformError);
        assert.equal(error.name, "UnsupportedPlatformError");
        assert.equal(error.platform, process.platform);
        assert.match(error.message, /^createSession: /);
        return true;
      },
    );
    assert.equal(looked, false, "the working directory was resolved before the check");
    // A host that brings its own process backend does not need bash here.
    const processes: ProcessBackend = {
      spawn: () => Promise.reject(new Error("not used")),
      shutdown: () => Promise.resolve(),
    } as unknown as ProcessBackend;
    const session = await createSession({
      workingDirectory: "/repo",
      filesystem,
      processes,
      environment: { PATH: dir.path },
    });
    assert.equal(session.workingDirectory, "/repo");
  } finally {
    await dir.cleanup();
  }
});

test("sessions: a relative workingDirectory and skillRoot resolve against the current directory", async () => {
  const dir = await tempDir();
  try {
    await mkdir(join(dir.path, "repo"));
    await mkdir(join(dir.path, "skills"));
    await writeFile(join(dir.path, "repo", "a.txt"), "alpha\n");
    const fromHere = relative(process.cwd(), dir.path);
    assert.ok(!fromHere.startsWith("/"), fromHere);
    const session = await createSession({
      workingDirectory: join(fromHere, "repo"),
      skillRoot: join(fromHere, "skills"),
    });
    assert.equal(session.workingDirectory, join(dir.path, "repo"));
    assert.equal(session.skillRoot, join(dir.path, "skills"));
    const here = await createSession({ workingDirectory: "." });
    assert.equal(here.workingDirectory, await realpath(process.cwd()));
    await assert.rejects(
      createSession({ workingDirectory: join(fromHere, "absent") }),
      /workingDirectory \S*absent \(\/\S*\/absent\) cannot be resolved/,
    );
  } finally {
    await dir.cleanup();
  }
});
