/**
 * Other names the mount table gives a directory: a bind mount of it, of a
 * directory above it or of one below it shows (part of) the same tree at
 * another path, which `realpath` never leads back to. A program looked up
 * outside the working directory (`platform.ts`) must not be found through
 * such a view of it.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { permissionState } from "./checks.ts";

/** One mount of `/proc/self/mountinfo`: its device, the path of its root within it, and where it is. */
interface Mount {
  readonly device: string;
  readonly root: string;
  readonly point: string;
}

/** A mountinfo field with its octal escapes (`\040` for a space) undone. */
function unescaped(field: string): string {
  return field.replace(
    /\\([0-7]{3})/g,
    (_, octal: string) => String.fromCharCode(parseInt(octal, 8)),
  );
}

/** Whether `path` is `directory` or below it. */
function within(path: string, directory: string): boolean {
  return directory === "/" || path === directory || path.startsWith(`${directory}/`);
}

/** `path` below `directory` given again below `base`. */
function rebased(path: string, directory: string, base: string): string {
  const rest = directory === "/" ? path : path.slice(directory.length);
  if (rest === "" || rest === "/") return base;
  return base === "/" ? rest : `${base}${rest.startsWith("/") ? rest : `/${rest}`}`;
}

/**
 * The other paths at which the mount table `mountinfo` (the text of
 * `/proc/self/mountinfo`) shows each of `directories` (real paths), or part
 * of one, or a tree mounted at or below one: for a mount of the same device
 * whose root is the tree's place on it or above, the tree's path through
 * that mount; for one whose root is below it, that mount's own path.
 *
 * @example
 * ```ts
 * import { mountViews } from "./mount_views.ts";
 *
 * const table = [
 *   "1 0 8:1 / / rw - ext4 /dev/sda1 rw",
 *   "2 1 8:1 /home/ann/repo /media/proj rw - ext4 /dev/sda1 rw",
 *   "3 1 8:1 /home/ann/repo/bin /opt/bin rw - ext4 /dev/sda1 rw",
 * ].join("\n");
 * console.log(mountViews(["/home/ann/repo"], table)); // ["/media/proj", "/opt/bin"]
 * ```
 */
export function mountViews(directories: readonly string[], mountinfo: string): string[] {
  const mounts: Mount[] = [];
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    if (fields.length < 5) continue;
    mounts.push({ device: fields[2], root: unescaped(fields[3]), point: unescaped(fields[4]) });
  }
  // Each directory's tree as the device and the path on it; and so is each tree mounted at or
  // below a directory (a volume or a bind mount inside the working directory), whose writes go
  // where that tree is shown elsewhere too.
  const places: { device: string; place: string; holder: Mount | null }[] = [];
  for (const directory of directories) {
    // The mount the directory is on: the deepest mount point above it, the last one mounted there.
    let holder: Mount | null = null;
    for (const mount of mounts) {
      if (!within(directory, mount.point)) continue;
      if (holder === null || mount.point.length >= holder.point.length) holder = mount;
    }
    if (holder !== null) {
      places.push({
        device: holder.device,
        place: rebased(directory, holder.point, holder.root),
        holder,
      });
    }
    for (const mount of mounts) {
      if (mount !== holder && within(mount.point, directory)) {
        places.push({ device: mount.device, place: mount.root, holder: mount });
      }
    }
  }
  const views = new Set<string>();
  for (const { device, place, holder } of places) {
    for (const mount of mounts) {
      if (mount === holder || mount.device !== device) continue;
      if (within(place, mount.root)) views.add(rebased(place, mount.root, mount.point));
      else if (within(mount.root, place)) views.add(mount.point);
    }
  }
  for (const directory of directories) views.delete(directory);
  return [...views];
}

/**
 * {@link mountViews} of this process's mount table; none where it cannot be
 * read (not Linux, or Deno's flags do not grant it: then only the paths
 * themselves are known).
 */
export function mountViewsHere(directories: readonly string[]): string[] {
  const table = "/proc/self/mountinfo";
  const state = permissionState({ name: "read", path: table });
  if (state !== null && state !== "granted") return [];
  try {
    return mountViews(directories, readFileSync(table, "utf8"));
  } catch {
    return [];
  }
}
