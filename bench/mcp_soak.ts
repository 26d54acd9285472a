/**
 * The MCP server under a long run of ordinary calls: 12,000 mixed tool calls
 * (read, grep, glob, list, a small write, a small edit, `bash` echo) over
 * stdio, one official client against the CLI's server (`mcp --root DIR
 * --mode acceptEdits`) on a temporary tree of 200 small files. Prints the
 * latency of a call as the client sees it (p50/p95/p99), calls per second,
 * and the server's peak resident memory (VmHWM of its process).
 *
 * Calls are issued by `--concurrency` workers (1: one after another, so a
 * call's latency is the server's time for it and the pipe's); the first
 * `--warmup` calls are not counted. Any call that fails ends the run.
 *
 * Run: deno task bench:mcp [--calls N] [--concurrency N] [--warmup N]
 *      [--client "sdk v1" | "client v2 legacy" | "client v2 pinned 2026-07-28"]
 */
import { mkdir, writeFile } from "node:fs/promises";
import { sh, tempDir } from "../tests/helpers.ts";
import { type ClientKind, type McpSession, openSession, text } from "../tests/mcp_clients.ts";

function option(name: string, fallback: string): string {
  const at = Deno.args.indexOf(`--${name}`);
  return at === -1 ? fallback : Deno.args[at + 1];
}

const CALLS = Number(option("calls", "12000"));
const CONCURRENCY = Number(option("concurrency", "1"));
const WARMUP = Number(option("warmup", "100"));
const CLIENT = option("client", "client v2 legacy") as ClientKind;
/** Files whose contents the edits flip between two words; more than any sane concurrency. */
const EDITED = 64;

/** The mix, repeated: one call of each kind per slot (reads and searches dominate, as with agents). */
const MIX = [
  "read",
  "grep",
  "read",
  "glob",
  "list",
  "read",
  "write",
  "grep",
  "edit",
  "bash",
  "glob",
  "list",
] as const;

/** Lays out 10 folders of 20 small files, and the files the edits flip. */
async function layOut(root: string): Promise<void> {
  for (let d = 0; d < 10; d++) {
    await mkdir(`${root}/src/m${d}`, { recursive: true });
    for (let f = 0; f < 20; f++) {
      const lines = Array.from(
        { length: 40 },
        (_, i) => `export const v${i} = ${d * f + i}; // m${d}`,
      );
      await writeFile(`${root}/src/m${d}/f${f}.ts`, lines.join("\n") + "\n");
    }
  }
  await mkdir(`${root}/edits`);
  await mkdir(`${root}/scratch`);
  for (let e = 0; e < EDITED; e++) await writeFile(`${root}/edits/e${e}.txt`, "state: ping\n");
}

/** The arguments of call number `n` of the run. */
function callFor(n: number, flipped: boolean[]): { name: string; args: Record<string, unknown> } {
  const kind = MIX[n % MIX.length];
  const round = Math.floor(n / MIX.length);
  const file = `src/m${n % 10}/f${round % 20}.ts`;
  switch (kind) {
    case "read":
      return { name: "read", args: { path: file, limit: 20 } };
    case "grep":
      return {
        name: "grep",
        args: { pattern: `v${n % 40} = \\d+; // m${n % 10}`, mode: "content" },
      };
    case "glob":
      return { name: "glob", args: { pattern: `src/m${n % 10}/*.ts` } };
    case "list":
      return { name: "list", args: { path: `src/m${n % 10}` } };
    case "write":
      return {
        name: "write",
        args: { path: `scratch/w${round % 50}.txt`, content: `call ${n}\n` },
      };
    case "edit": {
      const slot = round % EDITED;
      const [from, to] = flipped[slot] ? ["pong", "ping"] : ["ping", "pong"];
      flipped[slot] = !flipped[slot];
      return {
        name: "edit",
        args: { path: `edits/e${slot}.txt`, old_text: from, new_text: to },
      };
    }
    case "bash":
      return { name: "bash", args: { command: `echo call ${n}` } };
  }
}

/** The given percentile of sorted `values`. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The server's peak and current resident memory, in KiB, from /proc. */
async function memoryOf(pid: number): Promise<{ peak: number; now: number }> {
  const status = await sh('cat "/proc/$1/status"', String(pid));
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
  return { peak: kib("VmHWM"), now: kib("VmRSS") };
}

/** Each recorded call's latency, by tool. */
const byTool: Record<string, number[]> = {};

/** Which edited files hold "pong" now: the next edit of each flips it back. */
const flipped: boolean[] = Array(EDITED).fill(false);

/** Runs calls number `first` to `first + count - 1`; resolves their latencies when `record`. */
async function run(
  session: McpSession,
  first: number,
  count: number,
  record: boolean,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = first;
  const worker = async () => {
    while (next < first + count) {
      const n = next++;
      const { name, args } = callFor(n, flipped);
      const started = performance.now();
      const result = await session.call(name, args);
      const took = performance.now() - started;
      if (result.isError === true) {
        throw new Error(`call ${n} (${name} ${JSON.stringify(args)}) failed: ${text(result)}`);
      }
      if (record) {
        latencies.push(took);
        (byTool[name] ??= []).push(took);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return latencies;
}

const dir = await tempDir();
await layOut(dir.path);
const session = await openSession(CLIENT, "stdio", { root: dir.path });
try {
  const pid = session.serverPid();
  await run(session, 0, WARMUP, false);
  // In quarters, to show whether calls get slower or the server bigger as the run goes on.
  const quarters: { p50: number; p95: number; rss: number; seconds: number }[] = [];
  const latencies: number[] = [];
  let done = 0;
  for (let q = 0; q < 4; q++) {
    const count = Math.round((CALLS * (q + 1)) / 4) - done;
    const began = performance.now();
    const part = (await run(session, WARMUP + done, count, true)).sort((a, b) => a - b);
    const seconds = (performance.now() - began) / 1000;
    quarters.push({
      p50: percentile(part, 50),
      p95: percentile(part, 95),
      rss: (await memoryOf(pid)).now,
      seconds,
    });
    latencies.push(...part);
    done += count;
  }
  const seconds = quarters.reduce((sum, q) => sum + q.seconds, 0);
  const memory = await memoryOf(pid);
  latencies.sort((a, b) => a - b);
  console.log(
    `MCP soak: ${CALLS} mixed calls over stdio, ${CLIENT}, concurrency ${CONCURRENCY}` +
      ` (after ${WARMUP} warm-up calls), Deno ${Deno.version.deno}`,
  );
  console.log(
    `latency ms: p50 ${percentile(latencies, 50).toFixed(2)}  p95 ${
      percentile(latencies, 95).toFixed(2)
    }  p99 ${percentile(latencies, 99).toFixed(2)}  max ${latencies.at(-1)!.toFixed(2)}`,
  );
  console.log(
    `by tool, p50/p95 ms: ${
      Object.entries(byTool).map(([name, times]) => {
        times.sort((a, b) => a - b);
        return `${name} ${percentile(times, 50).toFixed(2)}/${percentile(times, 95).toFixed(2)}`;
      }).join("  ")
    }`,
  );
  console.log(`throughput: ${(CALLS / seconds).toFixed(0)} calls/s (${seconds.toFixed(1)} s)`);
  for (const [i, q] of quarters.entries()) {
    console.log(
      `  quarter ${i + 1}: p50 ${q.p50.toFixed(2)}  p95 ${q.p95.toFixed(2)} ms, ${
        (CALLS / 4 / q.seconds).toFixed(0)
      } calls/s, server RSS after it ${(q.rss / 1024).toFixed(1)} MiB`,
    );
  }
  console.log(
    `server RSS: peak ${(memory.peak / 1024).toFixed(1)} MiB (VmHWM), at the end ${
      (memory.now / 1024).toFixed(1)
    } MiB`,
  );
} finally {
  await session.close();
  await dir.cleanup();
}
