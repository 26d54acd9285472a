/**
 * A corpus for the read-only classifier, checked on real directories with
 * real symbolic links: commands that must never be called read-only (parser
 * differentials, optional arguments, clusters, abbreviations, writes, path
 * escapes, git, published bypasses of other agents' validators, programs
 * that run programs), everyday commands that must be, sessions whose
 * environment changes what bash runs, the acceptEdits gate's target
 * directories, and plan mode end to end: a plan-mode toolset runs none of the
 * must-not commands and the scratch directory is byte for byte unchanged.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import * as fs from "node:fs/promises";
import { join } from "node:path";
import { classifyCommand, createSession, finalizeToolset } from "../mod.ts";
import type { PermissionMode, ToolSessionContext } from "../mod.ts";
import { symlinkOnDisk, tempDir } from "./helpers.ts";

/** The reason the classifier gives for a proven read-only command starts with this. */
const READ_ONLY_REASON = "every command is on the read-only whitelist";

/**
 * Commands that must not be called read-only, by class. Paths are relative to
 * the corpus working directory (see {@link corpusFixture}): `out` and `-` are
 * symbolic links to a directory outside it, `secret-link` a link to a file
 * outside it, `../secret` a file next to it.
 */
export const MUST_NOT: Readonly<Record<string, readonly string[]>> = {
  // Parser differentials: lines another parser reads differently from bash.
  // A backslash at the start of a line, a continuation before `#`, control
  // characters and Unicode separators as blanks or inside words, ANSI-C
  // quoting, substitutions inside double quotes, lookalikes of `-`, comments,
  // case terminators, `|&`, and quotes whose escapes differ inside '…' and "…".
  parserDifferentials: [
    "ls\n\\rm -rf victim",
    "ls\n\\python3 x.py",
    "ls a.txt\\\n#; touch pwned",
    "cat a\\\n; touch pwned",
    "ls\\\n -la",
    "ls\rtouch pwned",
    "ls\r\ntouch pwned",
    "ls a\r; touch pwned",
    "ls\vtouch pwned",
    "ls\ftouch pwned",
    "ls\u0000; touch pwned",
    "cat a\u0000b",
    "ls\u001b; touch pwned",
    "ls\u0007",
    "ls\u007f",
    "ls\u0085touch pwned",
    "echo 'a\u0085b'",
    "ls\u2028touch pwned",
    'echo "\u2028"; ls',
    "ls\u2029touch pwned",
    "ls\u00a0-la",
    "cat\u00a0/etc/passwd",
    "ls\u00a0;\u00a0touch pwned",
    "ls\ufeff; touch pwned",
    "ls \u3000touch pwned",
    "echo $'\\''; touch pwned #'",
    "$'\\x74ouch' pwned",
    "cat $'\\x2e\\x2e/secret'",
    "ls $'\\n'touch pwned",
    'echo "$(touch pwned)"',
    'echo "`touch pwned`"',
    "echo `touch pwned`",
    "cat $(echo a)",
    "echo $((1+1))",
    "sort \u2212o pwned a",
    "find . \u2010delete",
    "find . \uff0ddelete",
    "ls \u2013\u2013dereference out",
    "ls # ; touch pwned",
    "ls #\ntouch pwned",
    "ls -la #comment",
    "ls ;; touch pwned",
    "ls;;touch pwned",
    "ls ;& touch pwned",
    "ls ;;& touch pwned",
    "ls |& sh",
    "cat a |&touch pwned",
    "ls | & touch pwned",
    "ls &| sh",
    "ls; touch pwned",
    "ls && touch pwned",
    "ls || touch pwned",
    "ls | sh",
    "ls\n\ntouch pwned",
    "ls &touch pwned",
    "ls & touch pwned",
    'echo "\\\\"; touch pwned; echo "\\\\"',
    'echo "\\""; touch pwned; echo "\\""',
    "echo '\\'; touch pwned; echo '\\'",
    'echo x\\"; touch pwned; echo \\"',
    "echo 'unterminated",
    'echo "unterminated',
    "cat a\\",
    "ls > pwned",
    ">pwned ls",
    "ls >| pwned",
    "ls &> pwned",
    "ls >&pwned",
    "cat a 1<>pwned",
    "cat <<<x",
    "cat <<EOF\nx\nEOF",
    "ls 2>pwned",
    "cat < a > pwned",
    "ls >>pwned",
    "(touch pwned)",
    "{ touch pwned; }",
    "ls $(touch pwned)",
    "cat <(touch pwned)",
    "echo >(touch pwned)",
    "cat *",
    "ls ?",
    "ls [ab]",
    "cat src/*.ts",
    "PATH=. ls",
    "BASH_ENV=pwned.sh ls",
    "LD_PRELOAD=./x.so cat a",
    "IFS=/ cat a",
    "a=1",
    "if true; then touch pwned; fi",
    "while true; do touch pwned; done",
    "until false; do ls; done",
    "for f in a; do touch pwned; done",
    "case a in a) touch pwned;; esac",
    "! touch pwned",
    "function f { ls; }",
    "f() { ls; }; f",
    "coproc touch pwned",
    "[[ -e a ]] && touch pwned",
    "[ -e a ]",
    "select x in a; do ls; done",
  ],

  // Builtins that change what later words of the same line run.
  shellState: [
    "hash -p ./evil ls; ls",
    "enable -n echo; echo x",
    "alias ls='touch pwned'\nls",
    "trap 'touch pwned' EXIT; ls",
    "set -o xtrace; ls",
    "shopt -s expand_aliases",
    "export PATH=.; ls",
    "unset PATH; ls",
    "printf -v PATH .",
    "printf -v IFS x; ls",
    "declare -x PATH=.",
    "readonly x",
    "umask 000",
    "ulimit -c 0",
    "read x",
    "exit",
  ],

  // Options with an optional argument take it only attached (`--group=x`,
  // `-Ix`): the next word is an operand, read or written.
  optionalArguments: [
    "uniq --group a.txt pwned",
    "uniq --all-repeated a.txt pwned",
    "uniq --group=both a pwned",
    "uniq -D a.txt pwned",
    "uniq -c a.txt pwned",
    "uniq a.txt \\r",
    "uniq a.txt \r",
    "date --iso-8601 --set=@0",
    "date -I 0101000020",
    "date --rfc-3339=seconds 0101000020",
    "ls --color /etc",
    "ls --classify ..",
    "ls --hyperlink /",
    "diff --context ../secret a",
    "diff --unified /etc/passwd a",
    "diff --color /etc/passwd a",
    "du --time /etc",
    "od -w /etc/passwd",
    "od --strings /etc/passwd",
    "sort --check /etc/passwd",
    "tail --follow /etc/passwd",
    "grep --color always /etc/passwd",
  ],

  // Clustered short options hiding a letter that takes a value (or a dropped letter). tree
  // takes each letter's value from the next word, even inside a cluster: no cluster at all.
  clusters: [
    "tree -Lo 1 pwned",
    "tree -aL 2",
    "tree -La 2",
    "tree -L2",
    "tree -ao pwned",
    "tree -ad",
    "tree -da src",
    "tree -aR -L 1",
    "tree -Pl x",
    "sort -mo pwned a",
    "sort -To",
    "sort -uo pwned a",
    "sort -no pwned a",
    "sort -bo pwned a",
    "sort -mT . a",
    "grep -rnf/etc/passwd x .",
    "grep -rf /etc/shadow x",
    "grep -rnR x .",
    "date -ur/etc/passwd",
    "date -Rr ../secret",
    "du -shX/etc/passwd .",
    "du -shL .",
    "diff -uX/etc/passwd a b",
    "diff -rq a b",
    "rg -nf/etc/passwd",
    "rg -iz pattern",
    "rg -nL x",
    "ls -laL out",
    "ls -lRL",
    "file -bC",
    "file -zb a",
    "sed -ni 1p a",
    "sed -ne 1p -e 'w pwned' a",
    "head -qn1 /etc/passwd",
    "tail -qn1 ../secret",
    "cut -sd: -f1 /etc/passwd",
    "wc -lc out/secret.txt",
  ],

  // Abbreviated long options: getopt_long would expand them; the model must not guess.
  abbreviations: [
    "ls --al",
    "ls --all --recur",
    "ls --deref out",
    "sort --out=pwned a",
    "sort --outp pwned a",
    "sort --comp=./evil a",
    "sort --compress=sh a",
    "sort --temp=. a",
    "uniq --gr a pwned",
    "grep --recur x .",
    "grep --deref x .",
    "date --se=@0",
    "du --deref .",
    "diff --from=/etc/passwd a",
    "rg --pr=sh x",
    "rg --search-z x",
    "sed --in=bak -n 1p a",
    "ls --hyper=always ..",
    // tree matches a long option with a value by its prefix: `--sortx name` is `--sort name`.
    "tree --so name",
    "tree --sortx name",
    "tree --charsetx UTF-8",
    "tree --filelimitx 1",
    "tree --dirs",
  ],

  // Programs that write, delete, run a program or set the clock through their own options.
  writes: [
    "tee pwned",
    "ls | tee pwned",
    "cat a | tee -a pwned",
    "sort -o pwned a",
    "sort --output=pwned a",
    "sort -T . a",
    "sort --files0-from=a",
    "uniq a pwned",
    "uniq -u a pwned",
    "sed -i s/a/b/ a",
    "sed -i.bak -n 1p a",
    "sed --in-place -n 1p a",
    "sed -n '1w pwned' a",
    "sed 's/a/b/w pwned' a",
    "sed -n '1p;w pwned' a",
    "sed -n 1W pwned a",
    "sed -n 1e a",
    "sed -n '1e touch pwned' a",
    "sed 's/x/y/e' a",
    "sed -e 's/x/y/e' a",
    "sed --expression='1e touch pwned' a",
    "sed -f script.sed a",
    "sed -n -s 1p a",
    "find . -fprint pwned",
    "find . -fprint0 pwned",
    "find . -fprintf pwned %p",
    "find . -fls pwned",
    "find . -delete",
    "find victim -delete",
    "find . -name x -delete",
    "find . -exec touch pwned ';'",
    "find . -exec rm -rf victim \\;",
    "find . -execdir touch pwned ';'",
    "find . -ok touch pwned ';'",
    "find . -okdir touch pwned ';'",
    "find . -exec touch pwned +",
    "find . '-exec' touch pwned ';'",
    'find . "-del""ete"',
    "find . -files0-from a",
    "find -L . -name x",
    "find . -follow",
    "rg --pre sh x",
    "rg --pre=sh x",
    "rg -z x",
    "rg --search-zip x",
    "rg -L x",
    "rg --follow x",
    "rg --pre-glob='*' --pre=sh x",
    "rg --hostname-bin=./x x",
    "grep -R x .",
    "grep --dereference-recursive x .",
    "du -L .",
    "du --dereference .",
    "ls -L out",
    "ls --dereference out",
    "date -s @0",
    "date --set=@0",
    "date 0101000020",
    "date -u 0101000020",
    "date +%s 0101000020",
    "hostname pwned",
    "hostname -F a",
    "hostname",
    "tree -o pwned .",
    "tree -o pwned",
    "tree . -o pwned",
    "tree -L 1 -o pwned",
    "tree -R -L 1",
    "tree -L 1 -R",
    "tree -H x -R -L 1",
    "tree -l",
    "tree -l -L 2",
    "tree --fromfile a",
    "tree --fromfile --fflinks a",
    "tree --gitignore",
    "tree --gitfile=.git/config",
    "tree --info",
    "tree --infofile a",
    "tree --noreport=x",
    "file -C -m a",
    "file -f a",
    "md5sum -c a",
    "touch pwned",
    "rm -rf victim",
    "mkdir pwned",
    "cp a pwned",
    "mv a pwned",
    "ln -s a pwned",
    "chmod 000 a",
    "truncate -s 0 a",
    "dd if=a of=pwned",
    "install a pwned",
    "rmdir victim",
    "shred a",
    "mkfifo pwned",
    "split a",
    "csplit a 1",
  ],

  // Files outside the roots: absolute paths, `..`, `~`, and symbolic links out.
  pathEscapes: [
    "cat /etc/passwd",
    "cat //etc/passwd",
    "cat \\/etc/passwd",
    'cat "/etc/passwd"',
    "ls /",
    "ls -la /",
    "ls /tmp",
    "ls ..",
    "ls ../",
    "ls -",
    "ls -- -",
    "ls -la -",
    "du -s -",
    "tree -",
    "tree -- -",
    "tree -L 2 -",
    "tree ..",
    "tree /",
    "tree -a /tmp",
    "tree out",
    "tree -L 2 out",
    "tree out/..",
    "tree src ..",
    "tree . -L 1 ..",
    "tree -d ~",
    "tree secret-link",
    "tree -H x --hintro /etc/passwd",
    "tree -H x --hintro=../secret",
    "tree -H x --houtro secret-link",
    "tree -H x --houtro=out/secret.txt",
    "ls -d ..",
    "ls src/../..",
    "cat ../secret",
    "cat ./../secret",
    "cat src/../../secret",
    "head -n1 ~/.ssh/id_rsa",
    "ls ~",
    "cat ~root/x",
    "grep -f /etc/shadow x",
    "grep x /etc/passwd",
    "grep -r x /",
    "grep -rn x ..",
    "grep -e x -- /etc/hosts",
    "rg pattern /",
    "rg -f /etc/passwd x",
    "rg --ignore-file=/etc/passwd x",
    "rg --file=../secret x",
    "rg -f=../secret x",
    "date -r /etc/passwd",
    "date --reference=../secret",
    "find / -name x",
    "find .. -name x",
    "find . -newer /etc/passwd",
    "find . -samefile /etc/passwd",
    "find . -anewer ../secret",
    "diff a /etc/passwd",
    "diff --from-file=/etc/passwd a",
    "diff --to-file ../secret a",
    "cmp a /etc/passwd",
    "comm a /etc/passwd",
    "paste a /etc/passwd",
    "cat out/x",
    "cat out/secret.txt",
    "ls out",
    "ls -la out/",
    "grep -r secret out",
    "rg secret out",
    "find out -type f",
    "du -a out",
    "wc -l out/secret.txt",
    "head secret-link",
    "cat secret-link",
    "grep -f secret-link a",
    "diff a secret-link",
    "date -r secret-link",
    "find . -newer secret-link",
    "tail -n1 /var/log/syslog",
    "cat /proc/self/environ",
    "od -c /etc/passwd",
    "sha256sum /etc/shadow",
    "file /etc/passwd",
    "nl ../secret",
    "tac /etc/passwd",
    "rev ../secret",
    "stat -c %s out/secret.txt",
    "realpath --relative-to=/ a",
    "du -sh /",
    "sort --random-source=/dev/urandom a",
    "du --exclude-from=/etc/passwd .",
    "cd .. && cat secret",
    "cd out && cat secret.txt",
    "cd / && cat etc/passwd",
    "sed -n 1p /etc/passwd",
    "sed -n 1p ../secret",
    "cut -d: -f1 /etc/passwd",
    "sort /etc/passwd",
    "uniq /etc/passwd",
    "fold ../secret",
    "cat out/../secret",
    "ls out/..",
    "find out/.. -name secret",
    "wc --files0-from=a",
    "du --files0-from=a",
    // diff opens DIR/NAME for a directory operand: `d/a` and `./secret-link` are links out,
    // though every operand on the line is inside.
    "diff . d",
    "diff d .",
    "diff -q . d",
    "diff d a",
    "diff a d",
    "diff --from-file=d a",
    "diff -u --to-file=. d",
  ],

  // git reads configuration that runs programs (pagers, fsmonitor, hooks, upload-pack).
  git: [
    "git status",
    "git log",
    "git -c core.pager=evil log",
    "git -c core.fsmonitor=evil status",
    "git config core.pager",
    "git config --global core.editor evil",
    "git diff --output=pwned",
    "git ls-remote --upload-pack='touch pwned' origin",
    "git --no-pager log",
    "git show HEAD",
    "git grep x",
    "git blame a",
    "git branch",
    "git rev-parse HEAD",
    "git fetch",
    "git -C .. status",
    "git --git-dir=x status",
  ],

  // Published bypasses of other agents' read-only validators. Claude Code
  // CVE-2025-54795 (echo and quotes; the literal payload `echo "\"; …; echo \""`
  // is one echo word in bash and is checked as such below), CVE-2025-58764 (rg
  // --pre), CVE-2025-64755 (sed e/w and flags), CVE-2025-66032 (man --html,
  // sort --compress-program, history, git --upload-pack, xargs, $IFS,
  // ${var@P}, brace expansion, find -exec), CVE-2026-25722 (cd), CVE-2026-25724
  // (symbolic links, above); Codex (`./cat` by basename, `-e\xec` for find).
  advisories: [
    'echo "\\\\"; touch pwned; echo "\\\\" #',
    'echo "\\"" ; touch pwned ; echo \'"\'',
    "rg --pre sh -e x",
    "rg -e x --pre=touch",
    "rg x --pre=./evil src",
    "rg --pre-glob '*.ts' --pre sh x",
    "sed 's/x/touch pwned/e' a",
    "sed -n 1p -e 'w pwned' a",
    "sed -E 's/x/y/w pwned' a",
    "sed -n 'p;w pwned' a",
    "sed -n '1{e touch pwned\n}' a",
    "man --html='touch pwned' ls",
    "man -H'touch pwned' ls",
    "sort -S 1 --compress-program sh a",
    "sort --compress-program=sh a",
    "history -s 'touch pwned'",
    "history -a pwned",
    "git ls-remote --upload-pack='touch pwned' main",
    "xargs -t touch pwned",
    "xargs -I{} sh -c {}",
    "echo x | xargs -I{} touch pwned",
    "echo x | xargs touch",
    "rg -v -e pattern $IFS--pre=sh",
    "cat$IFS/etc/passwd",
    "ls${IFS}..",
    "echo ${HOME@P}",
    "echo ${x@P}",
    "a='$(touch pwned)'; echo ${a@P}",
    "{touch,pwned}",
    "echo {a,b}",
    "cat {a,/etc/passwd}",
    "touch {a,b}",
    "find . -exec touch pwned {} +",
    "git diff --output=x",
    "cd src && touch pwned",
    "./cat x",
    "/tmp/cat x",
    "bin/cat x",
    "/bin/cat a",
    "/usr/bin/cat a",
    "src/../cat a",
    ".//cat a",
    "find . -e\\xec touch pwned \\;",
    "find . -e\\xec rm {} \\;",
  ],

  // Programs that run other programs, interpret code, page (and so run
  // commands), edit, fetch, archive or build; and names not on the whitelist.
  programs: [
    "env cat a",
    "env -i cat a",
    "env touch pwned",
    "command cat a",
    "command -p cat a",
    "builtin echo x",
    "exec cat a",
    "exec touch pwned",
    "eval cat a",
    "eval 'touch pwned'",
    "source pwned.sh",
    ". pwned.sh",
    "xargs rm",
    "xargs -0 rm",
    "sudo cat a",
    "nohup ls",
    "time ls",
    "nice ls",
    "timeout 1 ls",
    "watch ls",
    "awk '{print}' a",
    "awk 'BEGIN{system(\"touch pwned\")}'",
    "perl -e 'print 1'",
    "python3 -c 'print(1)'",
    "python3 x.py",
    'node -e \'require("fs").writeFileSync("pwned", "")\'',
    "less a",
    "more a",
    "vi a",
    "man ls",
    "curl example.invalid",
    "wget example.invalid",
    "ssh host",
    "tar cf pwned.tar a",
    "tar xf a",
    "zip pwned.zip a",
    "make",
    "npm test",
    "cargo build",
    "bash -c ls",
    "sh -c 'touch pwned'",
    "bash pwned.sh",
    "stdbuf -o0 ls",
    "setsid ls",
    "script -q pwned",
    "flock a ls",
    "strace ls",
    "busybox ls",
    "ionice ls",
    "taskset 1 ls",
    "yes",
    "git_like_name_is_not_git",
  ],
};

/** Everyday read-only commands an agent runs, relative to the corpus working directory. */
export const MUST_PASS: readonly string[] = [
  "ls",
  "ls -la",
  "ls -la src/",
  "ls -lah src",
  "ls -1 src",
  "ls -R src",
  "ls -lt --color=never",
  "ls -d src",
  "ls --all",
  "ls -la --group-directories-first",
  "ls\t-la",
  "cat README.md",
  "cat -n src/a.ts",
  "cat a b",
  "cat ./README.md",
  "cat src/../README.md",
  "cat nonexistent.txt",
  "cat 'a file' \"another file\"",
  "cat a\\ b",
  "head -n 20 src/a.ts",
  "head -20 file",
  "head -c 100 file",
  "head -n 5 -- README.md",
  "head -n1 src/a.ts README.md",
  "tail -n 5 file",
  "tail -5 README.md",
  "wc -l src/a.ts",
  "wc -lwc README.md src/a.ts",
  "grep -rn TODO src",
  "grep -rn '/api/v1' src",
  "grep -rn -e '../' src",
  "grep -n -e foo -e bar file",
  "grep -rl --include='*.ts' import src",
  "grep -c x a",
  "grep -i 'hello world' README.md",
  "grep -E 'a|b' file",
  "grep -rn TODO",
  "grep --line-number --recursive TODO src",
  "grep -- -x file",
  "grep -f a file",
  "rg -n 'fn main' --type rust",
  "rg --files",
  "rg -g '*.ts' -i pattern",
  "rg -l TODO src",
  "rg -n --hidden -S 'foo' src",
  "rg -C 2 pattern README.md",
  "rg -n '/etc/passwd' src",
  "rg -n TODO -g '!node_modules'",
  "rg pattern",
  "find .",
  "find . -name '*.ts' -type f",
  "find src -maxdepth 2 -type d",
  "find . -type f -newer README.md",
  "find . -name node_modules -prune -o -name '*.ts' -print",
  "find src -iname '*.TS'",
  "find . -path './src/*'",
  "sed -n '10,20p' file",
  "sed -n 5p file",
  "sed -n '1,$p' README.md",
  "diff -u a b",
  "diff a b",
  "diff --from-file=a b",
  "cmp a b",
  "sort -n file | uniq -c",
  "sort -u a",
  "sort -t: -k2 -n file",
  "sort --numeric-sort file",
  "sort -k 2,2 -t , file",
  "uniq -c a",
  "date",
  "date +%Y-%m-%d",
  "date -u -d @0",
  "date -u +%s",
  "date -Iseconds",
  "date +/%Y/",
  "date -r file",
  "echo hello",
  "echo hello world",
  "echo -n x",
  "echo /etc/passwd",
  "echo '$HOME' is literal",
  "echo 'caf\u00e9'",
  "printf '%s\\n' x",
  "printf '%s\\n' /etc/passwd",
  "pwd",
  "which ls",
  "uname -a",
  "whoami",
  "id -u",
  "nproc",
  "du -sh .",
  "du -sh src",
  "df -h",
  "df -h .",
  "stat -c %s file",
  "stat README.md",
  "sha256sum file",
  "md5sum a b",
  "cut -d: -f1 file",
  "tr a-z A-Z",
  "nl -ba file",
  "basename src/a.ts .ts",
  "basename /etc/passwd",
  "dirname src/a.ts",
  "realpath src/a.ts",
  "readlink -f src",
  "file README.md",
  "od -c a",
  "tac file",
  "rev a",
  "seq 1 10",
  "paste a b",
  "comm a b",
  "fold -w 80 README.md",
  "true",
  "false",
  "ls -la | grep x && wc -l a; cat b",
  "ls\npwd",
  "cat README.md | head -n 5",
  "cat README.md src/a.ts | wc -l",
  "grep -rn TODO src | wc -l",
  "ls -la && pwd || echo failed",
  "ls |& grep x",
  "tree",
  "tree -L 2",
  "tree -a -L 3 src",
  "tree src -L 1",
  "tree -d",
  "tree -I node_modules -L 2",
  "tree -P '*.ts' --prune",
  "tree --dirsfirst -F -L 2",
  "tree -J -L 1",
  "tree -X src",
  "tree --sort=name src",
  "tree --sort name -r",
  "tree -a --noreport -h --du",
  "tree -f -i --noreport",
  "tree -p -u -g -s -D",
  "tree --help",
  "tree -L 2 -- src",
  "tree -H . -T listing --hintro README.md --nolinks",
  "tree --charset=UTF-8 --timefmt '%Y-%m-%d'",
  "tree --filelimit 100 -C",
  "tree -L 2 | head -n 20",
];

/** The environment every corpus session runs with: absolute PATH entries only. */
function cleanEnvironment(home: string): Record<string, string> {
  return { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" };
}

interface CorpusFixture {
  /** The temporary directory holding everything below. */
  readonly root: string;
  /** The working directory. */
  readonly work: string;
  /** The skill root. */
  readonly skills: string;
  /** A session on the working directory in `mode`, with `environment` if given. */
  session(
    mode?: PermissionMode,
    environment?: Record<string, string>,
  ): Promise<ToolSessionContext>;
  cleanup(): Promise<void>;
}

/**
 * A real temporary directory: `work/` (the working directory) with `src/a.ts`,
 * `README.md`, `a`, `b`, `file`, `a file`, `another file`, `a b`, `a.txt`, a
 * `victim/` and an `emptydir/`, `.git/config`, the links `out` and `-` →
 * `../outside` and `secret-link` → `../outside/secret.txt`, and `d/` holding a file
 * `secret-link` and a link `a` → `../outside/secret.txt` (a repository can
 * carry such links); `outside/secret.txt`, `secret` next to `work/`;
 * `skills/demo/SKILL.md`; and `home/`.
 */
async function corpusFixture(): Promise<CorpusFixture> {
  const dir = await tempDir();
  const root = dir.path;
  const work = join(root, "work");
  const skills = join(root, "skills");
  const files: Record<string, string> = {
    "work/src/a.ts": "export const a = 1; // TODO\n",
    "work/README.md": "# corpus\nhello world\n",
    "work/a": "a\nx\n",
    "work/b": "b\nx\n",
    "work/file": "3\n1\n2\n",
    "work/a file": "spaces\n",
    "work/another file": "more spaces\n",
    "work/a b": "a b\n",
    "work/a.txt": "a\na\n",
    "work/victim/keep.txt": "keep\n",
    "work/d/secret-link": "not the secret\n",
    "work/.git/config": "[core]\n",
    "outside/secret.txt": "secret\n",
    "secret": "secret\n",
    "skills/demo/SKILL.md": "# demo\n",
  };
  for (const [path, text] of Object.entries(files)) {
    await fs.mkdir(join(root, path, ".."), { recursive: true });
    await fs.writeFile(join(root, path), text);
  }
  await fs.mkdir(join(work, "emptydir"));
  await fs.mkdir(join(root, "home"));
  await symlinkOnDisk(join(root, "outside"), join(work, "out"));
  await symlinkOnDisk(join(root, "outside"), join(work, "-"));
  await symlinkOnDisk(join(root, "outside", "secret.txt"), join(work, "secret-link"));
  await symlinkOnDisk(join(root, "outside", "secret.txt"), join(work, "d", "a"));
  return {
    root,
    work,
    skills,
    session: (mode = "default", environment = cleanEnvironment(join(root, "home"))) =>
      createSession({
        workingDirectory: work,
        permissions: { mode },
        skillRoot: skills,
        environment,
      }),
    cleanup: dir.cleanup,
  };
}

const mustNotAll = (): string[] => Object.values(MUST_NOT).flat();

test("classifier: 150+ commands that must not be read-only are not (parser differentials, optional arguments, clusters, writes, escapes, advisories)", async () => {
  const all = mustNotAll();
  assert.ok(all.length >= 150, `${all.length} cases`);
  const duplicates = all.filter((c, i) => all.indexOf(c) !== i);
  assert.deepEqual(duplicates, [], "each case once");
  const fixture = await corpusFixture();
  try {
    const session = await fixture.session();
    const letThrough: string[] = [];
    for (const [group, commands] of Object.entries(MUST_NOT)) {
      assert.ok(commands.length > 0, group);
      for (const command of commands) {
        const verdict = await classifyCommand(command, session);
        if (verdict.readOnly !== false || verdict.reason.startsWith(READ_ONLY_REASON)) {
          letThrough.push(`[${group}] ${JSON.stringify(command)}: ${verdict.reason}`);
        }
      }
    }
    assert.deepEqual(letThrough, [], `called read-only:\n${letThrough.join("\n")}`);
  } finally {
    await fixture.cleanup();
  }
});

test("classifier: 60+ everyday read-only commands are read-only on a real directory", async () => {
  assert.ok(MUST_PASS.length >= 60, `${MUST_PASS.length} cases`);
  const fixture = await corpusFixture();
  try {
    const session = await fixture.session();
    // Absolute paths inside the working directory and the skill root are inside the roots.
    const absolute = [
      `cat ${fixture.work}/README.md`,
      `ls -la ${fixture.work}/src`,
      `cat ${fixture.skills}/demo/SKILL.md`,
      `grep -rn demo ${fixture.skills}`,
    ];
    const refused: string[] = [];
    for (const command of [...MUST_PASS, ...absolute]) {
      const verdict = await classifyCommand(command, session);
      if (verdict.readOnly !== true) refused.push(`${JSON.stringify(command)}: ${verdict.reason}`);
    }
    assert.deepEqual(refused, [], `refused:\n${refused.join("\n")}`);
  } finally {
    await fixture.cleanup();
  }
});

test("classifier: an environment that changes what bash or a program runs makes the commands it affects not read-only", async () => {
  const fixture = await corpusFixture();
  try {
    const home = join(fixture.root, "home");
    const clean = cleanEnvironment(home);
    await fs.mkdir(join(fixture.work, "bin"));
    // A PATH entry outside the working directory by its text, inside it once resolved.
    await symlinkOnDisk(join(fixture.work, "bin"), join(fixture.root, "binlink"));
    const all = ["ls", "cat README.md", "rg x"];
    const environments: [string, Record<string, string>, string[]][] = [
      ["PATH with .", { ...clean, PATH: ".:/usr/bin:/bin" }, all],
      ["PATH with an empty entry", { ...clean, PATH: "/usr/bin::/bin" }, all],
      ["PATH ending in :", { ...clean, PATH: "/usr/bin:/bin:" }, all],
      ["PATH with a relative entry", { ...clean, PATH: "bin:/usr/bin:/bin" }, all],
      ["PATH inside the working directory", {
        ...clean,
        PATH: `${fixture.work}/bin:/usr/bin:/bin`,
      }, all],
      ["PATH climbing into the working directory", {
        ...clean,
        PATH: `${home}/../work/bin:/usr/bin:/bin`,
      }, all],
      ["PATH through a link into the working directory", {
        ...clean,
        PATH: `${fixture.root}/binlink:/usr/bin:/bin`,
      }, all],
      ["no PATH", { HOME: home }, all],
      ["BASH_ENV", { ...clean, BASH_ENV: "pwned.sh" }, all],
      ["ENV", { ...clean, ENV: "pwned.sh" }, all],
      ["BASH_FUNC_ls%%", { ...clean, "BASH_FUNC_ls%%": "() { touch pwned; }" }, all],
      ["SHELLOPTS", { ...clean, SHELLOPTS: "xtrace" }, all],
      ["BASHOPTS", { ...clean, BASHOPTS: "extglob" }, all],
      ["POSIXLY_CORRECT", { ...clean, POSIXLY_CORRECT: "1" }, all],
      // The dynamic loader loads a library from the working directory into every program.
      ["LD_PRELOAD relative", { ...clean, LD_PRELOAD: "./x.so" }, all],
      ["LD_PRELOAD inside", { ...clean, LD_PRELOAD: `${fixture.work}/x.so` }, all],
      ["LD_AUDIT relative", { ...clean, LD_AUDIT: "./x.so" }, all],
      ["LD_LIBRARY_PATH .", { ...clean, LD_LIBRARY_PATH: "." }, all],
      // What `LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/lib` leaves when it was unset.
      ["LD_LIBRARY_PATH with an empty entry", { ...clean, LD_LIBRARY_PATH: ":/opt/lib" }, all],
      // rg reads its flags, --pre among them, from this file.
      ["RIPGREP_CONFIG_PATH relative", { ...clean, RIPGREP_CONFIG_PATH: "rgrc" }, ["rg x"]],
      ["RIPGREP_CONFIG_PATH inside", {
        ...clean,
        RIPGREP_CONFIG_PATH: `${fixture.work}/rgrc`,
      }, ["rg x"]],
      // tree writes its listing to the descriptor this names.
      ["STDDATA_FD", { ...clean, STDDATA_FD: "3" }, ["tree", "tree -J", "ls"]],
      // A process splits `NAME=value` at its first `=`: these set STDDATA_FD to `3=` and,
      // after the PATH before them, PATH to `.:/usr/bin=/bin`, so ./ls answers for ls.
      ["a name holding = (STDDATA_FD)", { ...clean, "STDDATA_FD=3": "" }, ["tree", "ls"]],
      ["a name holding = (PATH)", { ...clean, "PATH=.:/usr/bin": "/bin" }, all],
      ["a name holding = (BASH_ENV)", { ...clean, "BASH_ENV=pwned": "sh" }, all],
    ];
    const letThrough: string[] = [];
    for (const [name, environment, commands] of environments) {
      const session = await fixture.session("default", environment);
      for (const command of commands) {
        const verdict = await classifyCommand(command, session);
        if (verdict.readOnly) letThrough.push(`${name}: ${JSON.stringify(command)}`);
      }
    }
    assert.deepEqual(letThrough, [], `called read-only:\n${letThrough.join("\n")}`);
    const session = await fixture.session("default", clean);
    assert.equal((await classifyCommand("ls", session)).readOnly, true, "the clean environment");
  } finally {
    await fixture.cleanup();
  }
});

test("classifier: the acceptEdits gate checks every target directory spelling and the last operand", async () => {
  const fixture = await corpusFixture();
  try {
    const session = await fixture.session("acceptEdits");
    const admitted = [
      "mkdir -p build/out",
      "touch src/new.ts",
      "cp a b",
      "cp -t src a",
      "cp -tsrc a",
      "cp --target-directory=src a",
      "cp --target-directory src a",
      "cp -ft src README.md",
      "mv a src/",
      "rmdir emptydir",
    ];
    const refusedGate = [
      // A copied tree carries links and names no check has seen; a file-system command changes
      // what the paths after it lead to.
      "cp -rt src README.md",
      "mkdir a2 && cp a a2/",
      "ls && mkdir a3",
      "cp a -t out",
      "cp -t out a",
      "cp -tout a",
      "cp --target-directory=out a",
      "cp --target-directory out a",
      "cp -rt out src",
      "cp -rt .. a",
      "cp -t/tmp a",
      "cp a out/",
      "cp a ../x",
      "cp a secret-link",
      "mv a .git/x",
      "mv a .git",
      "cp -t .git a",
      "mkdir out/x",
      "touch out/x",
      "touch /tmp/x",
      "touch -r /etc/passwd a",
      "touch --reference=../secret a",
      "cp /etc/passwd a",
      "cp secret-link a",
      "mkdir -p ../x",
      "cp a b > c",
      "rm a",
      "cp -s a b",
      "cp -L out/secret.txt a",
      "cp --suffix=/tmp/x -b a b",
      // `out/..` is where the kernel goes from `out` (outside), not the working directory.
      "touch out/../pwned",
      "mkdir out/../pwned",
      "cp a out/../pwned",
      "mv a out/../pwned",
      "cp -t out/.. a",
      "rmdir .",
      "mv . x",
    ];
    const wrong: string[] = [];
    for (const command of admitted) {
      const verdict = await classifyCommand(command, session);
      if (!verdict.fileSystemGate || verdict.readOnly) {
        wrong.push(`not admitted: ${JSON.stringify(command)}: ${verdict.reason}`);
      }
    }
    for (const command of refusedGate) {
      const verdict = await classifyCommand(command, session);
      if (verdict.fileSystemGate || verdict.readOnly) {
        wrong.push(`admitted: ${JSON.stringify(command)}: ${verdict.reason}`);
      }
    }
    assert.deepEqual(wrong, [], wrong.join("\n"));
  } finally {
    await fixture.cleanup();
  }
});

/**
 * Whether a must-not command, were it wrongly run, would keep its effects in a
 * scratch directory: no absolute path, `..`, `~`, expansion, privilege,
 * network, clock or host name, or interactive program.
 */
function runnableInScratch(command: string): boolean {
  if (/(^|[\s'"=:,{@<>`(\\\/])\//.test(command)) return false;
  if (/\/(etc|tmp|bin|usr|dev|proc|var|root|home|sys|opt|lib|boot|run|srv|mnt)\b/.test(command)) {
    return false;
  }
  if (/\.\.|~|\$|`/.test(command)) return false;
  // `-` names the corpus's link out, which the scratch directory does not have.
  if (/(^|\s)-(\s|$)/.test(command)) return false;
  const unsafe =
    /\b(sudo|su|doas|curl|wget|ssh|scp|nc|git|npm|npx|cargo|pip|date|hostname|man|vi|vim|less|more|watch|top|nano|emacs|history|out|secret-link)\b/;
  return !unsafe.test(command);
}

/** Every entry below `root`: kind, size, mode, mtime, and a content hash or link target. */
async function snapshot(root: string): Promise<string[]> {
  const lines: string[] = [];
  const walk = async (dir: string, prefix: string) => {
    const names = (await fs.readdir(dir)).sort();
    for (const name of names) {
      const path = join(dir, name);
      const info = await fs.lstat(path);
      const head = `${prefix}${name} mode=${info.mode} size=${info.size} mtime=${info.mtimeMs}`;
      if (info.isSymbolicLink()) lines.push(`${head} -> ${await fs.readlink(path)}`);
      else if (info.isDirectory()) {
        lines.push(`${head} dir`);
        await walk(path, `${prefix}${name}/`);
      } else if (info.isFile()) {
        const hash = createHash("sha256").update(await fs.readFile(path)).digest("hex");
        lines.push(`${head} sha256=${hash}`);
      } else lines.push(`${head} other`);
    }
  };
  await walk(root, "");
  return lines;
}

test("classifier: plan mode runs none of the must-not commands", async () => {
  const dir = await tempDir();
  try {
    const work = join(dir.path, "work");
    const home = join(dir.path, "home");
    await fs.mkdir(join(work, "src"), { recursive: true });
    await fs.mkdir(join(work, "victim"));
    await fs.mkdir(join(work, "d"));
    await fs.mkdir(home);
    const files: Record<string, string> = {
      "src/a.ts": "export const a = 1;\n",
      "README.md": "# scratch\n",
      "a": "a\nx\n",
      "b": "b\nx\n",
      "a.txt": "a\na\n",
      "file": "3\n1\n2\n",
      "victim/keep.txt": "keep\n",
      // A directory, as in the corpus's own layout: diff with a directory operand is refused.
      "d/a": "a\n",
    };
    for (const [path, text] of Object.entries(files)) await fs.writeFile(join(work, path), text);
    // Let the directories' times settle before the first snapshot.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const session = await createSession({
      workingDirectory: work,
      permissions: { mode: "plan" },
      environment: cleanEnvironment(home),
    });
    const toolset = finalizeToolset({ session });
    const commands = mustNotAll().filter(runnableInScratch);
    assert.ok(commands.length >= 100, `${commands.length} runnable cases`);
    const before = await snapshot(dir.path);
    const ran: string[] = [];
    let n = 0;
    for (const command of commands) {
      const result = await toolset.call({
        name: "bash",
        input: { command, timeout_ms: 5000 },
        callId: `plan-${++n}`,
      });
      if (result.ok || result.error?.code !== "denied") {
        ran.push(`${JSON.stringify(command)}: ok=${result.ok} ${result.error?.code ?? ""}`);
      }
    }
    assert.deepEqual(ran, [], `not denied in plan mode:\n${ran.join("\n")}`);
    assert.deepEqual(await snapshot(dir.path), before, "the scratch directory changed");
  } finally {
    await dir.cleanup();
  }
});

test("classifier: the CVE-2025-54795 payload is one echo word in bash, and running it creates nothing", async () => {
  // `echo "\"; touch pwned; echo \""`: inside double quotes `\"` is a quote character,
  // so bash prints `"; touch pwned; echo "` and runs nothing else.
  const payload = 'echo "\\"; touch pwned; echo \\""';
  const fixture = await corpusFixture();
  try {
    const session = await fixture.session("plan");
    const verdict = await classifyCommand(payload, session);
    assert.equal(verdict.readOnly, true, verdict.reason);
    const before = await snapshot(fixture.root);
    const result = await finalizeToolset({ session }).call({
      name: "bash",
      input: { command: payload, timeout_ms: 5000 },
      callId: "cve-2025-54795",
    });
    assert.equal(result.ok, true, result.output);
    assert.match(result.output, /"; touch pwned; echo "/);
    assert.deepEqual(await snapshot(fixture.root), before);
  } finally {
    await fixture.cleanup();
  }
});
