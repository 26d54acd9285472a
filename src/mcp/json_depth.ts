/**
 * How deeply a message may nest its arrays and objects. The server reads
 * messages nested up to {@link MAX_JSON_DEPTH} levels; a deeper one is
 * refused before any engine sees it, because the protocol's schemas are
 * checked recursively and a message nested a hundred thousand levels deep
 * would exhaust the stack there. No MCP message needs more: the deepest the
 * tools' arguments, a client's capabilities and the 2026-07-28 envelope go is
 * under ten levels.
 *
 * @module
 */

/** The most levels of arrays and objects a message may nest (the message itself is level 1). */
export const MAX_JSON_DEPTH: number = 64;

/**
 * Whether `value` nests arrays and objects more than `max` levels deep. It
 * walks without recursion and stops at the first value past the bound, so
 * its cost is bounded by the message's size and never by its depth.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== "object" || current === null) continue;
    if (depth > max) return true;
    const members = Array.isArray(current) ? current : Object.values(current);
    for (const member of members) {
      if (typeof member === "object" && member !== null) stack.push([member, depth + 1]);
    }
  }
  return false;
}
