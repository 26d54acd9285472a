// A loop of edits as a whole process: the cost of committing changes (for
// the file backends' verification and compare-and-swap). Each edit rewrites
// one line of a 200-line file and the next one puts it back.
//
// Prints "edits N call MS": the milliseconds the loop took after start-up.
//
// Usage: run_edits.mjs MODULE ROOT [N]
import { writeFileSync } from "node:fs";
const [moduleUrl, root, count = "1000"] = process.argv.slice(2);
const { createSession, editTool } = await import(moduleUrl);
const lines = Array.from({ length: 200 }, (_, i) => `line ${i} of the file being edited`);
writeFileSync(`${root}/edited.txt`, lines.join("\n") + "\n");
const session = await createSession({ workingDirectory: root });
const call = { callId: "bench", signal: new AbortController().signal };
const started = performance.now();
for (let i = 0; i < Number(count); i++) {
  const [from, to] = i % 2 === 0 ? ["line 100 of", "line 100, edited, of"] : [
    "line 100, edited, of",
    "line 100 of",
  ];
  await editTool.execute({ path: "edited.txt", old_text: from, new_text: to }, session, call);
}
console.log(`edits ${count} call ${(performance.now() - started).toFixed(1)}`);
