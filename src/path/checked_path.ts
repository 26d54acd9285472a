/**
 * The one value a file backend accepts: a path that went through the
 * resolver. Its real path is held where only the path layer and the backends
 * can reach it (`unwrapCheckedPath`), so a tool cannot swap it for a string.
 *
 * @module
 */
import { ToolError } from "../errors.ts";

/** Which access a path was checked for. */
export type PathAccess = "read" | "write";

/** Whether the target must exist, or may be created. */
export type PathIntent = "must_exist" | "may_create";

/** Which root admitted a path. */
export type RootKind = "working_directory" | "skill_root";

// Set only while mintCheckedPath constructs: the constructor refuses every other caller.
let pending: { real: string; root: string } | null = null;
// Set once by the class's static block: the only reader of the private fields.
let readReal: (path: CheckedPath) => string;
let readRoot: (path: CheckedPath) => string;

/**
 * A path that the session's resolver has checked: its real location sits
 * inside an allowed root, and the access it was checked for is allowed there.
 * Its real path is private; only backends can unwrap it.
 */
export class CheckedPath {
  // Private fields, not a side table: walks mint one per entry, and a WeakMap
  // of tens of thousands of keys costs the garbage collector dearly.
  readonly #real: string;
  readonly #root: string;

  static {
    readReal = (path) => path.#real;
    readRoot = (path) => path.#root;
  }

  /** The path as shown to the model: relative to its root, or `.` for the root. */
  readonly display: string;
  /** The access this path was checked for. */
  readonly access: PathAccess;
  /** The root that admitted it. */
  readonly rootKind: RootKind;
  /** Whether the target existed when it was checked. */
  readonly existed: boolean;

  /** Not for direct use: the session's `resolvePath` makes checked paths. */
  constructor(display: string, access: PathAccess, rootKind: RootKind, existed: boolean) {
    if (pending === null) {
      throw new TypeError("CheckedPath values come only from session.resolvePath().");
    }
    this.#real = pending.real;
    this.#root = pending.root;
    this.display = display;
    this.access = access;
    this.rootKind = rootKind;
    this.existed = existed;
    Object.freeze(this);
  }

  /** The display path, so string conversion never leaks the real path. */
  toString(): string {
    return this.display;
  }
}

/** Makes a checked path. Only the resolver calls this. */
export function mintCheckedPath(
  real: string,
  root: string,
  display: string,
  access: PathAccess,
  rootKind: RootKind,
  existed: boolean,
): CheckedPath {
  pending = { real, root };
  try {
    return new CheckedPath(display, access, rootKind, existed);
  } finally {
    pending = null;
  }
}

/** The real absolute path behind a checked path. Only backends call this. */
export function unwrapCheckedPath(path: CheckedPath): string {
  try {
    return readReal(path);
  } catch {
    // Not a CheckedPath (a string, a copy, a look-alike): it has no private field.
    throw new ToolError("invalid_path", "Backends accept only paths checked by the session.");
  }
}

/** The canonical root that admitted a checked path. */
export function rootOfCheckedPath(path: CheckedPath): string {
  try {
    return readRoot(path);
  } catch {
    throw new ToolError("invalid_path", "Backends accept only paths checked by the session.");
  }
}
