/**
 * The search worker of the Node backend: the shared worker (`scan_worker.ts`)
 * listing directories with `node:fs`.
 *
 * @module
 */
import { readdirSync } from "node:fs";
import { serveSearches } from "./scan_worker.ts";
import { kindOf } from "./entry_kind.ts";

serveSearches((real) =>
  readdirSync(real, { withFileTypes: true }).map((entry) => ({
    name: entry.name,
    kind: kindOf(entry),
  }))
);
