// One process scenario for bench/process.ts, as a whole process.
// Usage: run_process.mjs MODULE DIR SCENARIO
//   idle | yes: peak RSS over 10 s, idle or while `yes` runs through bash
//   drain: `head -c 2G /dev/zero` through bash; prints seconds and bytes
//   abort-sleep | abort-trap: ms from abort to result
const [moduleUrl, dir, scenario] = process.argv.slice(2);
const { createSession, finalizeToolset } = await import(moduleUrl);
const session = await createSession({
  workingDirectory: dir,
  environment: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
});
const toolset = finalizeToolset({ session, select: ["bash"] });
// The person approves every command: the bench measures running it, not the policy.
const approve = () => Promise.resolve(true);
const bash = (command, extra = {}) =>
  toolset.call({
    name: "bash",
    input: { command, timeout_ms: 600000 },
    callId: scenario,
    approve,
    ...extra,
  });

function sampler() {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  return () => {
    clearInterval(timer);
    return Math.max(peak, process.memoryUsage().rss);
  };
}

if (scenario === "idle" || scenario === "yes") {
  await bash("true"); // the same code loaded in both scenarios
  const stop = sampler();
  if (scenario === "idle") await new Promise((r) => setTimeout(r, 10000));
  else {
    const result = await toolset.call({
      name: "bash",
      input: { command: "yes", timeout_ms: 10000 },
      callId: "yes",
      approve,
    });
    console.error(
      `yes: ${result.data.stdout_omitted_bytes} bytes drained, ${result.data.stdout.length} kept`,
    );
  }
  console.log(JSON.stringify({ peakMiB: stop() / 1048576 }));
} else if (scenario === "drain") {
  await bash("true"); // start-up costs (the shell grammar's first use) are not drain time
  const started = performance.now();
  const result = await bash("head -c 2G /dev/zero");
  const seconds = (performance.now() - started) / 1000;
  const bytes = result.data.stdout_omitted_bytes +
    new TextEncoder().encode(result.data.stdout).length - 26;
  console.log(JSON.stringify({ seconds, bytes }));
} else {
  const command = scenario === "abort-sleep"
    ? "sleep 1000"
    : "trap '' TERM; while :; do sleep 0.1; done";
  const turn = new AbortController();
  const pending = bash(command, { signal: turn.signal });
  await new Promise((r) => setTimeout(r, 300));
  const aborted = performance.now();
  turn.abort();
  const result = await pending;
  console.log(JSON.stringify({ ms: performance.now() - aborted, status: result.data.status }));
}
