/**
 * The version the command prints and the MCP server announces. The npm build
 * refuses to build when it differs from the version in `deno.json`, so the
 * Deno and npm builds print the same one.
 *
 * @module
 */

/** The package version, as in `deno.json`. */
export const VERSION = "0.1.0";
