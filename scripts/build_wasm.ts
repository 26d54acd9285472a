/**
 * Assembles `src/search/simd.wat` into `src/search/simd_wasm.ts`, the module's
 * bytes as base64 (a TypeScript module, so both runtimes and the npm build
 * load it like any other source, with no file read at run time).
 *
 * Run: deno task build:wasm (after changing simd.wat; the output is committed)
 */
import wabtInit from "wabt";
import { Buffer } from "node:buffer";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const source = fileURLToPath(new URL("../src/search/simd.wat", import.meta.url));
const target = fileURLToPath(new URL("../src/search/simd_wasm.ts", import.meta.url));

const wabt = await wabtInit();
const module = wabt.parseWat("simd.wat", readFileSync(source, "utf8"), { simd: true });
module.validate();
const { buffer } = module.toBinary({});
module.destroy();
const base64 = Buffer.from(buffer).toString("base64");
const lines = base64.match(/.{1,96}/g) ?? [];
writeFileSync(
  target,
  `/**
 * The WebAssembly module assembled from \`simd.wat\` by \`scripts/build_wasm.ts\`
 * (${buffer.length} bytes, base64).
 *
 * @module
 */

/** The module's bytes, base64. */
export const SIMD_WASM_BASE64: string = ${lines.map((line) => JSON.stringify(line)).join(" +\n  ")};
`,
);
console.log(`wrote ${target} (${buffer.length} bytes)`);
