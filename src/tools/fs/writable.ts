/** The write-permission check both editors make before replacing a file. */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { FileToolError } from "./errors.ts";

/**
 * Refuses a file its owner made read-only. An atomic rename would replace it regardless of its
 * permissions, so the editors ask the kernel first (this honours root, ACLs and group bits). The
 * open never waits: a FIFO swapped in for the file (no reader) fails at once with ENXIO instead
 * of holding the call until a reader comes.
 */
export async function assertWritable(real: string, shown: string): Promise<void> {
  try {
    await (await open(real, constants.O_WRONLY | constants.O_NONBLOCK)).close();
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR" || e instanceof Deno.errors.NotFound) {
      throw new FileToolError(`The path ${shown} does not exist. Please provide a valid path.`);
    }
    if (code === "EROFS") await refuseProtected(e, real, shown);
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") {
      throw new FileToolError(
        `The file ${shown} is not writable (permission denied); it was not changed.`,
      );
    }
    if (code === "ENXIO") {
      throw new FileToolError(
        `The path ${shown} is not a regular file (a device, socket or pipe); the editor only ` +
          `works on regular files.`,
      );
    }
    throw e;
  }
}

/** True for the kernel's "read-only file system" (EROFS), as Deno or node:fs reports it. */
export function isReadOnlyFs(e: unknown): boolean {
  return (e as { code?: string } | null)?.code === "EROFS" ||
    (e instanceof Error && /\(os error 30\)/.test(e.message));
}

/**
 * Throws the policy's refusal for a write to `real` that failed on a read-only file system
 * because the path is one the sandbox keeps from the model (`-w ~`: ~/.bashrc, ~/.ssh, Deft's
 * control folders); returns when `e` is another error or no protected place explains it.
 */
export async function refuseProtected(e: unknown, real: string, shown: string): Promise<void> {
  if (!isReadOnlyFs(e)) return;
  // Loaded on this error only: the policy's list of places stays out of the editors' start.
  const { protectedWriteRefusal } = await import("../../policy/control_cover.ts");
  const refusal = protectedWriteRefusal(real, shown);
  if (refusal) throw new FileToolError(refusal);
}
