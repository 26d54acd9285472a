/**
 * The environment variables a session takes from its host when the runtime
 * lets it read only named variables (Deno under `--allow-env=<names>`, the
 * flags of `denoPermissionFlags`), not the whole environment.
 *
 * @module
 */

/**
 * The variables a session reads one by one from the host where it cannot
 * read the whole environment, and the names `denoPermissionFlags` grants
 * with `--allow-env`: one list, so the flags grant exactly what the session
 * reads. Each is there for what `bash` and the programs it runs need to
 * behave as in the user's shell:
 *
 * - `PATH` finds `bash` and every program a command names.
 * - `HOME` expands `~` and locates the user's configuration: git's
 *   `~/.gitconfig` (read by the walk for `core.excludesFile`, and by `git`
 *   itself), and the dotfiles of most programs.
 * - `USER`, `LOGNAME`, `SHELL`: who runs, and the shell a program starts
 *   for a subcommand.
 * - `LANG`, `LANGUAGE` and the `LC_*` categories of POSIX and glibc: the
 *   encoding and the language of every program's output. Deno names no
 *   wildcard a session could enumerate, so each category is listed.
 * - `TERM`, `TZ`, `TMPDIR`: how programs format for the terminal, which
 *   time zone dates are in, where they put temporary files.
 * - `XDG_CONFIG_HOME` (the walk reads git's config and ignore files under
 *   it) and the other XDG base directories, where programs keep their
 *   configuration, caches, data and sockets.
 *
 * Left out on purpose: anything that carries a secret or a capability
 * (tokens, `SSH_AUTH_SOCK`, cloud credentials), and anything that changes
 * what a program runs or reads (`GIT_*`, `BASH_ENV`, `LD_*`), which a host
 * that wants them passes itself as `createSession({ environment })`.
 * `TMP` and `TEMP` are left out too: `TMPDIR` is where POSIX programs look.
 *
 * @example
 * ```ts
 * import { HOST_VARIABLES } from "./host_variables.ts";
 *
 * console.log(`--allow-env=${HOST_VARIABLES.join(",")}`); // "--allow-env=PATH,HOME,…"
 * ```
 */
export const HOST_VARIABLES: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "LC_COLLATE",
  "LC_MESSAGES",
  "LC_NUMERIC",
  "LC_TIME",
  "LC_MONETARY",
  "LC_PAPER",
  "LC_NAME",
  "LC_ADDRESS",
  "LC_TELEPHONE",
  "LC_MEASUREMENT",
  "LC_IDENTIFICATION",
  "TERM",
  "TZ",
  "TMPDIR",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "XDG_DATA_HOME",
  "XDG_STATE_HOME",
  "XDG_RUNTIME_DIR",
];
