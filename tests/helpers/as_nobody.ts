/**
 * Runs a part of a test as `nobody` (uid and gid 65534, no supplementary groups), for tests whose
 * subject is a user who is not root (a read-only file, a namespace without privileges, jobs a
 * cluster runs for an ordinary user) when the suite runs as root, as CI does. `setpriv` drops the
 * ids; HOME and DENO_DIR point into a fresh folder `nobody` owns, which also holds a copy of
 * Deft's code and, where root's Deno lies out of `nobody`'s reach, of Deno. Only root may call it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type DeftRun, denoDir, REPO_ROOT } from "./deft.ts";
import { deftFlags } from "../../scripts/deft_flags.ts";
import { tempDirUntilExit } from "./temp.ts";

const NOBODY = "65534";

/**
 * `setpriv`'s argv that runs `argv` as nobody. setpriv still holds root's capabilities when it
 * starts its program, so it may start one nobody could not (a Deno in a 0700 folder); a shell in
 * between, already without them, starts it as nobody would.
 */
function asNobody(argv: string[]): string[] {
  return ["--reuid", NOBODY, "--regid", NOBODY, "--clear-groups", "--", "/bin/sh", "-c"]
    .concat(['exec "$@"', "sh", ...argv]);
}

/** `nobody`'s uid (and gid). */
export const NOBODY_UID = Number(NOBODY);

/** A user who is not root, with a HOME, a Deno and a copy of Deft they own. */
export interface Nobody extends AsyncDisposable {
  /** Their HOME: a fresh folder under the temp dir, mode 0700, owned by them. */
  readonly home: string;
  /** Their copy of Deft's checkout (main.ts, src, tests, scripts, deno.json, deno.lock). */
  readonly code: string;
  /** A Deno binary they may start. */
  readonly deno: string;
  /** Runs `program ARGS` as them, with PATH, HOME, DENO_DIR and `env`; never throws for its exit. */
  run(
    program: string,
    args: string[],
    options?: { env?: Record<string, string>; cwd?: string },
  ): Promise<DeftRun>;
  /** Runs their `deft ARGS` as a user would (`deno run` with the `deft` task's flags). */
  deft(args: string[], options?: { env?: Record<string, string>; cwd?: string }): Promise<DeftRun>;
  /** Makes `path` and everything in it theirs. */
  give(path: string): Promise<void>;
}

/**
 * Prepares `nobody`: a HOME, a copy of Deft and a Deno. With `packages`, their DENO_DIR starts
 * with the npm packages root's Deno holds (about 300 MB, a few seconds to copy), which running
 * Deft needs; without, their Deno downloads whatever the code they run imports. Fails with what
 * is missing when this machine has no such user or no `setpriv`, or the test does not run as root.
 */
export async function nobody(options: { packages?: boolean } = {}): Promise<Nobody> {
  assert.equal(Deno.uid(), 0, "only root can run a test as another user");
  const known = await new Deno.Command("getent", { args: ["passwd", NOBODY], stdout: "null" })
    .output();
  assert.ok(
    known.success,
    `this machine has no user with uid ${NOBODY} (nobody); create it (useradd -u ${NOBODY} ` +
      `nobody) to run the tests that need a user who is not root`,
  );
  const home = await tempDirUntilExit("deft-nobody-");
  try {
    await Deno.chown(home, NOBODY_UID, NOBODY_UID);
    const deno = await denoFor(home);
    const code = await codeFor(home);
    await denoDirFor(home, options.packages ?? false);
    const base = {
      ...networkEnv(),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home,
      DENO_DIR: join(home, "deno"),
    };
    const run: Nobody["run"] = async (program, args, options = {}) => {
      const out = await new Deno.Command("setpriv", {
        args: asNobody([program, ...args]),
        env: { ...base, ...options.env },
        clearEnv: true,
        cwd: options.cwd ?? code,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const d = new TextDecoder();
      return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
    };
    const remove = () => Deno.remove(home, { recursive: true }).catch(() => {});
    return {
      home,
      code,
      deno,
      run,
      deft: (args, options = {}) =>
        run(deno, ["run", ...deftFlags(), join(code, "main.ts"), ...args], {
          ...options,
          env: { NO_COLOR: "1", ...options.env },
        }),
      give: (path) => chownToNobody(path),
      [Symbol.asyncDispose]: remove,
    };
  } catch (e) {
    await Deno.remove(home, { recursive: true }).catch(() => {});
    throw e;
  }
}

/** Runs the tests of `file` (a path from the repository root) whose names contain `name`. */
export async function assertPassesAsNobody(file: string, name: string): Promise<void> {
  await using user = await nobody();
  const out = await user.run(
    user.deno,
    ["test", "-A", "--no-check", "--filter", name, file],
  );
  const text = out.stdout + out.stderr;
  assert.equal(out.code, 0, `as nobody, ${file} "${name}" failed:\n${text}`);
  // A filter that matches nothing passes too: the test must have run.
  assert.match(text, /\| [1-9]\d* passed/, `as nobody, no test named "${name}" ran:\n${text}`);
}

/**
 * How this machine reaches package registries (proxies, the CA bundle a TLS-inspecting proxy needs):
 * the only part of root's environment `nobody` gets, so their Deno can fetch what it lacks.
 */
function networkEnv(): Record<string, string> {
  const names = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"]
    .flatMap((n) => [n, n.toLowerCase()])
    .concat(["SSL_CERT_FILE", "SSL_CERT_DIR", "DENO_CERT", "DENO_TLS_CA_STORE"])
    .concat(["NODE_EXTRA_CA_CERTS", "NPM_CONFIG_REGISTRY", "npm_config_registry"]);
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

async function chownToNobody(path: string): Promise<void> {
  const owned = await new Deno.Command("chown", { args: ["-R", `${NOBODY}:${NOBODY}`, path] })
    .output();
  assert.ok(owned.success, `${path} is given to nobody: ${new TextDecoder().decode(owned.stderr)}`);
}

/**
 * A copy of Deft's code and tests that `nobody` owns: the checkout may sit where only root can
 * read (a clone in a 0700 temp folder, as CI makes it), and Deno writes node_modules/ into it.
 */
async function codeFor(home: string): Promise<string> {
  const code = join(home, "deft");
  await Deno.mkdir(code);
  for (const part of ["main.ts", "src", "tests", "scripts", "deno.json", "deno.lock"]) {
    const copied = await new Deno.Command("cp", { args: ["-r", join(REPO_ROOT, part), code] })
      .output();
    assert.ok(copied.success, `copying ${part} for nobody`);
  }
  await chownToNobody(code);
  return code;
}

/**
 * `nobody`'s DENO_DIR; with `packages`, it starts with the npm packages root's Deno already holds,
 * so their Deno does not download some 300 MB again (it still fetches whatever is missing).
 */
async function denoDirFor(home: string, packages: boolean): Promise<void> {
  const dir = join(home, "deno");
  await Deno.mkdir(dir);
  const npm = join(denoDir(), "npm");
  if (packages && await Deno.stat(npm).then((s) => s.isDirectory, () => false)) {
    const copied = await new Deno.Command("cp", { args: ["-r", npm, dir] }).output();
    assert.ok(copied.success, `copying ${npm} for nobody`);
  }
  await chownToNobody(dir);
}

/** A Deno `nobody` may start: this one, else a copy in `home` (npx keeps Deno under /root). */
async function denoFor(home: string): Promise<string> {
  const probe = await new Deno.Command("setpriv", {
    args: asNobody([Deno.execPath(), "-V"]),
    stdout: "null",
    stderr: "null",
  }).output().catch((e) => {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error("setpriv is not on PATH: install util-linux to run tests as nobody");
    }
    throw e;
  });
  if (probe.success) return Deno.execPath();
  // Named `deno`, as Deft tells Deno from a compiled Deft by the name (src/policy/self.ts), in a
  // folder of its own: HOME/deno is their DENO_DIR.
  const copy = join(home, "bin", "deno");
  await Deno.mkdir(join(home, "bin"));
  await Deno.copyFile(Deno.execPath(), copy);
  await Deno.chmod(copy, 0o755);
  return copy;
}
