import { tempDirUntilExit } from "./temp.ts";
/** Git for tests: a small repository with a failing check, for agent tests, and `git()`. */

/** The buggy module and its check. */
export const BUGGY = "def add(a, b):\n    return a - b\n";
export const CHECK =
  "import calc\nassert calc.add(2, 3) == 5, 'add is broken'\nprint('check passed')\n";

/** Runs git in `cwd` and returns its output, trimmed; a failing git fails the test with its
 * error text. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout).trim();
}

/** Creates the repository in a new temp dir (removed when the test process ends); its real path. */
export async function makeBuggyRepo(): Promise<string> {
  const dir = await tempDirUntilExit("deft-repo-");
  await Deno.writeTextFile(`${dir}/calc.py`, BUGGY);
  await Deno.writeTextFile(`${dir}/check.py`, CHECK);
  await git(dir, "init", "-q");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
  return dir;
}

/** Puts the repository back to its committed state. */
export async function resetRepo(dir: string): Promise<void> {
  await git(dir, "checkout", "-q", "--", ".");
  await git(dir, "clean", "-qfd");
}
