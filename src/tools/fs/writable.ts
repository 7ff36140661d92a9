/** The write-permission check both editors make before replacing a file. */
import { FileToolError } from "./errors.ts";

/**
 * Refuses a file its owner made read-only. An atomic rename would replace it regardless of its
 * permissions, so the editors ask the kernel first (this honours root, ACLs and group bits).
 */
export async function assertWritable(real: string, shown: string): Promise<void> {
  try {
    (await Deno.open(real, { write: true })).close();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
      throw new FileToolError(`The path ${shown} does not exist. Please provide a valid path.`);
    }
    if (e instanceof Deno.errors.PermissionDenied) {
      throw new FileToolError(
        `The file ${shown} is not writable (permission denied); it was not changed.`,
      );
    }
    throw e;
  }
}
