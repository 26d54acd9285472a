/**
 * One tool call, or many, as a whole Deno process on the sources, for
 * bench/count_checks.ts: the package is imported statically so that the
 * process runs under the flags `denoPermissionFlags` returns.
 *
 * Usage: count_calls.ts ROOT grep PATTERN | ROOT glob PATTERN | ROOT list DIR [TIMES] |
 *        ROOT read FILE...
 */
import { createSession, globTool, grepTool, listTool, readTool } from "../mod.ts";

const [root, tool, ...rest] = Deno.args;
const session = await createSession({ workingDirectory: root });
const call = { callId: "count", signal: new AbortController().signal };
const unlimited = Number.MAX_SAFE_INTEGER;
if (tool === "grep") {
  const { data } = await grepTool.execute(
    { pattern: rest[0], mode: "files_with_matches", max_results: unlimited },
    session,
    call,
  );
  console.log(data.files.length);
} else if (tool === "glob") {
  const { data } = await globTool.execute(
    { pattern: rest[0], max_results: unlimited },
    session,
    call,
  );
  console.log(data.paths.length);
} else if (tool === "list") {
  let total = 0;
  for (let i = 0; i < Number(rest[1] ?? 1); i++) {
    const { data } = await listTool.execute({ path: rest[0], limit: 2000 }, session, call);
    total += data.total;
  }
  console.log(total);
} else if (tool === "read") {
  let lines = 0;
  for (const path of rest) {
    const { data } = await readTool.execute({ path }, session, call);
    lines += data.lines?.length ?? 0;
  }
  console.log(lines);
} else throw new Error(`unknown tool ${tool}`);
