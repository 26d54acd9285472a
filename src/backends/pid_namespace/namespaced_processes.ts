/**
 * A {@link ProcessBackend} whose every process starts in a PID namespace of
 * its own, and nothing else: bubblewrap with the whole file system bound
 * as it is (devices included), a `/proc` of the new namespace, and no other
 * namespace than the ones a PID namespace needs (a mount namespace for that
 * `/proc`; for a user other than root, a user namespace that maps the
 * user's ids to themselves). It is not the sandbox: nothing is read-only,
 * the network and the environment are the host's.
 *
 * The kernel ends every process of a PID namespace when its first process
 * (bwrap's init) ends, and that init is the command's parent, in the
 * command's process group: the termination path's SIGTERM reaches the
 * group as before (the init, as the namespace's init, ignores it), and its
 * SIGKILL ends the init, and with it every process left in the namespace,
 * those that left the group (`setsid`, a daemon, `env -i`) included. When
 * the command's shell exits, bwrap exits with its status while the init
 * waits for what is left; the termination path then ends the group as
 * after any call.
 *
 * @module
 */
import type { ProcessBackend } from "../process.ts";
import { wrapSpawn } from "../spawn_wrapper.ts";
import { unwrapCheckedPath } from "../../path/checked_path.ts";

/**
 * The bubblewrap arguments (before the command) that run a process in `cwd`
 * in a PID namespace of its own and otherwise as it would run without one.
 * No `--die-with-parent`: bwrap itself ends at the termination path's
 * SIGTERM, and the namespace must outlive it for the grace period, so that
 * the command's processes can handle that SIGTERM; the group's SIGKILL ends
 * the namespace. No `--new-session`: the command stays in the host's
 * session and process group, where the termination path signals it.
 */
export function namespaceArguments(cwd: string): string[] {
  return ["--unshare-pid", "--dev-bind", "/", "/", "--proc", "/proc", "--chdir", cwd, "--"];
}

/**
 * What the namespace means for a command, in one paragraph for the
 * description of a tool that runs commands (the model reads it: what `ps`
 * shows and what `kill` reaches are not what they are without it).
 */
export const PID_NAMESPACE_STATEMENT: string =
  "In this session every command runs in a PID namespace of its own (nothing else is isolated): " +
  "every process it starts ends when the call ends, whatever it does to its environment or " +
  "session (what it asks a service already running on the host to start, such as a tmux " +
  "server, is the service's); ps and /proc show only this call's processes (its shell is pid 2; " +
  "pids start again at each call, so a pid from an earlier call names another process), and the " +
  "call's process group is not visible: kill 0 and kill -- -$$ do not work as without it.";

/** Wraps `inner` so that every process it starts runs in a PID namespace of its own, by `bwrap`. */
export function namespacedProcesses(inner: ProcessBackend, bwrap: string): ProcessBackend {
  return wrapSpawn(inner, (request) =>
    inner.spawn({
      ...request,
      command: bwrap,
      args: [
        ...namespaceArguments(unwrapCheckedPath(request.cwd)),
        request.command,
        ...request.args,
      ],
    }));
}
