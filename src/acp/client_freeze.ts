/**
 * A request to the ACP client about a file, made safe against a model racing it. The client opens
 * the path again, by name and as the user, outside the sandbox; a model process swapping a folder
 * on the way for a link out of the workspace would lead it outside. So with a sandbox every
 * request is made with every process in Deft's sandboxes stopped (src/policy/freeze.ts) and the
 * path's whole chain checked again while they are: its real path is still itself and a regular
 * file. When the freeze cannot be made (or is seen broken after a read), the client is not asked
 * (`StoreDeclined`): the disk editor does the call, confined in its own sandbox. The frozen time is
 * bounded: a client that does not answer in time gets the session's shells stopped (so a late
 * write cannot be raced) before anything runs again. With `sandbox: none` the model's shell
 * already reaches everything the user does; the path is checked, nothing is frozen.
 */
import { FreezeRefused, freezeSandboxes } from "../policy/freeze.ts";
import { FileToolError } from "../tools/fs/errors.ts";
import { StoreDeclined } from "../tools/edit/store.ts";

/** How long a frozen sandbox waits for the client's answer, unless told otherwise. */
export const CLIENT_ANSWER_MS = 10_000;

/** How a request to the client is made. */
export interface FreezeOptions {
  /** The session's sandbox mode (`none`: nothing to freeze). */
  sandbox: string | undefined;
  /** How long the client's answer is waited for, the sandboxes frozen. */
  answerMs: number;
  /** Ends every process the model's shell started, for a client that did not answer in time. */
  stopShells?(): Promise<void>;
}

/** One freeze at a time in this process: each covers every sandbox Deft started. */
let freezes: Promise<unknown> = Promise.resolve();

/**
 * `op`, a `kind` request to the client about `real`, made with the sandboxes frozen and the path
 * checked again first. Throws `StoreDeclined` when the client must not (or could not safely) be
 * asked, `FileToolError` when it did not answer in time or a write was not held safe.
 */
export async function askClient<T>(
  real: string,
  kind: "read" | "write",
  op: () => Promise<T>,
  options: FreezeOptions,
): Promise<T> {
  if (options.sandbox === "none") {
    await checkChain(real);
    return await op();
  }
  const mine = freezes.then(() => frozen(real, kind, op, options));
  freezes = mine.catch(() => {});
  return await mine;
}

async function frozen<T>(
  real: string,
  kind: "read" | "write",
  op: () => Promise<T>,
  options: FreezeOptions,
): Promise<T> {
  const { answerMs } = options;
  let freeze;
  try {
    // The freeze's own bound, should this process stop answering it.
    freeze = await freezeSandboxes(answerMs / 1000 + 10);
  } catch (e) {
    if (e instanceof FreezeRefused) {
      throw new StoreDeclined(`the sandbox's processes could not be stopped (${e.message})`);
    }
    throw e;
  }
  let outcome: { value: T } | { error: unknown } | "late" = "late";
  let verdict: { held: boolean; why?: string } = { held: false };
  try {
    await checkChain(real);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), answerMs);
    });
    outcome = await Promise.race([
      op().then((value) => ({ value }), (error) => ({ error })),
      late,
    ]);
    clearTimeout(timer);
    // Before anything runs again: a write still to come must find no racer.
    if (outcome === "late") await options.stopShells?.().catch(() => {});
  } finally {
    verdict = await freeze.release();
  }
  if (outcome === "late") {
    throw new FileToolError(
      `The editor (the ACP client) did not answer within ${answerMs / 1000} s about ` +
        `${real}. The shell was stopped meanwhile (its next command starts a fresh one), so a ` +
        `late ${kind} cannot be misled. Check the file in the editor, then try again.`,
    );
  }
  if (!verdict.held) {
    if (kind === "read") {
      throw new StoreDeclined(`the sandbox's processes were not all held still (${verdict.why})`);
    }
    throw new FileToolError(
      `The editor (the ACP client) wrote ${real}, but the sandbox's processes were not all held ` +
        `still meanwhile (${verdict.why}). Check ${real} and the files it could lead to.`,
    );
  }
  if ("error" in outcome) throw outcome.error;
  return outcome.value;
}

/**
 * `real` still names itself through every folder (no link swapped in on the way) and is a
 * regular file; else the call goes to the disk editor, which resolves the path again.
 */
async function checkChain(real: string): Promise<void> {
  let now: string;
  let info: Deno.FileInfo;
  try {
    now = await Deno.realPath(real);
    info = await Deno.lstat(real);
  } catch {
    throw new StoreDeclined("the path changed while it was being checked");
  }
  if (now !== real || !info.isFile) {
    throw new StoreDeclined("the path changed while it was being checked");
  }
}
