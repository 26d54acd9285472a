/**
 * Argument models: how a program's own option parser splits its words into
 * options, option values and operands, so that the classifier reads a
 * command the way the program will.
 *
 * Most programs use GNU `getopt_long` with argument permutation; a model is
 * written in its terms: a short option string (`"c:n:qv"`: `:` takes a
 * value, `::` an optional one attached only) and long names (`lines=`,
 * `color[=]` for an optional value attached only with `=`). A trailing `@`
 * marks a value that names a file the program reads. One deliberate
 * departure: abbreviated long options (`--ver` for `--verbose`) are refused,
 * since resolving one needs every long name of the real program.
 *
 * A program with a parser of its own that reads clusters differently (tree
 * takes a value from the next word even for a letter inside a cluster) gets
 * a syntax without clusters: each short option must be a word of its own.
 *
 * @module
 */

/** How an option takes its value. */
export type ValueKind = "none" | "required" | "optional";

/** One option of a model. */
export interface OptionModel {
  /** How it takes a value. */
  readonly value: ValueKind;
  /** Whether its value names a file the program reads. */
  readonly path: boolean;
}

/** A program's option syntax. */
export interface OptionSyntax {
  /** Short options by letter. */
  readonly short: ReadonlyMap<string, OptionModel>;
  /** Long options by name (without `--`). */
  readonly long: ReadonlyMap<string, OptionModel>;
  /** Options end at the first operand (getopt's leading `+`, POSIX mode). */
  readonly stopAtOperand: boolean;
  /**
   * Whether short options cluster as getopt's do (`-ab`, `-n5`). Without
   * clusters each short option is a word of its own, a value is the next
   * word, and any longer word starting with one `-` is refused.
   */
  readonly clusters: boolean;
}

/** Options of {@link syntax}. */
export interface SyntaxOptions {
  /** Whether short options cluster as getopt's do; true unless given. */
  readonly clusters?: boolean;
}

/** An option as given, with its value if it took one. */
export interface GivenOption {
  /** `-n` or `--lines`. */
  readonly name: string;
  /** The value, if it took one. */
  readonly value?: string;
  /** The option's model. */
  readonly model: OptionModel;
}

/** Words split as the program's parser splits them. */
export interface ParsedArguments {
  /** The options in order. */
  readonly options: readonly GivenOption[];
  /** The operands in order. */
  readonly operands: readonly string[];
}

/**
 * Builds an option syntax from a getopt short option string and a
 * space-separated list of long names (`name`, `name=`, `name[=]`, each
 * optionally ending in `@` for a path value). Without clusters a short
 * option cannot take an optional value (one is only ever attached).
 */
export function syntax(
  shortOptions: string,
  longOptions = "",
  options: SyntaxOptions = {},
): OptionSyntax {
  const clusters = options.clusters ?? true;
  const short = new Map<string, OptionModel>();
  let stopAtOperand = false;
  let i = 0;
  if (shortOptions.startsWith("+")) {
    stopAtOperand = true;
    i = 1;
  }
  while (i < shortOptions.length) {
    const letter = shortOptions[i++];
    let value: ValueKind = "none";
    if (shortOptions[i] === ":") {
      i++;
      value = "required";
      if (shortOptions[i] === ":") {
        i++;
        value = "optional";
      }
    }
    const path = shortOptions[i] === "@";
    if (path) i++;
    if (!clusters && value === "optional") {
      throw new Error(`-${letter} cannot take an optional value in a syntax without clusters`);
    }
    short.set(letter, { value, path });
  }
  const long = new Map<string, OptionModel>();
  for (let name of longOptions.split(/\s+/)) {
    if (name === "") continue;
    const path = name.endsWith("@");
    if (path) name = name.slice(0, -1);
    let value: ValueKind = "none";
    if (name.endsWith("[=]")) {
      value = "optional";
      name = name.slice(0, -3);
    } else if (name.endsWith("=")) {
      value = "required";
      name = name.slice(0, -1);
    }
    long.set(name, { value, path });
  }
  return { short, long, stopAtOperand, clusters };
}

/** Thrown for words the model does not admit; the message says why. */
export class NotAdmitted extends Error {}

/**
 * Splits `args` as `getopt_long` would with this syntax: options anywhere
 * (unless {@link OptionSyntax.stopAtOperand}), `--` ends them, `-` is an
 * operand, short options cluster, a required value is the rest of the
 * cluster or the next word, an optional value only the rest of the cluster
 * or what follows `=`; in a syntax without clusters a short option's word
 * is that option alone. Throws {@link NotAdmitted} for an option outside the
 * model, an abbreviation, a missing value, a value given to an option that
 * takes none, or a cluster where there are none.
 */
export function parseArguments(
  program: string,
  syntax: OptionSyntax,
  args: readonly string[],
): ParsedArguments {
  const options: GivenOption[] = [];
  const operands: string[] = [];
  let optionsEnded = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (optionsEnded || arg === "-" || !arg.startsWith("-")) {
      operands.push(arg);
      if (syntax.stopAtOperand) optionsEnded = true;
      continue;
    }
    if (arg === "--") {
      optionsEnded = true;
      continue;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const model = syntax.long.get(name);
      if (model === undefined) {
        throw new NotAdmitted(`${program} --${name} is not in its read-only model`);
      }
      const attached = eq === -1 ? undefined : arg.slice(eq + 1);
      if (model.value === "none") {
        if (attached !== undefined) throw new NotAdmitted(`${program} --${name} takes no value`);
        options.push({ name: `--${name}`, model });
      } else if (model.value === "optional" || attached !== undefined) {
        options.push({ name: `--${name}`, value: attached, model });
      } else {
        if (i + 1 >= args.length) throw new NotAdmitted(`${program} --${name} needs a value`);
        options.push({ name: `--${name}`, value: args[++i], model });
      }
      continue;
    }
    if (!syntax.clusters && arg.length > 2) {
      throw new NotAdmitted(
        `${program} reads ${
          JSON.stringify(arg)
        } its own way: give each option as a word of its own`,
      );
    }
    for (let j = 1; j < arg.length; j++) {
      const letter = arg[j];
      const model = syntax.short.get(letter);
      if (model === undefined) {
        throw new NotAdmitted(`${program} -${letter} is not in its read-only model`);
      }
      if (model.value === "none") {
        options.push({ name: `-${letter}`, model });
        continue;
      }
      const rest = arg.slice(j + 1);
      if (rest !== "") options.push({ name: `-${letter}`, value: rest, model });
      else if (model.value === "optional") options.push({ name: `-${letter}`, model });
      else if (i + 1 < args.length) options.push({ name: `-${letter}`, value: args[++i], model });
      else throw new NotAdmitted(`${program} -${letter} needs a value`);
      break;
    }
  }
  return { options, operands };
}
