/**
 * The search worker of the Deno backend: the search workers' side
 * (`../workers/worker.ts`), listing directories with `Deno.readDirSync`.
 *
 * @module
 */
import "./permission_query.ts"; // registers Deno's answer to permissionState
import { serveSearches } from "../workers/worker.ts";
import { listDirectorySync } from "./list_sync.ts";
import { stampStatSync } from "./stat_sync.ts";

serveSearches(listDirectorySync, stampStatSync);
