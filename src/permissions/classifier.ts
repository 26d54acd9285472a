/**
 * The read-only classifier and the acceptEdits file-system gate for `bash`.
 *
 * A command is read-only only when every simple command in it is a program
 * of a closed whitelist, named by its bare name, with flags from that
 * program's closed set (compared after quote removal), and nothing else:
 * no expansion, substitution, redirection, assignment or subshell. Anything
 * not understood fails closed. The file-system gate admits mkdir, touch, cp,
 * mv and rmdir whose every operand is literal and resolves inside a
 * writable root, outside protected directories.
 *
 * @module
 */
import type { ToolSessionContext } from "../contract/context.ts";
import type { CommandClassification } from "../contract/effects.ts";
import { parseLiteralCommands } from "./shell_parser.ts";

interface ProgramRule {
  /** Allowed flags, short (`-n`) and long (`--lines`). */
  readonly flags: ReadonlySet<string>;
  /** Flags that take a value (next word, `--x=v`, or the rest of a short cluster). */
  readonly valued: ReadonlySet<string>;
  /** Accepts `-NUM` (head, tail). */
  readonly numeric?: boolean;
  /** Most operands (non-flag words). */
  readonly maxOperands?: number;
  /** A further check on the arguments; returns why it fails, or null. */
  readonly check?: (args: readonly string[]) => string | null;
}

function rule(
  flags: string,
  valued = "",
  extra: Omit<ProgramRule, "flags" | "valued"> = {},
): ProgramRule {
  const list = (s: string) => new Set(s.split(/\s+/).filter((f) => f !== ""));
  const valuedSet = list(valued);
  return { flags: new Set([...list(flags), ...valuedSet]), valued: valuedSet, ...extra };
}

const GREP_FLAGS =
  "-i -y -v -w -x -c -l -L -n -h -H -o -q -s -r -R -a -I -E -F -G -P -z -Z -b -U --ignore-case " +
  "--no-ignore-case --invert-match --word-regexp --line-regexp --count --files-with-matches " +
  "--files-without-match --line-number --no-filename --with-filename --only-matching --quiet --silent " +
  "--no-messages --recursive --dereference-recursive --text --extended-regexp --fixed-strings " +
  "--basic-regexp --perl-regexp --null-data --null --byte-offset --binary --initial-tab -T --line-buffered";
const GREP_VALUED =
  "-e -f -m -A -B -C -d -D --regexp --file --max-count --after-context --before-context " +
  "--context --include --exclude --exclude-dir --exclude-from --color --colour --binary-files --directories " +
  "--devices --label";

const RG_FLAGS =
  "-i -s -S -w -x -v -n -N -l -c -o -F -U -a -L -H -I -P -q -u -0 -p -b -z --ignore-case " +
  "--case-sensitive --smart-case --word-regexp --line-regexp --invert-match --line-number --no-line-number " +
  "--files-with-matches --files-without-match --count --count-matches --only-matching --fixed-strings " +
  "--multiline --multiline-dotall --text --follow --with-filename --no-filename --no-ignore --no-ignore-vcs " +
  "--no-ignore-dot --no-ignore-global --no-ignore-parent --no-ignore-exclude --no-ignore-files --hidden " +
  "--no-hidden --files --type-list --json --no-heading --heading --column --no-column --vimgrep --null " +
  "--quiet --stats --trim --pcre2 --no-messages --byte-offset --crlf --no-config --unrestricted --pretty " +
  "--sort-files --one-file-system --binary --no-binary --passthru --debug --trace --search-zip";
const RG_VALUED =
  "-e -f -g -t -T -m -A -B -C -d -r -M -j --regexp --file --glob --iglob --type --type-not " +
  "--max-count --after-context --before-context --context --max-depth --replace --max-columns --threads " +
  "--sort --sortr --color --colors --engine --encoding -E --max-filesize --path-separator --context-separator " +
  "--field-match-separator --field-context-separator --ignore-file --type-add --type-clear --dfa-size-limit " +
  "--regex-size-limit";

const LS_FLAGS =
  "-a -A -b -B -c -C -d -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q -r -R -s -S -t -u " +
  "-U -v -x -X -Z -1 --all --almost-all --escape --ignore-backups --directory --classify --file-type " +
  "--no-group --human-readable --si --dereference --dereference-command-line " +
  "--dereference-command-line-symlink-to-dir --inode --kibibytes --numeric-uid-gid --literal --hide-control-chars " +
  "--show-control-chars --quote-name --reverse --recursive --size --full-time --group-directories-first --context " +
  "--author";
const LS_VALUED =
  "-I -T -w --block-size --color --format --hide --hyperlink --ignore --indicator-style " +
  "--quoting-style --sort --time --time-style --tabsize --width";

// Sed is read-only only as `sed -n ADDRESSp [FILE]`: a print of lines or a range.
function sedPrintOnly(args: readonly string[]): string | null {
  if (args.length < 2 || args.length > 3 || args[0] !== "-n") {
    return "sed is allowed only as sed -n 'Np' [file]";
  }
  if (!/^(\d+|\$)(,(\d+|\$))?p$/.test(args[1])) {
    return `the sed script ${JSON.stringify(args[1])} is not a line print`;
  }
  if (args.length === 3 && args[2].startsWith("-")) return "sed takes no flag after its script";
  return null;
}

function noOperands(name: string) {
  return (args: readonly string[]) =>
    args.some((a) => !a.startsWith("-")) ? `${name} with an operand can change state` : null;
}

const HASH = rule(
  "-b -t -z -c --binary --text --zero --check --tag --quiet --status --strict --warn --ignore-missing",
);

/** The closed whitelist: program bare name → its argument subset. */
const READ_ONLY: Readonly<Record<string, ProgramRule>> = {
  cat: rule(
    "-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --number --squeeze-blank --show-ends " +
      "--show-tabs --show-nonprinting",
  ),
  head: rule("-q -v -z --quiet --silent --verbose --zero-terminated", "-n -c --lines --bytes", {
    numeric: true,
  }),
  tail: rule(
    "-q -v -z -f -F -r --quiet --silent --verbose --zero-terminated --retry --follow",
    "-n -c -s --lines --bytes --sleep-interval --pid --max-unchanged-stats",
    { numeric: true },
  ),
  wc: rule("-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total"),
  ls: rule(LS_FLAGS, LS_VALUED),
  grep: rule(GREP_FLAGS, GREP_VALUED),
  rg: rule(RG_FLAGS, RG_VALUED, {
    check: (args) =>
      args.some((a) => a === "-z" || a === "--search-zip" || /^-[^-]*z/.test(a))
        ? "rg -z runs decompression programs"
        : null,
  }),
  find: rule("", ""), // checked by findIsReadOnly
  sed: rule("-n", "", { check: sedPrintOnly }),
  pwd: rule("-L -P"),
  echo: rule("-n -e -E"),
  printf: rule(""),
  true: rule(""),
  false: rule(""),
  basename: rule("-a -z --multiple --zero", "-s --suffix"),
  dirname: rule("-z --zero"),
  realpath: rule(
    "-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical --physical " +
      "--quiet --strip --no-symlinks --zero",
    "--relative-to --relative-base",
  ),
  readlink: rule(
    "-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing --canonicalize-missing " +
      "--no-newline --quiet --silent --verbose --zero",
  ),
  stat: rule("-L -f -t --dereference --file-system --terse", "-c --format --printf"),
  du: rule(
    "-a -b -c -h -k -m -s -x -L -P -0 --all --apparent-size --bytes --total --human-readable --si " +
      "--summarize --one-file-system --dereference --no-dereference --null",
    "-d --max-depth --block-size " +
      "--exclude --threshold -t --time-style",
  ),
  df: rule(
    "-a -h -H -i -k -l -P -T --all --human-readable --si --inodes --local --portability --print-type " +
      "--total",
    "-B -t -x --block-size --type --exclude-type --output",
  ),
  nl: rule(
    "-p --no-renumber",
    "-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter " +
      "--footer-numbering --header-numbering --line-increment --join-blank-lines --number-format " +
      "--number-separator --starting-line-number --number-width",
  ),
  cut: rule(
    "-n -s -z --complement --only-delimited --zero-terminated",
    "-b -c -d -f --bytes --characters " +
      "--delimiter --fields --output-delimiter",
  ),
  tr: rule("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1"),
  sort: rule(
    "-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z --ignore-leading-blanks --dictionary-order " +
      "--ignore-case --general-numeric-sort --human-numeric-sort --ignore-nonprinting --month-sort " +
      "--numeric-sort --random-sort --reverse --version-sort --check --merge --stable --unique " +
      "--zero-terminated",
    "-k -t -S --key --field-separator --buffer-size --sort",
  ),
  uniq: rule(
    "-c -d -D -i -u -z --count --repeated --ignore-case --unique --zero-terminated",
    "-f -s -w --skip-fields --skip-chars --check-chars --all-repeated --group",
    { maxOperands: 1 },
  ),
  diff: rule(
    "-q -s -c -u -e -n -y -t -T -r -N -i -E -Z -b -w -B -a --brief --report-identical-files " +
      "--normal --ed --rcs --side-by-side --expand-tabs --initial-tab --recursive --new-file " +
      "--unidirectional-new-file --ignore-case --ignore-tab-expansion --ignore-trailing-space " +
      "--ignore-space-change --ignore-all-space --ignore-blank-lines --text --strip-trailing-cr --minimal " +
      "--speed-large-files --suppress-common-lines --left-column --no-dereference",
    "-C -U -W -x -X -S -I -F --context --unified --width --exclude --exclude-from --starting-file " +
      "--ignore-matching-lines --show-function-line --label --color --palette --line-format --to-file --from-file",
  ),
  cmp: rule("-b -l -s --print-bytes --verbose --quiet --silent", "-i -n --ignore-initial --bytes"),
  comm: rule(
    "-1 -2 -3 -z --check-order --nocheck-order --total --zero-terminated",
    "--output-delimiter",
  ),
  tac: rule("-b -r --before --regex", "-s --separator"),
  rev: rule(""),
  fold: rule("-b -s --bytes --spaces", "-w --width"),
  paste: rule("-s -z --serial --zero-terminated", "-d --delimiters"),
  column: rule(
    "-t -x -n -e -J -L -R --table --fillrows --keep-empty-lines --json",
    "-s -o -c -N -W -H " +
      "--separator --output-separator --output-width --table-columns --table-right --table-hide",
  ),
  seq: rule("-w --equal-width", "-f -s --format --separator"),
  od: rule(
    "-b -c -d -f -i -l -o -s -v -x --output-duplicates --traditional",
    "-A -j -N -t -w " +
      "--address-radix --skip-bytes --read-bytes --format --width --endian",
  ),
  strings: rule(
    "-a -f -w --all --print-file-name --include-all-whitespace",
    "-n -t -e --bytes --radix --encoding",
  ),
  file: rule(
    "-b -i -L -h -z -k -r -s -N -E --brief --mime --mime-type --mime-encoding --dereference " +
      "--no-dereference --uncompress --keep-going --raw --special-files --no-pad --no-buffer",
    "-F -e -P --separator --exclude --parameter",
  ),
  md5sum: HASH,
  sha1sum: HASH,
  sha256sum: HASH,
  sha512sum: HASH,
  which: rule("-a"),
  whoami: rule(""),
  id: rule("-g -G -n -r -u -z --group --groups --name --real --user --zero"),
  uname: rule(
    "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release --kernel-version " +
      "--machine --processor --hardware-platform --operating-system",
  ),
  nproc: rule("--all", "--ignore"),
  date: rule(
    "-u -R -I --utc --universal --rfc-email",
    "-d -r --date --reference --iso-8601 --rfc-3339",
    {
      check: (args) =>
        args.some((a) => !a.startsWith("-") && !a.startsWith("+"))
          ? "date with an operand sets the clock"
          : null,
    },
  ),
  hostname: rule("-f -s -i -I -d --fqdn --short --ip-address --all-ip-addresses --domain", "", {
    check: noOperands("hostname"),
  }),
  tree: rule(
    "-a -d -f -i -l -x -p -s -h -u -g -D -F -q -N -Q -r -t -v -C -n --dirsfirst --noreport " +
      "--du --si --prune",
    "-L -P -I --charset --filelimit --sort",
  ),
};

// find predicates that only test or print to stdout; -exec, -execdir, -ok,
// -okdir, -delete and the -f* writers are absent and so refused.
const FIND_PRIMARIES = new Set(
  ("-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype " +
    "-maxdepth -mindepth -size -empty -newer -anewer -cnewer -mtime -mmin -atime -amin -ctime -cmin -perm -user " +
    "-group -uid -gid -links -inum -samefile -print -print0 -printf -prune -not -a -o -and -or -true -false " +
    "-readable -writable -executable -nouser -nogroup -depth -follow -mount -xdev -noleaf -daystart -ls -quit " +
    "-regextype -lname -ilname -fstype -used -nowarn -warn -H -L -P -O0 -O1 -O2 -O3").split(" "),
);
const FIND_VALUED = new Set(
  ("-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype " +
    "-maxdepth -mindepth -size -newer -anewer -cnewer -mtime -mmin -atime -amin -ctime -cmin -perm -user -group " +
    "-uid -gid -links -inum -samefile -printf -regextype -lname -ilname -fstype -used").split(" "),
);

function findIsReadOnly(args: readonly string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "(" || arg === ")" || arg === "!" || arg === ",") continue;
    if (!arg.startsWith("-")) continue;
    if (!FIND_PRIMARIES.has(arg)) return `find ${arg} is not a read-only predicate`;
    if (FIND_VALUED.has(arg)) i++;
  }
  return null;
}

/** Checks one program's words against its rule; returns why it fails, or null. */
function checkFlags(name: string, rule: ProgramRule, args: readonly string[]): string | null {
  let operands = 0;
  let flagsEnded = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (flagsEnded || arg === "-" || !arg.startsWith("-")) {
      operands++;
      continue;
    }
    if (arg === "--") {
      flagsEnded = true;
      continue;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const flag = eq === -1 ? arg : arg.slice(0, eq);
      if (!rule.flags.has(flag)) return `${name} ${flag} is not in its read-only subset`;
      if (rule.valued.has(flag) && eq === -1) i++;
      continue;
    }
    if (rule.numeric && /^-\d+$/.test(arg)) continue;
    for (let j = 1; j < arg.length; j++) {
      const flag = "-" + arg[j];
      if (!rule.flags.has(flag)) return `${name} ${flag} is not in its read-only subset`;
      if (rule.valued.has(flag)) {
        if (j === arg.length - 1) i++;
        break;
      }
    }
  }
  if (rule.maxOperands !== undefined && operands > rule.maxOperands) {
    return `${name} with more than ${rule.maxOperands} operand(s) may write a file`;
  }
  return rule.check?.(args) ?? null;
}

/** Why a simple command is not read-only, or null when it is. */
export function readOnlyViolation(words: readonly string[]): string | null {
  const [name, ...args] = words;
  if (name.includes("/")) return `${name} is named by a path, not a whitelisted bare name`;
  if (!Object.hasOwn(READ_ONLY, name)) return `${name} is not on the read-only whitelist`;
  if (name === "find") return findIsReadOnly(args);
  return checkFlags(name, READ_ONLY[name], args);
}

const GATE: Readonly<Record<string, ProgramRule>> = {
  mkdir: rule("-p -v --parents --verbose", "-m --mode"),
  touch: rule("-a -c -m --no-create", "-d -t -r --date --reference --time"),
  cp: rule(
    "-r -R -a -p -f -n -v -u -T -L -P -H -d -l -s -x --recursive --archive --force --no-clobber " +
      "--verbose --update --no-target-directory --dereference --no-dereference --preserve --one-file-system",
    "-t --target-directory",
  ),
  mv: rule(
    "-f -n -v -u -T --force --no-clobber --verbose --update --no-target-directory",
    "-t --target-directory",
  ),
  rmdir: rule("-p -v --parents --verbose --ignore-fail-on-non-empty"),
};

/** Literal operands and valued-flag paths of a gate command. */
function gatePaths(rule: ProgramRule, args: readonly string[]): string[] {
  const paths: string[] = [];
  let flagsEnded = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (flagsEnded || !arg.startsWith("-")) paths.push(arg);
    else if (arg === "--") flagsEnded = true;
    else if (
      arg === "-t" || arg === "--target-directory" || arg === "-r" || arg === "--reference"
    ) {
      if (i + 1 < args.length) paths.push(args[++i]);
    } else if (arg.startsWith("--target-directory=")) {
      paths.push(arg.slice("--target-directory=".length));
    } else if (!arg.startsWith("--") && rule.valued.has(arg.slice(0, 2)) && arg.length === 2) i++;
    else if (rule.valued.has(arg) && !arg.includes("=")) i++;
  }
  return paths;
}

/** Why a simple command fails the file-system gate, or null when it passes. */
async function gateViolation(
  words: readonly string[],
  session: ToolSessionContext,
): Promise<string | null> {
  const [name, ...args] = words;
  if (!Object.hasOwn(GATE, name)) return `${name} is not a file-system gate command`;
  const flagProblem = checkFlags(name, GATE[name], args);
  if (flagProblem !== null) return flagProblem;
  const paths = gatePaths(GATE[name], args);
  if (paths.length === 0) return `${name} has no path operand`;
  for (const path of paths) {
    try {
      await session.resolvePath(path, "write", "may_create");
    } catch (error) {
      return `${name} path ${path}: ${(error as Error).message}`;
    }
  }
  return null;
}

/**
 * Classifies a `bash` command: read-only by the closed whitelist, and/or
 * admitted by the acceptEdits file-system gate. Fails closed.
 *
 * @example
 * ```ts
 * import { classifyCommand, createSession } from "@openwork/tools";
 * const session = await createSession({ workingDirectory: Deno.cwd() });
 * console.log((await classifyCommand("ls -la | wc -l", session)).readOnly); // true
 * console.log((await classifyCommand("ls > out", session)).readOnly); // false
 * ```
 */
export async function classifyCommand(
  command: string,
  session: ToolSessionContext,
): Promise<CommandClassification> {
  const parsed = await parseLiteralCommands(command);
  if (!parsed.ok) {
    return {
      readOnly: false,
      fileSystemGate: false,
      reason: `not proven read-only: ${parsed.reason}`,
    };
  }
  let readOnly = true;
  for (const { words } of parsed.commands) {
    const violation = readOnlyViolation(words);
    if (violation === null) continue;
    readOnly = false;
    const gateProblem = await gateViolation(words, session);
    if (gateProblem !== null) {
      return {
        readOnly: false,
        fileSystemGate: false,
        reason: `not proven read-only: ${violation}`,
      };
    }
  }
  return readOnly
    ? {
      readOnly: true,
      fileSystemGate: false,
      reason: "every command is on the read-only whitelist",
    }
    : {
      readOnly: false,
      fileSystemGate: true,
      reason: "file-system commands on literal paths inside the working directory",
    };
}
