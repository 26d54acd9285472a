/**
 * The command's help texts: the general usage and one page per command.
 *
 * @module
 */

/** The general usage: `openwork-tools help`, `--help`, and on stderr after a bare invocation. */
export const USAGE = `openwork-tools — the read/write/edit/grep/glob/list/bash tool runtime

Usage:
  openwork-tools call NAME JSON|- [--json] [--yes]        run one tool call
  openwork-tools tools [--format json|openai|anthropic]   print the tool definitions
  openwork-tools mcp                                      serve the tools over MCP (stdio)
  openwork-tools mcp --http [HOST:]PORT                   serve them over MCP (Streamable HTTP)
  openwork-tools help [COMMAND]                           this help, or one command's
  openwork-tools version                                  print the version (also --version, -V)

Options (every command):
  --root DIR          working directory (default: the current directory)
  --skill-root DIR    read-only skill root (e.g. ~/.agents/skills)
  --mode MODE         default | acceptEdits | plan (default: default)
  --sandbox           run bash in an OS sandbox (Linux, bubblewrap)
  -h, --help          help for the command

Results go to stdout; errors, questions and notes go to stderr.

Exit status:
  0     ok
  1     the tool's result is an error (call)
  2     usage error: an unknown command, option or tool, JSON that does not
        parse, input the tool's schema rejects; or a permission Deno refused
        (one line naming the --allow-… flag to add)
  130   interrupted by Ctrl-C (SIGINT); 143 by SIGTERM; 129 by SIGHUP
  call bash exits with the command's own status: see 'openwork-tools help call'.`;

/** Each command's help: `openwork-tools help COMMAND` and `openwork-tools COMMAND --help`. */
export const HELP: Readonly<Record<string, string>> = {
  call: `Usage: openwork-tools call NAME JSON|- [--json] [--yes] [--root DIR] [--mode MODE]
                           [--skill-root DIR] [--sandbox]

Runs one tool call in the working directory. JSON is the tool's input; '-'
reads it from standard input.

Output:
  The text the model would see goes to stdout; when the result is an error,
  that text goes to stderr instead. bash prints its command's output once, as
  the command writes it: its stdout to stdout, its stderr to stderr. Nothing is
  repeated at the end; a timeout or a cancel is reported on stderr.
  --json prints the whole result (ToolResult) as JSON on stdout when the call
  ends, for scripts, and streams nothing; an error is also named on stderr.

Approval:
  Where the policy says ask, asks on the terminal (y/N). --yes (-y) approves
  every such call without asking. Without --yes and without a terminal to ask
  on (or with the JSON from standard input), the call is refused. What the
  policy denies stays denied; --mode plan refuses every change.

Sandbox:
  --sandbox runs bash in an OS sandbox (Linux, bubblewrap): writes only to the
  working directory and a private /tmp, no network, every process it started
  ended with the call. Without bwrap, or where it cannot start, the call is
  refused (exit 2) and nothing runs. Deno needs --allow-run=<bash>,<bwrap> with
  both by their absolute paths (/usr/bin/bash,/usr/bin/bwrap), and read of
  those files.

Ctrl-C cancels the call: the processes it started are ended, then the command
exits with 130 (SIGTERM: 143, SIGHUP: 129).

Exit status:
  0     the result is ok
  1     the result is an error (not_found, denied, stale_edit, …)
  2     usage error, an unknown tool, input the tool's schema rejects, or a
        permission Deno refused (runtime_permission_denied: the error names
        the --allow-… flag to add)
  call bash exits as its command did, as timeout(1) does:
  N     the command exited with status N
  124   the command timed out (timeout_ms)
  125   the call ended without a status of the command: refused, could not
        start, or its end could not be confirmed
  128+N the shell was ended by signal N (137 for SIGKILL)
  130   cancelled by Ctrl-C (SIGINT); 143 by SIGTERM; 129 by SIGHUP

Examples:
  openwork-tools call grep '{"pattern":"TODO","mode":"content"}'
  echo '{"path":"README.md","limit":20}' | openwork-tools call read -
  openwork-tools call bash '{"command":"make test"}' --yes
  openwork-tools call edit '{"path":"a.ts","old_text":"x","new_text":"y"}' --json --yes`,
  tools: `Usage: openwork-tools tools [--format json|openai|anthropic] [--mode MODE] [--sandbox]

Prints the tool definitions the model sees, as JSON: the toolset's own form
(json, the default) or the OpenAI / Anthropic tool formats. With --sandbox,
as a sandboxed call's session has them (bash says what the sandbox enforces).`,
  mcp: `Usage: openwork-tools mcp [--http [HOST:]PORT [--token TOKEN]] [--root DIR] [--mode MODE]
                          [--skill-root DIR] [--approval HOW] [--full-artifacts]
                          [--no-search-index] [--sandbox]

Serves the toolset over MCP on stdin/stdout until the client disconnects,
to clients of revision 2026-07-28 (stateless) and of the 2025 revisions.
Without --root, the working directory is the client's first file:// root
when the client declares roots (and moves when they change), else the
current directory; over stdio a 2026-07-28 request names its own in
_meta["openwork/root"] (a file:// URI). Over --http every request runs in
--root, else the current directory.

--approval HOW   who decides a call the policy asks about:
  elicit   the person, through MCP elicitation where the client supports it;
           otherwise the call is refused with a readable reason (default)
  client   the client's own confirmation of each tool call (the tools'
           annotations tell it which are risky): the call runs
  policy   nobody: only what the policy allows runs

--full-artifacts  send file-change artifacts in _meta whole; by default a
                  result carries at most 64 KiB of prior file contents

--sandbox         every bash call of every session runs in an OS sandbox
                  (Linux, bubblewrap; see 'openwork-tools help call'); the
                  bash tool's description says what it enforces. Without
                  bwrap, or where it cannot start, the server does not start

--no-search-index  keep no index of the working directory. By default the
                   server keeps one (one per root, shared by the sessions of
                   --http), so that grep and glob answer without reading
                   files that cannot match: built in the background from the
                   first search, answers the walk's, exactly.
                   --search-index, the default, is still accepted

--http serves it over Streamable HTTP at http://HOST:PORT/mcp instead (HOST
defaults to 127.0.0.1; PORT 0 picks a free one), until SIGTERM or SIGINT,
with the root of each MCP session fixed (--root, or the current directory;
a 2026-07-28 request, which has no session, may name its own unless --root
is given). Each MCP session
gets its own toolset session; it ends on DELETE or after 30 minutes idle,
and its processes with it. Every request needs 'Authorization: Bearer
TOKEN': the token is --token, else OPENWORK_MCP_TOKEN, else a random one
printed to stderr once.`,
  help: `Usage: openwork-tools help [COMMAND]

Prints the general help, or the help of COMMAND (call, tools, mcp, help,
version); 'openwork-tools COMMAND --help' does the same.`,
  version: `Usage: openwork-tools version

Prints the version of openwork-tools (also: openwork-tools --version, -V).`,
};
