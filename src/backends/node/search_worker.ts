/**
 * The search worker of the Node backend: the search workers' side
 * (`../workers/worker.ts`), listing directories with `node:fs`.
 *
 * @module
 */
import { readdirSync } from "node:fs";
import { serveSearches } from "../workers/worker.ts";
import { kindOf } from "../real_filesystem.ts";

serveSearches((real) =>
  readdirSync(real, { withFileTypes: true }).map((entry) => ({
    name: entry.name,
    kind: kindOf(entry),
  }))
);
