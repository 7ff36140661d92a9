/** The read-only sandbox's answer to a write the editors were asked for. */

/** Why a write to `path` is refused under `sandbox: read-only`, and what to do instead. */
export function readOnlyRefusal(path: string): string {
  return `The workspace is read-only (sandbox: read-only), so ${path} cannot be changed. ` +
    `View files only, or run Deft with --sandbox workspace-write to allow edits.`;
}
