/**
 * Deno's cache is a control folder (src/policy/dirs.ts, `denoDir`): the code it holds is what the
 * next `deno run` of Deft (or of anything else) executes on the host. With the workspace at a
 * `$HOME` under /tmp and no DENO_DIR, Deno keeps that cache at its default place, `~/.cache/deno`,
 * inside the workspace; the model's sandboxed shell (real bwrap) may write the project but not
 * that folder: no new file, no changed file, not renamed or removed away.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { REPO_ROOT } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

/**
 * `deft tool bash` in `home`, with an environment that names no DENO_DIR and no XDG folder. Deft's
 * own cache is put elsewhere (`deftCache`), so that `~/.cache` holds Deno's cache alone: what
 * guards it there is that it is Deno's.
 */
async function bashAtHome(home: string, deftCache: string, command: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...deftFlags(),
      `${REPO_ROOT}main.ts`,
      "tool",
      "bash",
      JSON.stringify({ command }),
      "--sandbox",
      "workspace-write",
    ],
    cwd: home,
    clearEnv: true,
    env: {
      HOME: home,
      DEFT_CACHE_DIR: deftCache,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
    },
    stdin: "null",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("workspace at $HOME, DENO_DIR unset: Deno's cache at ~/.cache/deno is read-only to the model's shell", async () => {
  await using temp = await tempDir("deft-ctl-deno-");
  const home = await Deno.realPath(temp.path);
  await using other = await tempDir("deft-ctl-deno-cache-");
  const cache = join(home, ".cache", "deno");
  // A first run fills Deno's default cache under this HOME (compiled code of Deft itself).
  const warm = await bashAtHome(home, other.path, "true");
  assert.equal(warm.code, 0, warm.stdout + warm.stderr);
  assert.ok(await exists(cache), "Deno made no cache at its default place under HOME");
  assert.deepEqual(
    [...Deno.readDirSync(join(home, ".cache"))].map((e) => e.name),
    ["deno"],
    "~/.cache holds more than Deno's cache",
  );
  await Deno.writeTextFile(join(cache, "planted.js"), "export const v = 1;\n");
  const script = [
    "echo 'export const v = 2;' > .cache/deno/planted.js 2>/dev/null && echo CHANGED-FILE",
    "echo x > .cache/deno/evil.js 2>/dev/null && echo NEW-FILE",
    "mkdir -p .cache/deno/gen/evil 2>/dev/null && echo NEW-FOLDER",
    "mv .cache/deno .cache/deno-old 2>/dev/null && echo MOVED-CACHE",
    "mv .cache .cache-moved 2>/dev/null && echo MOVED-PARENT",
    "rm -rf .cache/deno 2>/dev/null; [ -e .cache/deno/planted.js ] || echo REMOVED-CACHE",
    "echo mine > project.txt && echo WROTE-PROJECT",
  ].join("\n");
  const r = await bashAtHome(home, other.path, script);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout).output as string;
  assert.match(out, /WROTE-PROJECT/);
  for (
    const word of [
      "CHANGED-FILE",
      "NEW-FILE",
      "NEW-FOLDER",
      "MOVED-CACHE",
      "MOVED-PARENT",
      "REMOVED-CACHE",
    ]
  ) {
    assert.doesNotMatch(out, new RegExp(word), `${word}: ${out}`);
  }
  assert.equal(await Deno.readTextFile(join(home, "project.txt")), "mine\n");
  assert.equal(await Deno.readTextFile(join(cache, "planted.js")), "export const v = 1;\n");
  assert.equal(await exists(join(cache, "evil.js")), false);
  assert.equal(await exists(join(cache, "gen", "evil")), false);
  assert.equal(await exists(join(home, ".cache", "deno-old")), false);
  assert.equal(await exists(join(home, ".cache-moved")), false);
});
