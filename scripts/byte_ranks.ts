/**
 * Makes `src/search/byte_ranks.ts`: how common each byte value is in text
 * files, as a rank from 0 (rarest) to 255 (most common). The literal search
 * of `grep` looks for a literal's rarest byte first.
 *
 * Each corpus counts equally, whatever its size: byte frequencies are taken
 * per corpus, as fractions, and averaged. Files holding a NUL byte in their
 * first 8 KiB are binary and left out.
 *
 * Run: deno run --allow-read --allow-write scripts/byte_ranks.ts DIR [DIR …]
 * (the committed table: /usr/include /usr/lib/python3.11 /usr/share/perl npm/node_modules)
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const FILE_BYTES = 1024 * 1024;

function countCorpus(root: string): Float64Array {
  const counts = new Float64Array(256);
  let total = 0;
  const visit = (directory: string) => {
    let entries;
    try {
      entries = readdirSync(directory, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) visit(path);
      if (!entry.isFile()) continue;
      let bytes: Uint8Array;
      try {
        bytes = readFileSync(path);
      } catch {
        continue;
      }
      if (bytes.length > FILE_BYTES || bytes.subarray(0, 8192).includes(0)) continue;
      for (const byte of bytes) counts[byte]++;
      total += bytes.length;
    }
  };
  visit(root);
  if (total === 0) throw new Error(`no text files under ${root}`);
  return counts.map((count) => count / total);
}

const roots = Deno.args;
if (roots.length === 0) throw new Error("usage: byte_ranks.ts DIR [DIR …]");
const share = new Float64Array(256);
for (const root of roots) {
  const corpus = countCorpus(root);
  for (let byte = 0; byte < 256; byte++) share[byte] += corpus[byte] / roots.length;
}
// Rarest first; ties (bytes never seen) by value, so the table is stable.
const order = [...share.keys()].sort((a, b) => share[a] - share[b] || a - b);
const ranks = new Array<number>(256);
order.forEach((byte, rank) => (ranks[byte] = rank));

const rows: string[] = [];
for (let at = 0; at < 256; at += 16) rows.push(`  ${ranks.slice(at, at + 16).join(", ")},`);
const target = fileURLToPath(new URL("../src/search/byte_ranks.ts", import.meta.url));
writeFileSync(
  target,
  `/**
 * How common each byte value is in text files (source code in C, Python,
 * Perl and JavaScript, and their documentation): a rank from 0 (rarest) to
 * 255 (most common), indexed by byte value. Made by \`scripts/byte_ranks.ts\`.
 *
 * @module
 */

/** Rank of each byte value, 0 = rarest. */
// deno-fmt-ignore
export const BYTE_RANKS: readonly number[] = [
${rows.join("\n")}
];
`,
);
console.log(`wrote ${target}`);
console.log(
  "rarest printable:",
  order.filter((b) => b >= 0x20 && b < 0x7f).slice(0, 16).map((b) => String.fromCharCode(b)).join(
    "",
  ),
);
console.log(
  "most common:",
  order.slice(-16).map((b) => JSON.stringify(String.fromCharCode(b))).join(" "),
);
