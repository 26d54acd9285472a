/**
 * The one entry every file tool goes through: turn a model-given path into a
 * {@link CheckedPath}, or refuse it with a clear error.
 *
 * @module
 */
import { isAbsolute, posix } from "node:path";
import { ToolError } from "../errors.ts";
/** What an entry of a file system is; symbolic links are reported, not followed. */
export type EntryKind = "file" | "directory" | "symlink" | "other";

/**
 * What the resolver needs of a file system: its two resolver primitives. A
 * backend's file system provides them; the path layer names no backend.
 */
export interface PathProbe {
  /** The canonical path, following every symbolic link; throws `not_found` when missing. */
  realPath(path: string): Promise<string>;
  /** Metadata without following a final symbolic link. */
  lstat(path: string): Promise<{ readonly kind: EntryKind }>;
}
import {
  type CheckedPath,
  mintCheckedPath,
  rootOfCheckedPath,
  unwrapCheckedPath,
} from "./checked_path.ts";
import type { PathAccess, PathIntent, RootKind } from "./checked_path.ts";

/** Longest accepted path, in UTF-16 code units (PATH_MAX on Linux). */
const MAX_PATH_LENGTH = 4096;
/** Longest accepted path segment, in bytes (NAME_MAX on Linux). */
const MAX_SEGMENT_BYTES = 255;

/** The roots a session allows, as given and as canonicalized at session start. */
export interface SessionRoots {
  /** The working directory, canonical. Readable and writable. */
  readonly workingDirectory: string;
  /** The user skill root, canonical, or `null`. Readable only. */
  readonly skillRoot: string | null;
  /** Directory names inside the working directory that refuse writes. */
  readonly protectedNames: readonly string[];
}

/** Whether `path` is `root` or lies below it, compared by whole segments. */
export function isWithin(root: string, path: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith("/") ? root : root + "/";
  return path.startsWith(prefix);
}

function validateInput(input: string): void {
  if (typeof input !== "string" || input.length === 0) {
    throw new ToolError(
      "invalid_path",
      "The path is empty; give a file path relative to the working directory.",
    );
  }
  if (input.includes("\0")) {
    throw new ToolError("invalid_path", "The path holds a NUL byte; remove it.");
  }
  if (input.length > MAX_PATH_LENGTH) {
    throw new ToolError("invalid_path", `The path is longer than ${MAX_PATH_LENGTH} characters.`);
  }
  const encoder = new TextEncoder();
  for (const segment of input.split("/")) {
    if (encoder.encode(segment).length > MAX_SEGMENT_BYTES) {
      throw new ToolError(
        "invalid_path",
        `A path segment is longer than ${MAX_SEGMENT_BYTES} bytes.`,
      );
    }
  }
}

function displayOf(root: string, real: string, kind: RootKind): string {
  const relative = posix.relative(root, real);
  if (kind === "skill_root") return real;
  return relative === "" ? "." : relative;
}

/** How many levels {@link existingPrefix} tries one by one before it takes longer steps. */
const LEVELS_ONE_BY_ONE = 4;

/**
 * The longest existing prefix of an absolute path, canonical, and the
 * segments after it as written. Throws `not_found` when nothing of it
 * exists, and `invalid_path` when a missing part climbs with `..` or the
 * next segment is a link whose target is missing (it could be made to lead
 * anywhere).
 *
 * A prefix exists whenever a longer one does (the kernel resolves the
 * shorter on the way), so the longest is searched for: a few levels up one
 * by one (a missing path usually misses only its last segments), then in
 * doubling steps and by halving. A path thousands of segments deep takes a
 * few dozen lookups, not thousands.
 */
export async function existingPrefix(
  filesystem: PathProbe,
  joined: string,
  input: string,
): Promise<{ real: string; missing: string[] }> {
  try {
    return { real: await filesystem.realPath(joined), missing: [] };
  } catch (error) {
    if (!(error instanceof ToolError) || error.code !== "not_found") throw error;
  }
  const segments = joined.split("/").filter((s) => s !== "" && s !== ".");
  /** The canonical prefix of `keep` segments, or null when it does not exist. */
  const resolved = async (keep: number): Promise<string | null> => {
    try {
      return await filesystem.realPath("/" + segments.slice(0, keep).join("/"));
    } catch (error) {
      if (error instanceof ToolError && error.code === "not_found") return null;
      throw error;
    }
  };
  // `missingFrom`: the fewest segments known not to exist; `keep`, `real`: the most known to.
  let missingFrom = segments.length;
  let keep = -1;
  let real: string | null = null;
  for (let tried = 0, step = 1; missingFrom > 0; tried++) {
    const next = Math.max(0, missingFrom - step);
    real = await resolved(next);
    if (real !== null) {
      keep = next;
      break;
    }
    missingFrom = next;
    if (tried >= LEVELS_ONE_BY_ONE) step *= 2;
  }
  while (real !== null && missingFrom - keep > 1) {
    const middle = Math.floor((keep + missingFrom) / 2);
    const found = await resolved(middle);
    if (found === null) missingFrom = middle;
    else [keep, real] = [middle, found];
  }
  if (real !== null) {
    const missing = segments.slice(keep);
    if (missing.includes("..")) {
      throw new ToolError(
        "invalid_path",
        `${input} climbs with '..' through a directory that does not exist.`,
      );
    }
    // realPath failed on the next segment, yet lstat may find it: a link whose target is missing.
    const first = await filesystem.lstat(posix.join(real, missing[0])).catch(() => null);
    if (first !== null) {
      throw new ToolError(
        "invalid_path",
        `${input} goes through a symbolic link whose target does not exist; give the real path.`,
      );
    }
    return { real, missing };
  }
  throw new ToolError("not_found", `${input} does not exist.`);
}

/**
 * Resolves `input` for `access`, as the spec's eight steps say: resolve
 * against the working directory, normalize lexically and refuse obvious
 * escapes, take the roots canonicalized at session start, canonicalize the target (or its nearest
 * existing parent), require it inside a root by whole segments, then apply
 * the read-only and protected rules.
 */
export async function resolvePath(
  filesystem: PathProbe,
  roots: SessionRoots,
  input: string,
  access: PathAccess,
  intent: PathIntent,
): Promise<CheckedPath> {
  validateInput(input);
  // Joined without normalizing: `link/..` must go where the kernel goes, not where the text suggests.
  const joined = isAbsolute(input) ? input : `${roots.workingDirectory}/${input}`;
  const lexical = posix.resolve(joined);
  // The roots as canonicalized when the session started, never again: a root path that another
  // process later replaces with a link must not carry the boundary with it.
  const given = [roots.workingDirectory, roots.skillRoot].filter((r): r is string => r !== null);
  if (!given.some((root) => isWithin(root, lexical))) {
    throw new ToolError(
      "path_outside_root",
      `${input} is outside the working directory${roots.skillRoot ? " and the skill root" : ""}.`,
    );
  }
  const { real: prefix, missing } = await existingPrefix(filesystem, joined, input);
  const existed = missing.length === 0;
  if (!existed && intent === "must_exist") {
    throw new ToolError("not_found", `${input} does not exist.`);
  }
  const real = posix.join(prefix, ...missing);
  const { workingDirectory, skillRoot } = roots;
  let kind: RootKind;
  let root: string;
  if (isWithin(workingDirectory, real)) {
    [kind, root] = ["working_directory", workingDirectory];
  } else if (skillRoot !== null && isWithin(skillRoot, real)) {
    [kind, root] = ["skill_root", skillRoot];
  } else {
    // The real path is not named: it would tell what lies outside.
    const through = existed ? "resolves" : "would be created";
    throw new ToolError(
      "path_outside_root",
      `${input} ${through} outside the allowed roots (through a symbolic link, or a root that was ` +
        `moved); symbolic links do not widen the boundary.`,
    );
  }
  if (access === "write") {
    // The skill root is read-only wherever it lies: also where the working directory holds it
    // (a session started in the home directory) or lies inside it.
    if (kind === "skill_root" || (skillRoot !== null && isWithin(skillRoot, real))) {
      throw new ToolError("path_protected", `${input} is in the skill root, which is read-only.`);
    }
    // Every segment of the real path, the root's own among them: a working directory inside
    // `.git/` is inside it too.
    const protectedName = real.split("/").find((s) => roots.protectedNames.includes(s));
    if (protectedName !== undefined) {
      throw new ToolError(
        "path_protected",
        `${input} is inside ${protectedName}/, which refuses writes.`,
      );
    }
  }
  return mintCheckedPath(real, root, displayOf(root, real, kind), access, kind, existed);
}

/**
 * Whether a listed entry can be taken as a child without another round of
 * resolution: one plain segment, and not a symbolic link (walks do not
 * follow them).
 */
export function isPlainChild(name: string, kind: EntryKind): boolean {
  return kind !== "symlink" && name !== "" && name !== "." && name !== ".." && !name.includes("/");
}

/**
 * A checked path for an entry read from a checked directory, without another
 * round of resolution; `null` unless {@link isPlainChild}.
 */
export function checkedChild(
  parent: CheckedPath,
  name: string,
  kind: EntryKind,
): CheckedPath | null {
  if (!isPlainChild(name, kind)) return null;
  // Plain concatenation: the parent is canonical and the name one segment (walks call this per entry).
  const base = unwrapCheckedPath(parent);
  const real = base === "/" ? `/${name}` : `${base}/${name}`;
  const display = parent.display === "." ? name : `${parent.display}/${name}`;
  return mintCheckedPath(
    real,
    rootOfCheckedPath(parent),
    display,
    parent.access,
    parent.rootKind,
    true,
  );
}
