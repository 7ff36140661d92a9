/**
 * `deno task demo`: Deft's agent loop end to end with no API key. A small repository with a bug is
 * copied to a temporary directory, and `deft run --replay` feeds the recorded model responses in
 * examples/demo/trajectory.json while the tools run for real: view, check (fails), edit, check
 * (passes), task_done. Prints the patch and exits with deft's exit code.
 */
import { deftFlags } from "../scripts/deft_flags.ts";

const here = new URL(".", import.meta.url).pathname;
const root = new URL("..", import.meta.url).pathname;

async function run(cmd: string, args: string[], cwd: string): Promise<number> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "inherit", stderr: "inherit" })
    .output();
  return out.code;
}

const repo = await Deno.makeTempDir({ prefix: "deft-demo-" });
try {
  for (const entry of Deno.readDirSync(`${here}demo/repo`)) {
    await Deno.copyFile(`${here}demo/repo/${entry.name}`, `${repo}/${entry.name}`);
  }
  const git = ["-c", "user.name=deft", "-c", "user.email=demo@deft.invalid"];
  await run("git", ["init", "-q"], repo);
  await run("git", [...git, "add", "."], repo);
  await run("git", [...git, "commit", "-qm", "demo repository"], repo);
  const patch = `${repo}.patch`;
  const flags = deftFlags();
  const code = await run(Deno.execPath(), [
    "run",
    // The npm packages' download progress (a fresh machine's first run) would bury the demo.
    "--quiet",
    ...flags,
    `${root}main.ts`,
    "run",
    "--replay",
    `${here}demo/trajectory.json`,
    "-w",
    repo,
    "--patch-path",
    patch,
    "-t",
    `${repo}.trajectory.json`,
  ], repo);
  console.log(`\nThe patch the agent produced (${patch}):\n`);
  console.log(await Deno.readTextFile(patch));
  Deno.exitCode = code;
} finally {
  await Deno.remove(repo, { recursive: true });
  for (const leftover of [`${repo}.patch`, `${repo}.trajectory.json`]) {
    await Deno.remove(leftover).catch(() => {});
  }
}
