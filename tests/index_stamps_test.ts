/**
 * File stamps: the same file read again matches its stamp; any field that
 * moved does not; a stamp taken within RACY_MS of the file's last change is
 * unknown and matches nothing, itself included.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  FINE_RACY_MS,
  RACY_MS,
  sameStamp,
  STAMP_FIELDS,
  writeFineStamp,
  writeStamp,
} from "../src/search/index/stamps.ts";

const old = { dev: 2049, ino: 12, size: 40, mtimeMs: 1_000_500.25, ctimeMs: 1_000_929.934 };
const later = old.ctimeMs + RACY_MS + 1;

/** The stamps of `sources`, each read at `readAt`, in one array. */
function stampsOf(readAt: number, ...sources: (typeof old)[]): Float64Array {
  const stamps = new Float64Array(sources.length * STAMP_FIELDS);
  sources.forEach((source, i) => writeStamp(stamps, i, source, readAt));
  return stamps;
}

test("stamps: a file unchanged since it was read matches its stamp", () => {
  const stamps = stampsOf(later, old, { ...old });
  assert.equal(sameStamp(stamps, 0, stamps, 1), true);
});

test("stamps: a change of device, inode, size, modification or change time does not match", () => {
  for (
    const changed of [
      { ...old, dev: 2050 },
      { ...old, ino: 13 },
      { ...old, size: 41 },
      { ...old, mtimeMs: old.mtimeMs - 1_000 },
      { ...old, ctimeMs: old.ctimeMs + 1_000 },
    ]
  ) {
    const stamps = stampsOf(later + 2_000, old, changed);
    assert.equal(sameStamp(stamps, 0, stamps, 1), false, JSON.stringify(changed));
  }
});

test("stamps: times to the microsecond (Node) and in whole seconds (Deno) make the same stamp", () => {
  const seconds = { ...old, mtimeMs: 1_000_000, ctimeMs: 1_000_000 };
  const stamps = stampsOf(later, old, seconds);
  assert.equal(sameStamp(stamps, 0, stamps, 1), true);
});

test("stamps: a stamp taken within RACY_MS of the file's last change is unknown and matches nothing", () => {
  const racy = stampsOf(old.ctimeMs + RACY_MS - 1, old);
  assert.ok(racy.every(Number.isNaN));
  assert.equal(sameStamp(racy, 0, racy, 0), false);
  const known = stampsOf(later, old);
  assert.equal(sameStamp(racy, 0, known, 0), false);
  // A modification time set ahead of the change time counts as recent too.
  const ahead = stampsOf(later, { ...old, mtimeMs: later });
  assert.ok(ahead.every(Number.isNaN));
});

test("stamps: a fine stamp keeps sub-second times, is racy within FINE_RACY_MS of a sub-second change and within RACY_MS of a whole-second one", () => {
  const fine = (source: typeof old, readAt: number) => {
    const stamps = new Float64Array(STAMP_FIELDS);
    writeFineStamp(stamps, 0, source, readAt);
    return stamps;
  };
  const subsecond = { ...old, mtimeMs: 1_000_250.5, ctimeMs: 1_000_250.5 };
  // Known a little after its change, where whole-second stamps would still be racy.
  const first = fine(subsecond, subsecond.ctimeMs + FINE_RACY_MS + 1);
  assert.equal(sameStamp(first, 0, fine(subsecond, later), 0), true);
  // A change within the same second is told apart (whole-second stamps would not).
  const again = { ...subsecond, mtimeMs: 1_000_700.25, ctimeMs: 1_000_700.25 };
  assert.equal(sameStamp(first, 0, fine(again, later), 0), false);
  assert.ok(fine(subsecond, subsecond.ctimeMs + FINE_RACY_MS - 1).every(Number.isNaN));
  // Whole seconds may be all the file system keeps: racy for RACY_MS.
  const whole = { ...old, mtimeMs: 1_000_000, ctimeMs: 1_000_000 };
  assert.ok(fine(whole, whole.ctimeMs + RACY_MS - 1).every(Number.isNaN));
  assert.ok(!fine(whole, whole.ctimeMs + RACY_MS + 1).some(Number.isNaN));
});
