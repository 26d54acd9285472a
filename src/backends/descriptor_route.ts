/**
 * Which route a backend names its open descriptors through
 * (`descriptors.ts`): found before its first file operation, and checked at
 * each use.
 *
 * `/proc/self/fd` itself where the runtime allows it (Node; Deno with
 * `--allow-all`). Otherwise, on Linux, the link of `descriptor_link.ts`,
 * made if it is missing (by the runtime's own means: Deno makes links only
 * under unscoped read and write flags, and through bash otherwise) and
 * verified. Where neither can be had, every file operation is refused with a
 * message naming what is missing, unless the host chose the best effort.
 * Without `/proc` at all (not Linux) the checks are the best effort, as the
 * README's Platforms section says.
 *
 * @module
 */
import { readlinkSync, statSync } from "node:fs";
import process from "node:process";
import {
  descriptorPath,
  type DescriptorRoute,
  KERNEL_ROUTE,
  PROC_SELF_FD,
  RouteChanged,
} from "./descriptors.ts";
import {
  defaultDescriptorLink,
  linkFlags,
  LinkProblem,
  linkRoute,
  routeMissing,
  type VerifiedLink,
  verifyLink,
} from "./descriptor_link.ts";
import { codeOfRuntimeError } from "./errors.ts";
import type { ToolError } from "../errors.ts";
import { runtimeRefusal } from "../runtime/refusal.ts";
import { sleep } from "./sleep.ts";

/**
 * Whether a backend refuses to open anything when it cannot verify what it
 * opened (`"required"`, the default), or goes on with the best-effort checks
 * (`"best-effort"`).
 */
export type DescriptorRouteMode = "required" | "best-effort";

/** How a backend finds its route. */
export interface RouteSettings {
  /** Where the link is, or is made (default `/tmp/openwork-tools-fd-<uid>`). */
  readonly descriptorLink?: string;
  /** What happens without a route (default `"required"`). */
  readonly descriptorRoute?: DescriptorRouteMode;
  /** Makes a symbolic link at `path` leading to `target`, the runtime's way. */
  readonly makeLink: (target: string, path: string) => Promise<void>;
  /**
   * Whether the runtime's permission guard already allows `access` to
   * `path`, so that touching it neither fails nor asks a person on a
   * terminal (default: always, as under Node).
   */
  readonly grants?: (access: "read" | "write", path: string) => boolean;
}

const ALWAYS = () => true;

let kernelWorks: boolean | undefined;

/** Whether this process may name its descriptors through `/proc/self/fd` itself. */
function kernelRouteWorks(grants: NonNullable<RouteSettings["grants"]>): boolean {
  if (kernelWorks !== undefined) return kernelWorks;
  // Asked of the flags first: under narrow ones Deno would otherwise ask a person on a terminal.
  if (!grants("read", PROC_SELF_FD)) return (kernelWorks = false);
  try {
    return (kernelWorks = statSync(PROC_SELF_FD).isDirectory());
  } catch {
    return (kernelWorks = false);
  }
}

/** A link's path that cannot be used, as the refusal of every operation. */
function unusable(error: unknown, link: string): ToolError {
  if (error instanceof LinkProblem) {
    return routeMissing(
      error.message,
      "backend_failure",
    );
  }
  const refusal = runtimeRefusal(error);
  if (refusal !== null) {
    return routeMissing(
      `Deno refused an access that the link ${link} needs: ${refusal.message}`,
      "runtime_permission_denied",
    );
  }
  return routeMissing(
    `the link ${link} cannot be used: ${(error as Error)?.message ?? String(error)}`,
    "backend_failure",
  );
}

/**
 * The route of a backend on its calling thread: found (and the link made)
 * before the first operation that needs it, again after a check found the
 * link changed; a failure to find one is thrown to every operation, and the
 * next tries anew.
 */
export class RouteKeeper {
  readonly #settings: RouteSettings;
  #route: DescriptorRoute | null | undefined = undefined;
  #finding: Promise<DescriptorRoute | null> | null = null;

  /** A keeper with the host's settings. */
  constructor(settings: RouteSettings) {
    this.#settings = settings;
  }

  /** The route; `null` for the best effort. Throws a `ToolError` when there is none and one is required. */
  route(): Promise<DescriptorRoute | null> {
    if (this.#route !== undefined) return Promise.resolve(this.#route);
    this.#finding ??= this.#find().then(
      (route) => {
        this.#finding = null;
        return (this.#route = route);
      },
      (error) => {
        this.#finding = null;
        throw error;
      },
    );
    return this.#finding;
  }

  /** What the search workers are to try, in order: the route's path, or none for the best effort. */
  async paths(): Promise<string[]> {
    const route = await this.route();
    return route === null ? [] : [route.path];
  }

  async #find(): Promise<DescriptorRoute | null> {
    if (kernelRouteWorks(this.#settings.grants ?? ALWAYS)) return KERNEL_ROUTE;
    if (process.platform !== "linux") return null;
    try {
      return await this.#throughLink();
    } catch (error) {
      if (this.#settings.descriptorRoute === "best-effort") return null;
      throw error;
    }
  }

  async #throughLink(): Promise<DescriptorRoute> {
    const link = this.#settings.descriptorLink ?? defaultDescriptorLink();
    if (link === null) {
      throw routeMissing(
        `the path of that link, /tmp/openwork-tools-fd-<uid>, holds the user id, which Deno ` +
          `tells only with --allow-sys=uid`,
        "runtime_permission_denied",
      );
    }
    const grants = this.#settings.grants ?? ALWAYS;
    if (!grants("read", link) || !grants("write", link)) {
      throw routeMissing(
        `Deno's flags do not grant reading and writing that link, ${link} (${linkFlags(link)})`,
        "runtime_permission_denied",
      );
    }
    let verified: VerifiedLink;
    try {
      verified = verifyLink(link);
    } catch (error) {
      if (codeOfRuntimeError(error) !== "not_found") throw unusable(error, link);
      try {
        await this.#settings.makeLink(PROC_SELF_FD, link);
      } catch (made) {
        // Another process of this user may have made it meanwhile: it is verified like any other.
        if (codeOfRuntimeError(made) !== "already_exists") {
          const refusal = runtimeRefusal(made);
          throw routeMissing(
            `the link ${link} is missing and could not be made: ` +
              (refusal?.message ?? (made as Error)?.message ?? String(made)),
            refusal === null ? "backend_failure" : "runtime_permission_denied",
          );
        }
      }
      try {
        verified = verifyLink(link);
      } catch (again) {
        throw unusable(again, link);
      }
    }
    // Verified again once the second of its change time is over: a replacement made within that
    // second (even one given the same inode number) has the same change time, and only the
    // text, read after it, tells.
    for (
      let wait = verified.settledAt - Date.now();
      wait > 0;
      wait = verified.settledAt - Date.now()
    ) {
      await sleep(wait);
      try {
        verified = verifyLink(link);
      } catch (error) {
        throw unusable(error, link);
      }
    }
    const route = linkRoute(verified, () => {
      if (this.#route === route) this.#route = undefined;
    });
    try {
      // Deno must let a path through the link reach the kernel's directory.
      statSync(link);
    } catch (error) {
      throw unusable(error, link);
    }
    route.check();
    return route;
  }
}

/** Blocks this thread (a worker's) for `ms` milliseconds. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * The route in a search worker, from the paths its backend found
 * ({@link RouteKeeper.paths}): the first through which the runtime here can
 * name a descriptor, verified again here, found with the first descriptor
 * the worker opens. With no paths, the best effort the backend chose; with
 * paths of which none works, an error.
 */
export class Routes {
  readonly #candidates: readonly string[];
  #route: DescriptorRoute | null | undefined = undefined;

  /** Routes to try, in order. */
  constructor(candidates: readonly string[]) {
    this.#candidates = candidates;
  }

  /**
   * The route a backend's {@link RouteKeeper} found on the calling thread,
   * for its own use there: taken as it is, not probed again.
   */
  static found(route: DescriptorRoute | null): Routes {
    const routes = new Routes(route === null ? [] : [route.path]);
    routes.#route = route;
    return routes;
  }

  /** The route, probed with `fd` (a descriptor just opened) the first time. */
  of(fd: number): DescriptorRoute | null {
    if (this.#route !== undefined) return this.#route;
    if (this.#candidates.length === 0) return (this.#route = null);
    const failures: string[] = [];
    for (const candidate of this.#candidates) {
      try {
        const route = candidate === PROC_SELF_FD ? KERNEL_ROUTE : this.#link(candidate);
        readlinkSync(descriptorPath(route.path, fd));
        route.check();
        return (this.#route = route);
      } catch (error) {
        if (error instanceof RouteChanged) throw error;
        failures.push(`${candidate}: ${(error as Error)?.message ?? String(error)}`);
      }
    }
    throw routeMissing(
      `none of its routes works in the search workers (${failures.join("; ")})`,
      "backend_failure",
    );
  }

  #link(path: string): DescriptorRoute {
    let verified = verifyLink(path);
    // As on the calling thread: verified again once the second of its change time is over.
    for (
      let wait = verified.settledAt - Date.now();
      wait > 0;
      wait = verified.settledAt - Date.now()
    ) {
      pause(wait);
      verified = verifyLink(path);
    }
    const route = linkRoute(verified, () => {
      if (this.#route === route) this.#route = undefined;
    });
    return route;
  }
}
