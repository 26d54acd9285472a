/**
 * Deno's answer to `permissionState` (see `runtime/checks.ts`), registered
 * when this module is loaded: every Deno adapter imports it, and so do the
 * Deno defaults a session starts with.
 *
 * @module
 */
import { isDeno, type PermissionState, registerPermissionQuery } from "../../runtime/checks.ts";

// Under Node (the JSR package's sources run there too) there is nothing to ask.
if (isDeno) {
  registerPermissionQuery((query) =>
    Deno.permissions.querySync(query as Deno.PermissionDescriptor).state as PermissionState
  );
}
