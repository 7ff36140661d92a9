/**
 * The read-only sandbox, decided here once: the worker's write permissions, bwrap's mount of the
 * workspace and the editors' refusal all follow `isReadOnly`.
 */

/** True when the workspace may be read and not written (`sandbox: read-only`). */
export function isReadOnly(settings: { sandbox?: string }): boolean {
  return settings.sandbox === "read-only";
}

/** Why a write to `path` is refused under `sandbox: read-only`, and what to do instead. */
export function readOnlyRefusal(path: string): string {
  return `The workspace is read-only (sandbox: read-only), so ${path} cannot be changed. ` +
    `View files only, or run Deft with --sandbox workspace-write to allow edits.`;
}
