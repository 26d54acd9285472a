/**
 * The Deno permission flags for a session: every flag the tools need, and
 * nothing else, as the outer guard around the tools' own boundary.
 *
 * @module
 */
import "./permission_query.ts"; // registers Deno's answer to permissionState
import { defaultDescriptorLink } from "../descriptor_link.ts";
import { hostGitExcludesPaths } from "../host_text.ts";
import { hostEnvironment, permissionState } from "../../runtime/checks.ts";
import { HOST_VARIABLES } from "../../runtime/host_variables.ts";
import { indexPermissionPaths } from "./index_permissions.ts";
import { defaultCacheDirectory } from "../../search/index/cache_location.ts";
import { findProgram } from "../../runtime/platform.ts";
import type { SandboxOptions } from "../../runtime/sandbox.ts";
import { realpathSync } from "node:fs";
import { posix } from "node:path";

/** What {@link denoPermissionFlags} needs to know. */
export interface DenoFlagOptions {
  /** The working directory: readable and writable. */
  readonly workingDirectory: string;
  /** The user skill root, readable only, or `null`. */
  readonly skillRoot?: string | null;
  /**
   * The shell the session runs, as `--allow-run` names it (default: the
   * real path of the `bash` found on the `PATH` of `environment` outside
   * the working directory, the skill root and the sandbox's writable
   * directories, with read of that one file; `bash` by name where this
   * process finds none, which the session uses only where no `PATH` entry
   * is relative or in one of those directories).
   */
  readonly shell?: string;
  /**
   * The session's `sandbox` option (`true`, or its options): the flags then
   * let it run `bwrap`, which is looked for outside the directories the
   * sandbox lets commands write (`writable`, besides the working directory).
   */
  readonly sandbox?: boolean | SandboxOptions;
  /**
   * Whether the session runs its calls in PID namespaces of their own
   * (`createSession`'s `processNamespace`, default `true`): the flags then
   * let it run `bwrap`. With `false` (and no `sandbox`) they grant only the
   * shell, and the session ends a call's processes by its sweep.
   */
  readonly processNamespace?: boolean;
  /**
   * Where the file backend's symbolic link to `/proc/self/fd` is (default
   * `/tmp/openwork-tools-fd-<uid>`, with this process's user id). Give the
   * same path to `createDenoFileSystem({ descriptorLink })`; the backend
   * makes the link itself if it is missing.
   */
  readonly descriptorLink?: string;
  /**
   * The environment the session will run in, where the user's git
   * configuration is found (`HOME`, `XDG_CONFIG_HOME`). Default: this
   * process's, as much of it as the runtime lets it read without asking
   * (under Deno without `--allow-env`, none: the flags then grant no git
   * configuration, and the session walks without the user's excludes).
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * The search index's cache directory, granted read and write (default:
   * the one `searchIndex` uses for `environment`,
   * `$XDG_CACHE_HOME/openwork-tools/search-index` else
   * `$HOME/.cache/openwork-tools/search-index`; give the same path as
   * `searchIndex.cacheDirectory` when that is set). `null` grants none: the
   * index then keeps to memory, and `stats().cache.note` says why.
   */
  readonly cacheDirectory?: string | null;
}

/**
 * The flags a host passes to `deno run` for a session of the same user:
 * read of the roots, write of the working directory, run of `bash` and of
 * `bwrap` (each call's PID namespace, and the sandbox) by the real paths
 * this process finds them at on `PATH` outside the working directory, the
 * skill root and the sandbox's writable directories (with read of those
 * files, so that the session finds the same; where this process finds no
 * such program, `bash` by name, and no bwrap), read
 * and write of the file backend's link to `/proc/self/fd`, the user id (the
 * link's default name holds it), read of this package's own sources (the
 * search workers' modules), read and write of the search index's fence
 * home (a directory of `/tmp` named for the working directory: give its
 * real path), read and write of the search index's cache directory (see
 * {@link DenoFlagOptions.cacheDirectory}; left out when its path holds a
 * comma, and then the index keeps to memory), the environment variables of `HOST_VARIABLES` by name (`PATH`,
 * `HOME`, `USER`, `LANG`, `LC_*`, `TERM`, `TZ`, `TMPDIR`, the XDG base
 * directories…: what `bash` needs, no token), read of the user's git
 * configuration that the walk reads for `core.excludesFile`, and
 * `--no-prompt`.
 *
 * The git configuration is found as the session finds it, from
 * `options.environment` (default: this process's): `~/.gitconfig`,
 * `$XDG_CONFIG_HOME/git/config`, and the excludes file the first of them
 * that sets `core.excludesFile` names (else `$XDG_CONFIG_HOME/git/ignore`),
 * each only where this process reads it now as a small regular file: a
 * grant covers all below its path, so a config that names a directory
 * (`core.excludesFile = /` or `~`), or a dotfile that links to one, grants
 * nothing. Deno checks a path as written, so a dotfile that is a link is
 * read where it leads. A path this process cannot tell (no `HOME`, an
 * unreadable config, a missing file) is left out, quietly: the session then
 * walks without those excludes. Nothing here makes Deno ask:
 * what this process is not granted, it does not read.
 *
 * Deno checks read and write flags against a path as written, without
 * following the links on it: a link inside a granted directory leads Deno
 * wherever it points. The file backend therefore verifies every object it
 * opens by asking the kernel where it is, through `/proc/self/fd`; Deno
 * refuses that path short of `--allow-all`, so the backend goes through a
 * link to it, which it makes (through bash) in the place these flags grant,
 * verifies, and checks after each use. Under flags that grant none of this,
 * the backend refuses every file operation, and `createSession` throws,
 * naming what is missing. `--no-prompt` turns what the flags do not grant
 * into that refusal (or into `runtime_permission_denied`) instead of a
 * question on the terminal. Deno refuses, as `runtime_permission_denied`,
 * any access the flags do not cover, even one the tools' own boundary would
 * allow.
 *
 * Throws a TypeError when the default link is wanted and this process
 * cannot tell its user id (Deno without `--allow-sys=uid`): pass
 * `descriptorLink` then; and when a path the flags must name (the working
 * directory, the skill root, the link, this package's sources) or the shell
 * holds a comma: Deno's lists are split at commas, with no escape, so the
 * flag would grant the pieces instead.
 *
 * @example
 * ```ts
 * import { denoPermissionFlags } from "@openwork/tools/deno";
 * const flags = denoPermissionFlags({ workingDirectory: "/srv/repo" });
 * // ["--allow-read=/srv/repo,/tmp/openwork-tools-fd-1000,/tmp/openwork-index-…,<package>/src,
 * //    /home/ann/.gitconfig,…,/usr/bin/bash,/usr/bin/bwrap",
 * //  "--allow-write=/srv/repo,/tmp/openwork-tools-fd-1000,/tmp/openwork-index-…",
 * //  "--allow-env=PATH,HOME,USER,…", "--allow-run=/usr/bin/bash,/usr/bin/bwrap",
 * //  "--allow-sys=uid", "--no-prompt"]
 * ```
 */
export function denoPermissionFlags(options: DenoFlagOptions): string[] {
  const link = options.descriptorLink ?? defaultDescriptorLink();
  if (link === null) {
    throw new TypeError(
      "denoPermissionFlags: the file backend's link to /proc/self/fd is named after the user " +
        "id, which this process cannot read (under Deno it needs --allow-sys=uid); pass " +
        "descriptorLink, and the same path to createDenoFileSystem.",
    );
  }
  if (!link.startsWith("/")) {
    throw new TypeError(`denoPermissionFlags: descriptorLink must be an absolute path: ${link}`);
  }
  const readable = [options.workingDirectory];
  if (options.skillRoot) readable.push(options.skillRoot);
  readable.push(link);
  const writable = [options.workingDirectory, link];
  // The search index: its fence home, and its workers' modules (see `index_permissions.ts`).
  const index = indexPermissionPaths(options.workingDirectory);
  readable.push(...index.read);
  writable.push(...index.write);
  const environment = options.environment ?? hostEnvironment();
  const cache = options.cacheDirectory === undefined
    ? defaultCacheDirectory(environment)
    : options.cacheDirectory;
  // A path with a comma would split the flag's list: such a cache is not granted (memory only).
  if (cache !== null && cache.startsWith("/") && !cache.includes(",")) {
    readable.push(cache);
    writable.push(cache);
  }
  // A path with a comma would split the flag's list: such a file goes unread.
  const git = hostGitExcludesPaths(environment);
  readable.push(...git.filter((path) => path.startsWith("/") && !path.includes(",")));
  // bwrap makes each call's PID namespace (and the sandbox); without it the session runs on.
  const bwrap = options.sandbox || options.processNamespace !== false
    ? trustedHostProgram(options, environment, "bwrap")
    : null;
  // bash by its real path too: granted by name, it would be the first bash on the PATH Deno
  // starts with, a repository's own where that PATH lists its node_modules/.bin first.
  const bash = options.shell === undefined
    ? trustedHostProgram(options, environment, "bash")
    : null;
  const run = [options.shell ?? bash ?? "bash"];
  if (bash !== null) readable.push(bash); // the session finds it by that path
  if (bwrap !== null) {
    run.push(bwrap);
    readable.push(bwrap); // the session finds it by that path (its directory stays unread)
  }
  return [
    `--allow-read=${flagList("read", readable)}`,
    `--allow-write=${flagList("write", writable)}`,
    `--allow-env=${HOST_VARIABLES.join(",")}`,
    `--allow-run=${flagList("run", run)}`,
    "--allow-sys=uid",
    "--no-prompt",
  ];
}

/**
 * The real path of the program `name` (`bash`, `bwrap`) the session may
 * run, found on the `PATH` of `environment` outside every directory that
 * the session's processes may write in or that a repository brings (the
 * working directory, the skill root, the sandbox's writable directories:
 * see `trustedProgram`), or `null` when there is none this process can see.
 * Granted by name, Deno would run whatever `name` comes first on the `PATH`
 * it starts with, which may be a repository's `node_modules/.bin` (as
 * `npm run` puts it first): a program the repository chose would then run
 * on the host, as every call's shell or as the sandbox.
 */
function trustedHostProgram(
  options: DenoFlagOptions,
  environment: Readonly<Record<string, string>>,
  name: "bash" | "bwrap",
): string | null {
  const shunned = [options.workingDirectory];
  if (options.skillRoot) shunned.push(options.skillRoot);
  if (typeof options.sandbox === "object") shunned.push(...(options.sandbox.writable ?? []));
  const canonicals = shunned.map(canonical);
  if (canonicals.includes(null)) return null; // what to keep away from cannot be told
  const found = findProgram(environment, name, canonicals as string[]);
  return typeof found === "object" && !found.path.includes(",") ? found.path : null;
}

/**
 * A directory's real path where this process may tell it, else its absolute
 * path as written; `null` for a relative path where the current directory
 * may not be read to resolve it.
 */
function canonical(path: string): string | null {
  // Asked first: reading what Deno does not grant would prompt on a terminal.
  const state = permissionState({ name: "read", path });
  const dotted = path.split("/").some((segment) => segment === "." || segment === "..");
  if (state !== null && state !== "granted") {
    // `..` is the kernel's to resolve, after the links before it: as text it may name another
    // directory, and nothing tells which here.
    return path.startsWith("/") && !dotted ? posix.resolve(path) : null;
  }
  try {
    // The kernel resolves `..` after the links before it; `posix.resolve` would drop them first.
    return realpathSync(path);
  } catch {
    return dotted ? null : posix.resolve(path);
  }
}

/**
 * A flag's list. Deno splits it at every comma and has no escape for one,
 * so an entry with a comma would grant its pieces instead (a working
 * directory `/srv/ws/a,..` would grant `..`, the directory above the one
 * Deno starts in): such an entry is refused.
 */
function flagList(flag: string, entries: readonly string[]): string {
  for (const entry of entries) {
    if (entry.includes(",") || entry === "") {
      throw new TypeError(
        `denoPermissionFlags: --allow-${flag} cannot name ${JSON.stringify(entry)}: Deno ` +
          "splits the list at commas, with no escape for one, and takes no empty entry; use a " +
          "path without a comma",
      );
    }
  }
  return entries.join(",");
}
