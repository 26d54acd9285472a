import { Routes } from "../src/backends/descriptor_route.ts";
import { runUnit, VerifiedDirectories, workerWalkIO } from "../src/backends/workers/unit.ts";
import { kindOf } from "../src/backends/deno/entry_kind.ts";
import "../src/backends/deno/permission_query.ts";
const [root, pattern] = Deno.args;
const list = (real: string) => { const e = []; for (const x of Deno.readDirSync(real)) e.push({ name: x.name, kind: kindOf(x) }); return e; };
const dirs = new VerifiedDirectories(new Routes([`/tmp/openwork-tools-fd-${Deno.uid()}`]));
const io = workerWalkIO(list as never, dirs);
for (let k = 0; k < 3; k++) {
const t = performance.now();
let n = 0;
runUnit({ kind: "unit", spec: { id: 1, start: ".", select: { matching: pattern }, limit: 1e15, flags: new SharedArrayBuffer(8), routes: [] }, unit: { real: root, display: ".", ignore: null } }, io, () => { throw 1; }, (a) => { if ("displays" in a) n += a.displays.length; else console.log(a); }, () => dirs.confirm());
dirs.release();
console.log(n, "call", (performance.now() - t).toFixed(1));
}
