/**
 * The Deno flags tests start Deft with. The permission flags are `deno task deft`'s own
 * (src/policy/self.ts); the unstable flags are the ones README documents for the one-file
 * bundle, which needs fewer than a run from source.
 */
import { FULL_PERMISSION_FLAGS } from "../../src/policy/self.ts";

/** What running the bundle needs besides permissions. */
export const BUNDLE_BASE_FLAGS: readonly string[] = [
  "--unstable-raw-imports",
  "--unstable-worker-options",
  "--no-prompt",
];

/** The bundle's flags with every permission `deno task deft` grants. */
export const BUNDLE_FULL_FLAGS: readonly string[] = [
  ...BUNDLE_BASE_FLAGS,
  ...FULL_PERMISSION_FLAGS,
];
