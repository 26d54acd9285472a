/**
 * The user's global git excludes, found as git and ripgrep find them:
 * `core.excludesFile` from `~/.gitconfig`, else from
 * `$XDG_CONFIG_HOME/git/config` (`~/.config/git/config` when unset), else
 * the default `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`). Config
 * files are read with a small parser, never by running git; `include`
 * directives and relative paths are not followed.
 *
 * @module
 */

/** Reads a small text file by its absolute path; `null` when it cannot be read. */
export type ReadHostText = (path: string) => Promise<string | null>;

/** {@link ReadHostText}, at once. */
export type ReadHostTextSync = (path: string) => string | null;

/** The text of the user's global excludes file, or `null` when there is none. */
export async function readUserExcludes(
  environment: Readonly<Record<string, string>>,
  read: ReadHostText,
): Promise<string | null> {
  const lookup = excludesLookup(environment);
  let step = lookup.next(null);
  while (!step.done) step = lookup.next(await read(step.value));
  return step.value;
}

/**
 * Every file {@link readUserExcludes} reads, found with `read` as it finds
 * them: the config files, and the excludes file they name, or git's default
 * one. A host grants the session read of these (Deno's `--allow-read`).
 *
 * @example
 * ```ts
 * import { userExcludesPaths } from "./git_config.ts";
 *
 * console.log(userExcludesPaths({ HOME: "/home/ann" }, () => null));
 * // ["/home/ann/.gitconfig", "/home/ann/.config/git/config", "/home/ann/.config/git/ignore"]
 * ```
 */
export function userExcludesPaths(
  environment: Readonly<Record<string, string>>,
  read: ReadHostTextSync,
): string[] {
  const paths: string[] = [];
  const lookup = excludesLookup(environment);
  let step = lookup.next(null);
  while (!step.done) {
    paths.push(step.value);
    step = lookup.next(read(step.value));
  }
  return paths;
}

/**
 * The lookup both drivers run: it yields each path it reads, is given back
 * its text (`null` when unreadable), and returns the excludes file's text.
 */
function* excludesLookup(
  environment: Readonly<Record<string, string>>,
): Generator<string, string | null, string | null> {
  const home = environment.HOME || null;
  const configHome = environment.XDG_CONFIG_HOME || (home === null ? null : `${home}/.config`);
  // git reads the XDG file first and ~/.gitconfig after it: the later setting wins.
  const configs = [home && `${home}/.gitconfig`, configHome && `${configHome}/git/config`];
  for (const config of configs) {
    if (config === null) continue;
    const text = yield config;
    const path = text === null ? null : excludesFileOf(text);
    if (path === null) continue;
    const expanded = path === "~" || path.startsWith("~/")
      ? (home === null ? null : home + path.slice(1))
      : path;
    return expanded?.startsWith("/") ? yield expanded : null;
  }
  return configHome === null ? null : yield `${configHome}/git/ignore`;
}

/** A config file's last `core.excludesFile` value, or `null` when it sets none. */
export function excludesFileOf(config: string): string | null {
  let section = "";
  let found: string | null = null;
  for (const raw of config.split("\n")) {
    let line = raw.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (header !== null) {
      const name = header[1].toLowerCase();
      section = header[2] === undefined ? name : `${name}.${header[2]}`;
      line = header[3].trim();
    }
    if (section !== "core") continue;
    const setting = /^excludesfile\s*=(.*)$/i.exec(line);
    if (setting !== null) found = configValue(setting[1]);
  }
  return found;
}

/** A config value: quotes joined, escapes read, a comment (`#`, `;`) outside quotes dropped. */
function configValue(raw: string): string {
  let value = "";
  let quoted = false;
  // Unquoted whitespace at the end is not part of the value; kept until something follows it.
  let space = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === "\\" && i + 1 < raw.length) {
      const next = raw[++i];
      value += space + ({ n: "\n", t: "\t", b: "\b" }[next] ?? next);
      space = "";
    } else if (c === '"') {
      value += space;
      space = "";
      quoted = !quoted;
    } else if (!quoted && (c === "#" || c === ";")) {
      break;
    } else if (!quoted && (c === " " || c === "\t" || c === "\r")) {
      if (value !== "") space += c;
    } else {
      value += space + c;
      space = "";
    }
  }
  return value;
}
