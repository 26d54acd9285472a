/**
 * The closed whitelists: which programs may run without asking, and how each
 * one's words are read (see `arguments.ts`). The models follow the
 * programs shipped by Debian 12 (GNU coreutils 9.1, grep 3.8, findutils
 * 4.9, sed 4.9, diffutils 3.8, file 5.44, ripgrep 13, tree 2.1) and hold
 * only options that neither write, run another program, nor follow symbolic
 * links while recursing; a test runs every option of every model against the
 * installed program and compares how it takes its value.
 *
 * @module
 */
import { NotAdmitted, type OptionSyntax, type ParsedArguments, syntax } from "./arguments.ts";

/** How a read-only program's operands are read. */
export interface ProgramModel {
  /** Option syntax, or `null` for a program whose words are all checked by `read`. */
  readonly syntax: OptionSyntax | null;
  /**
   * The operands and option values that name files the program reads; throws
   * {@link NotAdmitted} for a combination outside the model.
   */
  readonly read: (parsed: ParsedArguments, args: readonly string[]) => readonly string[];
  /**
   * Whether a directory among them is refused: the program reads the entries
   * of a directory it is given, following links there (diff).
   */
  readonly noDirectories?: boolean;
}

/** Every path-valued option's value, then the operands the `operands` function picks. */
function pathsOf(
  parsed: ParsedArguments,
  operands: readonly string[] = parsed.operands,
): string[] {
  const paths: string[] = [];
  for (const option of parsed.options) {
    if (option.model.path && option.value !== undefined) paths.push(option.value);
  }
  return [...paths, ...operands];
}

const allOperandsRead = (parsed: ParsedArguments) => pathsOf(parsed);
const noOperandRead = (parsed: ParsedArguments) => pathsOf(parsed, []);

function model(
  shortOptions: string,
  longOptions: string,
  read: ProgramModel["read"] = allOperandsRead,
): ProgramModel {
  return { syntax: syntax(shortOptions, longOptions), read };
}

/** grep and rg: the first operand is the pattern unless one is given by an option. */
function patternThenPaths(patternOptions: readonly string[]) {
  return (parsed: ParsedArguments) => {
    const patternGiven = parsed.options.some((o) => patternOptions.includes(o.name));
    return pathsOf(parsed, patternGiven ? parsed.operands : parsed.operands.slice(1));
  };
}

function atMostOperands(count: number, why: string) {
  return (parsed: ParsedArguments) => {
    if (parsed.operands.length > count) throw new NotAdmitted(why);
    return pathsOf(parsed);
  };
}

const HASH = model("bctwz", "binary tag text zero quiet status strict warn ignore-missing", (p) => {
  // --check reads a list of names from the file and then reads those files: names it cannot see.
  if (p.options.some((o) => o.name === "-c" || o.name === "--check")) {
    throw new NotAdmitted("a checksum list names files that cannot be checked beforehand");
  }
  return pathsOf(p);
});

// sed is read-only only as `sed -n ADDRESSp [FILE]`: a print of one line or a range.
const SED: ProgramModel = {
  syntax: null,
  read: (_parsed, args) => {
    if (args.length < 2 || args.length > 3 || args[0] !== "-n") {
      throw new NotAdmitted("sed is allowed only as sed -n 'Np' [file]");
    }
    if (!/^(\d+|\$)(,(\d+|\$))?p$/.test(args[1])) {
      throw new NotAdmitted(`the sed script ${JSON.stringify(args[1])} is not a line print`);
    }
    if (args.length === 3 && args[2].startsWith("-")) {
      throw new NotAdmitted("sed takes no option after its script");
    }
    return args.slice(2);
  },
};

// find's expression: predicates that only test or print to standard output. -exec, -execdir,
// -ok, -okdir, -delete, the -fprint family, -files0-from and the link-following -L and -follow
// are absent and so refused. The number is how many words a predicate takes; `true` marks a
// file operand.
type FindPredicate = readonly [arity: number, path?: boolean];
const FIND_PREDICATES: ReadonlyMap<string, FindPredicate> = new Map<string, FindPredicate>([
  ...("-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -maxdepth " +
    "-mindepth -size -mtime -mmin -atime -amin -ctime -cmin -perm -user -group -uid -gid -links " +
    "-inum -printf -regextype -lname -ilname -fstype -used")
    .split(" ").map((p): [string, FindPredicate] => [p, [1]]),
  ...["-newer", "-anewer", "-cnewer", "-samefile"].map((
    p,
  ): [string, FindPredicate] => [p, [1, true]]),
  ...("-empty -print -print0 -prune -not -a -o -and -or -true -false -readable -writable " +
    "-executable -nouser -nogroup -depth -d -mount -xdev -noleaf -daystart -ls -quit -nowarn -warn")
    .split(" ").map((p): [string, FindPredicate] => [p, [0]]),
]);

const FIND: ProgramModel = {
  syntax: null,
  read: (_parsed, args) => {
    let i = 0;
    // Leading options: -H and -P are safe (-H follows links named on the line, which are checked).
    while (i < args.length && /^-(H|P|O[0-3])$/.test(args[i])) i++;
    const paths: string[] = [];
    const isExpression = (a: string) => (a.startsWith("-") && a !== "-") || "()!,".includes(a);
    for (; i < args.length && !isExpression(args[i]); i++) paths.push(args[i]);
    for (; i < args.length; i++) {
      const arg = args[i];
      if (arg === "(" || arg === ")" || arg === "!" || arg === ",") continue;
      const predicate = FIND_PREDICATES.get(arg);
      if (predicate === undefined) {
        throw new NotAdmitted(`find ${arg} is not a read-only predicate`);
      }
      const [arity, path] = predicate;
      if (i + arity >= args.length) throw new NotAdmitted(`find ${arg} needs a value`);
      if (path) paths.push(args[i + 1]);
      i += arity;
    }
    return paths;
  },
};

/**
 * A printf format whose conversions only print: `%%`, or flags, width,
 * precision and a length modifier before one of `diouxXeEfFgGaAcsbqQ`, or a
 * `%(…)T` time without parentheses inside (bash counts nested ones, and on
 * a bad time format prints `%` and reads the rest again as a format, where a
 * hidden `%n` would assign). `%n` and anything unknown fail.
 */
const PRINTF_FORMAT =
  /^(?:[^%]|%%|%[-+ #0']*(?:\*|\d+)?(?:\.(?:\*|\d+)?)?(?:hh|h|ll|l|L|q|j|z|t)?[diouxXeEfFgGaAcsbqQ]|%[-+ #0]*(?:\d+)?(?:\.\d+)?\([^()]*\)T)*$/s;

/**
 * A date string (date -d, touch -d) may name a time-zone file (`TZ="/path"`),
 * which the program then reads wherever it is.
 */
function refuseTimeZoneFiles(parsed: ParsedArguments): void {
  if (parsed.options.some((o) => /tz=/i.test(o.value ?? ""))) {
    throw new NotAdmitted("a date string naming a time zone reads a file");
  }
}

/** Words after the program are text to print, not files: nothing to read. */
const PRINTS: ProgramModel = { syntax: null, read: () => [] };

const DATE = model(
  "d:I::r:@Ru",
  "date= debug iso-8601[=] reference=@ resolution rfc-3339= rfc-email universal utc uct",
  (parsed) => {
    refuseTimeZoneFiles(parsed);
    // An operand other than +FORMAT sets the clock.
    if (parsed.operands.some((o) => !o.startsWith("+")) || parsed.operands.length > 1) {
      throw new NotAdmitted("date with an operand other than one +FORMAT sets the clock");
    }
    return pathsOf(parsed, []);
  },
);

/**
 * tree parses its words itself: a letter that takes a value takes the next
 * word even inside a cluster (`-aL 2`, `-Lo 1 FILE` writes FILE), and the
 * rest of the cluster goes on as options; a long option with a value
 * matches by prefix (`--sortx name` is `--sort name`). So each option must be
 * a word of its own, a long one spelled in full, its value the next word or
 * after `=`. Operands are directories listed, `-` among them (a name to
 * tree). Left out: -o (writes the listing to a file), -R (with -L writes
 * 00Tree.html into every directory at the limit), -l (follows links while
 * recursing), --fromfile and --fflinks (a listing made from names in
 * files), and --gitignore, --gitfile, --info and --infofile (read every
 * .gitignore or .info file found while recursing, through links, the .info
 * comments printed, and $GIT_DIR/info/exclude).
 */
const TREE: ProgramModel = {
  syntax: syntax(
    "acdfghinpqrstuvxACDFJNQSUXH:I:L:P:T:",
    "help version inodes device noreport nolinks dirsfirst filesfirst filelimit= charset= si du " +
      "prune timefmt= ignore-case matchdirs sort= metafirst hintro=@ houtro=@",
    { clusters: false },
  ),
  read: allOperandsRead,
};

/** The read-only whitelist: program bare name → its argument model. */
export const READ_ONLY_PROGRAMS: ReadonlyMap<string, ProgramModel> = new Map([
  [
    "cat",
    model(
      "AbeEnstTuv",
      "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
    ),
  ],
  [
    "head",
    model(
      "c:n:qvz0::1::2::3::4::5::6::7::8::9::",
      "bytes= lines= quiet silent verbose zero-terminated",
    ),
  ],
  [
    "tail",
    model(
      "c:n:fFqs:vz0::1::2::3::4::5::6::7::8::9::",
      "bytes= follow[=] lines= pid= quiet silent retry sleep-interval= verbose zero-terminated " +
        "max-unchanged-stats=",
    ),
  ],
  ["wc", model("clLmw", "bytes chars lines max-line-length words")],
  [
    "ls",
    // -L and --dereference are left out: with -R they follow links out of the tree.
    model(
      "abcdfghiklmnopqrstuvw:xABCDFGHI:NQRST:UXZ1",
      "all almost-all author escape block-size= ignore-backups color[=] directory dired classify[=] " +
        "file-type format= full-time group-directories-first human-readable si " +
        "dereference-command-line dereference-command-line-symlink-to-dir hide= hyperlink[=] " +
        "indicator-style= inode ignore= kibibytes numeric-uid-gid literal hide-control-chars " +
        "show-control-chars quote-name quoting-style= reverse recursive size sort= time= time-style= " +
        "tabsize= width= context zero no-group",
    ),
  ],
  [
    "grep",
    // -R (following links while recursing) and -X are left out.
    model(
      "0123456789A:B:C:D:EFGHILPTUVZabcd:e:f:@hilm:noqrsuvwxyz",
      "after-context= before-context= context= basic-regexp extended-regexp fixed-strings " +
        "perl-regexp regexp= file=@ ignore-case no-ignore-case word-regexp line-regexp null-data " +
        "no-messages invert-match version max-count= byte-offset line-number line-buffered " +
        "with-filename no-filename label= only-matching quiet silent binary-files= text " +
        "directories= devices= recursive include= exclude= exclude-from=@ exclude-dir= " +
        "files-without-match files-with-matches count initial-tab null binary color[=] colour[=]",
      patternThenPaths(["-e", "--regexp", "-f", "--file"]),
    ),
  ],
  [
    "rg",
    // Left out: --pre (runs a program per file), -z (runs decompressors), -L/--follow.
    model(
      "A:B:C:E:M:T:abce:f:@g:hij:lm:nopqr:st:uvwxFHINPSUV0",
      "after-context= auto-hybrid-regex before-context= binary block-buffered byte-offset " +
        "case-sensitive color= colors= column context= context-separator= count count-matches crlf " +
        "debug dfa-size-limit= encoding= engine[=] field-context-separator= field-match-separator= " +
        "file=@ files files-with-matches files-without-match fixed-strings glob= " +
        "glob-case-insensitive heading help hidden iglob= ignore-case ignore-file=@ " +
        "ignore-file-case-insensitive include-zero invert-match json line-buffered line-number " +
        "line-regexp max-columns= max-columns-preview max-count= max-depth= max-filesize= mmap " +
        "multiline multiline-dotall no-config no-filename no-heading no-ignore no-ignore-dot " +
        "no-ignore-exclude no-ignore-files no-ignore-global no-ignore-messages no-ignore-parent " +
        "no-ignore-vcs no-line-number no-messages no-mmap no-pcre2-unicode no-require-git " +
        "no-unicode null null-data one-file-system only-matching passthru path-separator= pcre2 " +
        "pcre2-version pretty quiet regex-size-limit= regexp= replace= smart-case sort= sortr= " +
        "stats text threads= trim type= type-add= type-clear= type-list type-not= unrestricted " +
        "version vimgrep with-filename word-regexp no-column no-context-separator",
      patternThenPaths(["-e", "--regexp", "-f", "--file", "--files", "--type-list"]),
    ),
  ],
  ["find", FIND],
  ["sed", SED],
  ["pwd", model("LP", "", noOperandRead)],
  ["echo", PRINTS],
  [
    "printf",
    {
      syntax: null,
      // bash's printf assigns shell variables two ways: the option -v VAR, and the %n
      // conversion, which stores a count in the variable its argument names (PATH among them).
      read: (_parsed, args) => {
        if (args.length > 0 && args[0].startsWith("-") && args[0] !== "--") {
          throw new NotAdmitted("printf with an option can assign a shell variable");
        }
        const format = args[0] === "--" ? args[1] : args[0];
        if (format !== undefined && !PRINTF_FORMAT.test(format)) {
          throw new NotAdmitted(
            "the printf format has a conversion other than d i o u x X e E f F g G a A c s b q Q",
          );
        }
        return [];
      },
    },
  ],
  ["true", PRINTS],
  ["false", PRINTS],
  ["basename", model("+as:z", "multiple suffix= zero", noOperandRead)],
  ["dirname", model("z", "zero", noOperandRead)],
  [
    "realpath",
    model(
      "eLmPqsz",
      "canonicalize-existing canonicalize-missing logical physical quiet relative-base=@ " +
        "relative-to=@ strip no-symlinks zero",
    ),
  ],
  [
    "readlink",
    model(
      "efmnqsvz",
      "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero",
    ),
  ],
  ["stat", model("c:fLt", "dereference file-system format= printf= terse cached=")],
  [
    "du",
    // -L and --dereference are left out: they follow links out of the tree.
    model(
      "0abd:chHklmsxB:DPSt:X:@",
      "null all apparent-size block-size= bytes total max-depth= human-readable inodes count-links " +
        "dereference-args si summarize one-file-system exclude= exclude-from=@ threshold= time[=] " +
        "time-style= separate-dirs no-dereference",
    ),
  ],
  [
    "df",
    model(
      "aB:iF:hHklmPTt:vx:",
      "all block-size= inodes human-readable si local output[=] portability print-type type= " +
        "exclude-type= total",
    ),
  ],
  [
    "nl",
    model(
      "h:b:f:v:i:pl:s:w:n:d:",
      "body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= " +
        "join-blank-lines= number-format= no-renumber number-separator= starting-line-number= " +
        "number-width=",
    ),
  ],
  [
    "cut",
    model(
      "b:c:d:f:nsz",
      "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= " +
        "zero-terminated",
    ),
  ],
  ["tr", model("+AcCdst", "complement delete squeeze-repeats truncate-set1", noOperandRead)],
  [
    "sort",
    // Left out: -o (writes), -T and --compress-program (temporary files, a program), --files0-from.
    model(
      "bcCdfghik:mMnrRsS:t:uVz",
      "ignore-leading-blanks check[=] dictionary-order debug field-separator= ignore-case " +
        "general-numeric-sort human-numeric-sort ignore-nonprinting key= merge month-sort " +
        "numeric-sort parallel= random-sort random-source=@ reverse sort= stable buffer-size= unique " +
        "version-sort zero-terminated",
    ),
  ],
  [
    "uniq",
    model(
      "0123456789Dcdf:is:uw:z",
      "count repeated all-repeated[=] group[=] ignore-case skip-fields= skip-chars= unique " +
        "check-chars= zero-terminated",
      atMostOperands(1, "uniq with a second operand writes it"),
    ),
  ],
  [
    "diff",
    // Left out: -r (follows links while recursing), -l (runs pr), -N and -S.
    {
      ...model(
        "0123456789abBcC:dD:eEF:hHiI:L:nptTuU:vwW:x:X:@yZ",
        "normal brief report-identical-files context[=] unified[=] ed rcs side-by-side expand-tabs " +
          "initial-tab ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change " +
          "ignore-all-space ignore-blank-lines ignore-matching-lines= text strip-trailing-cr minimal " +
          "speed-large-files suppress-common-lines left-column width= label= exclude= exclude-from=@ " +
          "show-function-line= show-c-function color[=] palette= from-file=@ to-file=@ no-dereference " +
          "ifdef= tabsize= suppress-blank-empty",
      ),
      // diff DIR FILE compares DIR/FILE, and diff DIR DIR every entry, following links in them.
      noDirectories: true,
    },
  ],
  [
    "cmp",
    model("bi:ln:sv", "print-bytes ignore-initial= verbose bytes= quiet silent"),
  ],
  ["comm", model("123z", "check-order nocheck-order output-delimiter= total zero-terminated")],
  ["tac", model("brs:", "before regex separator=")],
  ["rev", model("", "")],
  ["fold", model("bsw:0::1::2::3::4::5::6::7::8::9::", "bytes spaces width=")],
  ["paste", model("d:sz", "delimiters= serial zero-terminated")],
  ["seq", model("+f:s:w", "format= separator= equal-width", noOperandRead)],
  [
    "od",
    model(
      "A:aBbcDdeFfHhIij:LlN:OoS:st:vw::Xx",
      "address-radix= endian= format= output-duplicates read-bytes= skip-bytes= strings[=] " +
        "traditional width[=]",
    ),
  ],
  [
    "file",
    // Left out: -C (writes), -f (names it cannot see), -z/-Z (decompressors), -p (sets times), -m.
    model(
      "be:EF:hikLnNP:r0",
      "brief exclude= exclude-quiet= separator= mime apple extension mime-type mime-encoding " +
        "keep-going dereference no-dereference no-buffer no-pad print0 parameter= raw",
    ),
  ],
  ["md5sum", HASH],
  ["sha1sum", HASH],
  ["sha256sum", HASH],
  ["sha512sum", HASH],
  ["which", model("+a", "")],
  ["whoami", model("", "", atMostOperands(0, "whoami takes no operand"))],
  ["id", model("agnruzGZ", "context group groups name real user zero", noOperandRead)],
  [
    "uname",
    model(
      "asnrvmpio",
      "all kernel-name nodename kernel-release kernel-version machine processor " +
        "hardware-platform operating-system",
      atMostOperands(0, "uname takes no operand"),
    ),
  ],
  ["nproc", model("", "all ignore=", atMostOperands(0, "nproc takes no operand"))],
  ["tree", TREE],
  ["date", DATE],
]);

/** Which words of a file-system gate command are read and which are written. */
export interface GatePaths {
  /** Paths the command reads (copy sources, `touch -r`). */
  readonly read: readonly string[];
  /** Paths the command creates, changes or removes. */
  readonly write: readonly string[];
  /** Of those, the paths it removes or moves away (never the working directory itself). */
  readonly remove: readonly string[];
  /**
   * For cp and mv: the files copied or moved (each must be a regular file, not
   * a link or a directory) and where to; with `intoDirectory` (`-t`) the
   * destination is a directory, otherwise it is one when it exists as one.
   */
  readonly copies?: {
    readonly sources: readonly string[];
    readonly destination: string;
    readonly intoDirectory: boolean;
  };
}

/** A file-system gate program: its syntax and how its words divide into reads and writes. */
export interface GateModel {
  /** Option syntax. */
  readonly syntax: OptionSyntax;
  /** Splits the parsed words into paths read and written. */
  readonly paths: (parsed: ParsedArguments) => GatePaths;
}

/** cp and mv: `-t DIR` (in any spelling) or the last operand is the destination. */
function copyLike(sourcesAreWritten: boolean) {
  return (parsed: ParsedArguments): GatePaths => {
    const target = parsed.options.filter((o) => o.name === "-t" || o.name === "--target-directory");
    if (target.length > 1) throw new NotAdmitted("a copy or move takes one target directory");
    const operands = [...parsed.operands];
    const intoDirectory = target.length === 1;
    const destination = intoDirectory ? target[0].value! : operands.pop();
    if (destination === undefined || operands.length === 0) {
      throw new NotAdmitted("a copy or move needs a source and a destination");
    }
    const copies = { sources: operands, destination, intoDirectory };
    return sourcesAreWritten
      ? { read: [], write: [...operands, destination], remove: operands, copies }
      : { read: operands, write: [destination], remove: [], copies };
  };
}

/** The acceptEdits file-system gate: program → its model. */
export const GATE_PROGRAMS: ReadonlyMap<string, GateModel> = new Map<string, GateModel>([
  [
    "mkdir",
    {
      syntax: syntax("pm:v", "mode= parents verbose"),
      paths: (p) => ({ read: [], write: p.operands, remove: [] }),
    },
  ],
  [
    "touch",
    {
      syntax: syntax("acd:fhmr:@t:", "time= no-create date= reference=@ no-dereference"),
      paths: (p) => {
        refuseTimeZoneFiles(p);
        return {
          read: p.options.filter((o) => o.model.path).map((o) => o.value!),
          write: p.operands,
          remove: [],
        };
      },
    },
  ],
  [
    "cp",
    {
      // Left out: -L/-H (copy what links outside point to), -s (symbolic links), -l, -Z,
      // -S/--suffix (a backup suffix holding `/` puts the backup anywhere), and -r/-R/-a and
      // --parents: a copied tree carries links and names (`.git`) that no check has seen.
      syntax: syntax(
        "bdfnpt:@uvxPT",
        "attributes-only backup[=] force no-clobber no-dereference no-target-directory " +
          "one-file-system preserve[=] no-preserve= reflink[=] remove-destination " +
          "sparse= strip-trailing-slashes target-directory=@ update verbose",
      ),
      paths: copyLike(false),
    },
  ],
  [
    "mv",
    {
      syntax: syntax(
        "bfnt:@uvT",
        "backup[=] force no-clobber strip-trailing-slashes target-directory=@ " +
          "no-target-directory update verbose",
      ),
      paths: copyLike(true),
    },
  ],
  [
    "rmdir",
    {
      syntax: syntax("v", "ignore-fail-on-non-empty verbose"),
      paths: (p) => ({ read: [], write: p.operands, remove: p.operands }),
    },
  ],
]);
