/**
 * Runs one test of a test file as `nobody` (uid and gid 65534, no supplementary groups), for
 * tests whose subject is a user who is not root (a read-only file, a namespace without
 * privileges) when the suite runs as root, as CI does. `setpriv` drops the ids; HOME and
 * DENO_DIR point into a fresh folder `nobody` owns. Only root may call it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "./deft.ts";

const NOBODY = "65534";

/** Runs the tests of `file` (a path from the repository root) whose names contain `name`. */
export async function assertPassesAsNobody(file: string, name: string): Promise<void> {
  assert.equal(Deno.uid(), 0, "only root can run a test as another user");
  const home = await Deno.makeTempDir({ prefix: "deft-nobody-" });
  try {
    await Deno.chown(home, Number(NOBODY), Number(NOBODY));
    const deno = await denoFor(home);
    const code = await codeFor(home);
    const out = await new Deno.Command("setpriv", {
      args: ["--reuid", NOBODY, "--regid", NOBODY, "--clear-groups", "--", deno, "test", "-A"]
        .concat(["--no-check", "--filter", name, file]),
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        DENO_DIR: join(home, "deno"),
      },
      cwd: code,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, `as nobody, ${file} "${name}" failed:\n${text}`);
    // A filter that matches nothing passes too: the test must have run.
    assert.match(text, /\| [1-9]\d* passed/, `as nobody, no test named "${name}" ran:\n${text}`);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/**
 * A copy of Deft's code and tests that `nobody` owns: the checkout may sit where only root can
 * read (a clone in a 0700 temp folder, as CI makes it).
 */
async function codeFor(home: string): Promise<string> {
  const code = join(home, "deft");
  await Deno.mkdir(code);
  for (const part of ["src", "tests", "scripts", "deno.json", "deno.lock"]) {
    const copied = await new Deno.Command("cp", { args: ["-r", join(REPO_ROOT, part), code] })
      .output();
    assert.ok(copied.success, `copying ${part} for nobody`);
  }
  const owned = await new Deno.Command("chown", { args: ["-R", `${NOBODY}:${NOBODY}`, code] })
    .output();
  assert.ok(owned.success, "the copy is given to nobody");
  return code;
}

/** A Deno `nobody` may start: this one, else a copy in `home` (npx keeps Deno under /root). */
async function denoFor(home: string): Promise<string> {
  const probe = await new Deno.Command("setpriv", {
    args: ["--reuid", NOBODY, "--regid", NOBODY, "--clear-groups", "--", Deno.execPath(), "-V"],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => undefined);
  if (probe?.success) return Deno.execPath();
  const copy = join(home, "deno");
  await Deno.copyFile(Deno.execPath(), copy);
  await Deno.chmod(copy, 0o755);
  return copy;
}
