/**
 * Checks of the option bags the library's factories take: JavaScript callers
 * and casts get past the types, so a misspelt name or a value of the wrong
 * type is refused at the call with a TypeError that names it, instead of
 * being ignored.
 *
 * @module
 */

/**
 * The names of an options type, as a value the compiler keeps complete: a
 * `Record` over its keys fails to compile when one is added or removed.
 */
export type OptionNames<Options> = Readonly<Record<keyof Options, true>>;

/** How a value is shown in a refusal: short, and one line. */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    const shown = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
    return `the string ${shown}`;
  }
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  return String(value);
}

/** Whether `value` is an object that can hold options (not null, not an array). */
export function isOptionBag(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Checks that `options` is an option bag whose every own key is one of
 * `known`; throws a TypeError that starts with `where` otherwise.
 */
export function checkOptionBag<Options>(
  where: string,
  options: unknown,
  known: OptionNames<Options>,
): asserts options is Partial<Record<keyof Options, unknown>> {
  if (!isOptionBag(options)) {
    throw new TypeError(`${where}: the options must be an object, not ${describeValue(options)}.`);
  }
  const names = Object.keys(known);
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(known, key)) {
      throw new TypeError(`${where}: unknown option ${key}; known: ${names.join(", ")}.`);
    }
  }
}

/** Throws a TypeError that `name` (of `where`) must be `what`, showing the value given. */
export function refuseOption(where: string, name: string, what: string, value: unknown): never {
  throw new TypeError(`${where}: ${name} must be ${what}, not ${describeValue(value)}.`);
}

/** Whether `value` is a finite number that is not negative. */
export function isNonNegativeNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}
