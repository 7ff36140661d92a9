/**
 * The workspace a command line names (`-w DIR`, default the current directory), on its own so
 * that commands that run no tool (`deft sessions`, `deft ckg`) resolve it without loading the
 * tool host (context.ts re-exports it).
 */
import { realWorkspace } from "../policy/workspace.ts";
import { UsageError } from "./io.ts";

/** The real path of the workspace `-w DIR` names (default: the current directory). */
export async function workspaceOf(workingDir: string | undefined): Promise<string> {
  const dir = workingDir ?? currentDirectory();
  try {
    return await realWorkspace(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) {
      throw new UsageError(
        `Deno's permissions do not let Deft read the workspace ${dir}: add it to --allow-read ` +
          "(a symbolic link and its target both: Deno grants paths as written), " +
          "or pass another directory with -w.",
      );
    }
    const message = (e as Error).message.replace(/\.?$/, ".");
    throw new UsageError(`${message} Pass an existing directory with -w.`);
  }
}

function currentDirectory(): string {
  try {
    return Deno.cwd();
  } catch (e) {
    if (!(e instanceof Deno.errors.NotCapable)) throw e;
    throw new UsageError(
      "Deno's permissions do not let Deft read the current directory, the default workspace: " +
        "pass the workspace with -w DIR, or add it to --allow-read.",
    );
  }
}
