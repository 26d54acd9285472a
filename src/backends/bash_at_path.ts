/**
 * A {@link ProcessBackend} that starts `bash` by the path the session found
 * it at, never by its name: a backend that looks a bare name up on the
 * `PATH` of the process it starts (Node does, and Deno, and bwrap inside a
 * PID namespace or the sandbox) would otherwise run whatever `bash` comes
 * first there, which may be a repository's (`npm run` and `npx` put
 * `<repo>/node_modules/.bin` first), on the host.
 *
 * @module
 */
import type { ProcessBackend } from "./process.ts";
import { ToolError } from "../errors.ts";
import { wrapSpawn } from "./spawn_wrapper.ts";

/**
 * Wraps `inner` so that a request to start `bash` starts the program at
 * `bash` (the path `trustedProgram` found) instead, and every request names
 * it as the `shell` the local backends run their own scripts with; the
 * environment of every process is handed on as it is (a command that
 * itself runs `bash` finds what its `PATH` says).
 */
export function bashAtPath(inner: ProcessBackend, bash: string): ProcessBackend {
  return wrapSpawn(inner, (request) =>
    inner.spawn({
      ...request,
      command: request.command === "bash" ? bash : request.command,
      shell: bash,
    }));
}

/**
 * Wraps `inner` so that a request to start `bash` is refused with `reason`
 * (`runtime_permission_denied`), for a session that may start none (under
 * Deno's flags that grant no run of it); other requests are handed on.
 */
export function bashRefused(inner: ProcessBackend, reason: string): ProcessBackend {
  return wrapSpawn(
    inner,
    (request) =>
      request.command === "bash"
        ? Promise.reject(new ToolError("runtime_permission_denied", reason))
        : inner.spawn(request),
  );
}
