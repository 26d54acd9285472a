/**
 * The path boundary: checked paths and the resolver. Tools import from here;
 * only backends import `checked_path.ts` to unwrap a path.
 *
 * @module
 */
export { CheckedPath } from "./checked_path.ts";
export type { PathAccess, PathIntent, RootKind } from "./checked_path.ts";
export { checkedChild, existingPrefix, isPlainChild, isWithin, resolvePath } from "./resolver.ts";
export type { EntryKind, PathProbe, SessionRoots } from "./resolver.ts";
export { withPathLock } from "./lock.ts";
