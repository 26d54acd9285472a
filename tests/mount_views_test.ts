/**
 * Other names the mount table gives a directory (bind mounts of it, above
 * it or below it), which a program looked up outside the working directory
 * must not be found through.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mountViews } from "../src/runtime/mount_views.ts";

const TABLE = [
  "22 1 0:21 / /proc rw,relatime - proc proc rw",
  "1 0 8:1 / / rw - ext4 /dev/sda1 rw",
  "30 1 8:1 /home/ann/repo /media/proj rw - ext4 /dev/sda1 rw",
  "31 1 8:1 /home/ann/repo/tools/bin /opt/bin rw - ext4 /dev/sda1 rw",
  "32 1 8:1 /home/ann /mnt/ann rw - ext4 /dev/sda1 rw",
  "33 1 8:1 /home/bob /mnt/bob rw - ext4 /dev/sda1 rw",
  "34 1 8:2 /home/ann/repo /srv/other-disk rw - ext4 /dev/sda2 rw",
  "35 1 8:1 /home/ann/my\\040repo /media/spaced rw - ext4 /dev/sda1 rw",
].join("\n");

test("mount views: a bind mount of the directory, of one below it and of one above it are its other names; another device's or a sibling's are not", () => {
  assert.deepEqual(mountViews(["/home/ann/repo"], TABLE).sort(), [
    "/media/proj",
    "/mnt/ann/repo",
    "/opt/bin",
  ]);
});

test("mount views: a directory on a mount of its own is placed by that mount's root; octal escapes are read", () => {
  // /media/proj shows /home/ann/repo: a directory below it is found through the other views too.
  assert.deepEqual(mountViews(["/media/proj/tools"], TABLE).sort(), [
    "/home/ann/repo/tools",
    "/mnt/ann/repo/tools",
    "/opt/bin",
  ]);
  assert.deepEqual(mountViews(["/home/ann/my repo"], TABLE).sort(), [
    "/media/spaced",
    "/mnt/ann/my repo",
  ]);
  assert.deepEqual(mountViews(["/home/carol"], TABLE), []);
});

test("mount views: a tree mounted inside the directory is shown where it comes from too (a volume's source)", () => {
  const table = [
    "1 0 8:1 / / rw - ext4 /dev/sda1 rw",
    "40 1 8:1 /opt /home/ann/repo/opt rw - ext4 /dev/sda1 rw",
    "41 1 0:50 / /home/ann/repo/cache rw - tmpfs tmpfs rw",
    "42 1 0:50 / /mnt/cache rw - tmpfs tmpfs rw",
  ].join("\n");
  assert.deepEqual(mountViews(["/home/ann/repo"], table).sort(), ["/mnt/cache", "/opt"]);
});
