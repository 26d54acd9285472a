/**
 * The npm build's install-size figures: measured from a project's lockfile
 * and files, and the README's sentence compared with them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  checkReadmeInstallSize,
  installSentence,
  type InstallSize,
  measureInstall,
} from "./install_size.ts";

/** An install like the package's: seven packages, 4.6 MB. */
const measured: InstallSize = {
  name: "@openwork/tools",
  packages: 7,
  bytes: 4_620_000,
  parts: [
    { label: "valibot", bytes: 1_910_000 },
    { label: "re2js", bytes: 900_000 },
    { label: "diff", bytes: 640_000 },
    { label: "@openwork/tools", bytes: 520_000 },
    { label: "@valibot/to-json-schema", bytes: 180_000 },
    { label: "ignore", bytes: 130_000 },
    { label: "picomatch", bytes: 90_000 },
  ],
};

/** A README whose install bullet holds `sentence`, wrapped as the formatter wraps it. */
function readmeWith(sentence: string): string {
  const words = sentence.split(" ");
  const lines = [""];
  for (const word of words) {
    if (lines.at(-1)!.length + word.length > 90) lines.push("");
    lines[lines.length - 1] += (lines.at(-1) === "" ? "" : " ") + word;
  }
  return `## Install\n\n- **Install size.** ${lines.join("\n  ")}\n  The build checks it.\n`;
}

test("install size: a README with the sentence written from the measurement agrees", () => {
  const readme = readmeWith(installSentence(measured, "2026-12-04"));
  assert.equal(checkReadmeInstallSize(readme, measured, "2026-12-05"), null);
});

test("install size: sizes within 10% agree; a total further off fails with the sentence to write", () => {
  const sentence = installSentence(measured, "2026-12-04");
  const near = readmeWith(sentence.replace("4.6 MB of files", "4.9 MB of files"));
  assert.equal(checkReadmeInstallSize(near, measured, "2026-12-05"), null);
  const far = readmeWith(sentence.replace("4.6 MB of files", "5.2 MB of files"));
  const problem = checkReadmeInstallSize(far, measured, "2026-12-05");
  assert.match(problem ?? "", /it says 5\.2 MB in node_modules; the install measured 4\.6 MB/);
  assert.ok(problem?.includes(installSentence(measured, "2026-12-05")), problem ?? "");
});

test("install size: a README off by one package fails", () => {
  const readme = readmeWith(
    installSentence(measured, "2026-12-04").replace("brings 7 packages", "brings 8 packages"),
  );
  const problem = checkReadmeInstallSize(readme, measured, "2026-12-05");
  assert.match(problem ?? "", /it says 8 packages; the install brought 7/);
});

test("install size: a part missing, added or beyond its tolerance fails", () => {
  const sentence = installSentence(measured, "2026-12-04");
  const missing = readmeWith(sentence.replace(", picomatch 0.1 MB", ""));
  assert.match(
    checkReadmeInstallSize(missing, measured, "2026-12-05") ?? "",
    /does not list picomatch/,
  );
  const added = readmeWith(sentence.replace("picomatch 0.1 MB", "picomatch 0.1 MB, zod 2.0 MB"));
  assert.match(
    checkReadmeInstallSize(added, measured, "2026-12-05") ?? "",
    /lists zod, which is not installed/,
  );
  // 0.1 MB apart is within a small part's slack; 0.3 MB from 1.9 MB is beyond 10%.
  const slack = readmeWith(sentence.replace("ignore 0.1 MB", "ignore 0.2 MB"));
  assert.equal(checkReadmeInstallSize(slack, measured, "2026-12-05"), null);
  const off = readmeWith(sentence.replace("valibot 1.9 MB", "valibot 2.2 MB"));
  assert.match(
    checkReadmeInstallSize(off, measured, "2026-12-05") ?? "",
    /it says valibot 2\.2 MB; the install measured 1\.9 MB/,
  );
});

test("install size: a README without a sentence the build can read fails", () => {
  const old = "- **Install size.** In a fresh project, `npm install @openwork/tools` brings 105 " +
    "packages: 34 MB on\n  disk (`du -sh node_modules`), 21.8 MB of file bytes.\n";
  const problem = checkReadmeInstallSize(old, measured, "2026-12-05");
  assert.match(problem ?? "", /no install sentence the build can read/);
  assert.ok(problem?.includes(installSentence(measured, "2026-12-05")));
  const twice = readmeWith(installSentence(measured, "2026-12-04")).repeat(2);
  assert.match(checkReadmeInstallSize(twice, measured, "2026-12-05") ?? "", /2 install sentences/);
});

test("install size: a dependency's share is what only it brings; shared packages count in the total", async () => {
  const project = await mkdtemp(join(tmpdir(), "owt-install-size-"));
  try {
    // pkg needs a and b; both need c; only b needs d.
    const packages: Record<string, { bytes: number; dependencies?: Record<string, string> }> = {
      pkg: { bytes: 3000, dependencies: { a: "1", b: "1" } },
      a: { bytes: 1000, dependencies: { c: "1" } },
      b: { bytes: 2000, dependencies: { c: "1", d: "1" } },
      c: { bytes: 400 },
      d: { bytes: 500 },
    };
    const lock: Record<string, unknown> = { "": {} };
    for (const [name, { bytes, dependencies }] of Object.entries(packages)) {
      await mkdir(join(project, "node_modules", name, "lib"), { recursive: true });
      await writeFile(join(project, "node_modules", name, "lib", "index.js"), "x".repeat(bytes));
      lock[`node_modules/${name}`] = dependencies === undefined ? {} : { dependencies };
    }
    await writeFile(join(project, "package-lock.json"), JSON.stringify({ packages: lock }));
    const size = await measureInstall(project, "pkg");
    assert.equal(size.packages, 5);
    assert.equal(size.bytes, 6900);
    assert.deepEqual(size.parts, [
      { label: "pkg", bytes: 3000 },
      { label: "b with the 1 package only it brings", bytes: 2500 },
      { label: "a", bytes: 1000 },
    ]);
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});
