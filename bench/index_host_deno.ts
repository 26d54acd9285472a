/**
 * The host of bench/index_host.mjs on the sources, under Deno: the package is
 * imported statically, so that the process runs under the flags
 * `denoPermissionFlags` returns (Deno asks read permission for a dynamic
 * import, and those flags grant reading only the package's `src/`).
 *
 * Usage: index_host_deno.ts ROOT [--no-index] [--cache=DIR] [--warm]
 */
import * as tools from "../mod.ts";
import { serveIndexHost } from "./index_serve.mjs";

await serveIndexHost(tools, Deno.args);
