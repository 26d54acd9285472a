/**
 * Session roots given as text a host may get wrong: an empty path names no
 * directory, and is refused rather than read as the current directory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createSession } from "../mod.ts";
import { tempDir } from "./helpers.ts";

test("sessions: an empty workingDirectory or skillRoot is refused, not taken as the current directory", async () => {
  const dir = await tempDir();
  try {
    await assert.rejects(
      createSession({ workingDirectory: "" }),
      (error: Error) =>
        error instanceof TypeError && /workingDirectory is empty/.test(error.message),
    );
    await assert.rejects(
      createSession({ workingDirectory: dir.path, skillRoot: "" }),
      (error: Error) => error instanceof TypeError && /skillRoot is empty/.test(error.message),
    );
  } finally {
    await dir.cleanup();
  }
});
