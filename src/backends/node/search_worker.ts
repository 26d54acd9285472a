/**
 * The search worker of the Node backend: the search workers' side
 * (`../workers/worker.ts`), listing directories with `node:fs`.
 *
 * @module
 */
import { serveSearches } from "../workers/worker.ts";
import { listDirectorySync } from "./list_sync.ts";
import { stampStatSync } from "./stat_sync.ts";

serveSearches(listDirectorySync, stampStatSync);
