/**
 * A repository that configures programs for git (planted by the model's own sandboxed shell):
 * Deft's git calls — the code graph's `git ls-files` and the run's patch — never start them.
 */
import assert from "node:assert/strict";
import { discoverSources } from "../../../src/ckg/discover.ts";
import { workspacePatch } from "../../../src/agent/patch.ts";
import { runGit } from "../../../src/policy/git.ts";
import { withHarness } from "../../helpers/bash.ts";
import type { ToolSettings } from "../../../src/tools/base.ts";
import { markersIn, plantHostileConfig } from "../../helpers/hostile_git.ts";
import { tempDir } from "../../helpers/temp.ts";
import { git } from "../../helpers/repo.ts";

// The shell plants programs for git (see tests/helpers/hostile_git.ts) in a fresh repository.
function plant(markers: string): string {
  return [
    "git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m init",
    "echo 'int main(void) { return 0; }' > main.c && echo 'hello' > notes.txt",
    plantHostileConfig(markers),
  ].join(" && ");
}

for (const settings of [{}, { sandbox: "workspace-write" }] as ToolSettings[]) {
  const mode = settings.sandbox ?? "none";
  Deno.test(`git: programs planted by the shell (sandbox ${mode}) never run on the host`, async () => {
    // Markers go under the user's home-like temp dir, which the sandboxed shell can read but not
    // write: a marker can only appear there if something ran outside the sandbox.
    await using markersDir = await tempDir("deft-git-markers-");
    const markers = markersDir.path;
    await withHarness(settings, async (h) => {
      const planted = await h.run(plant(markers));
      assert.equal(planted.error_code, 0, String(planted.error));

      const discovery = await discoverSources(h.workspace, "");
      assert.equal(discovery.mode, "git");
      assert.deepEqual(discovery.files, ["main.c"]);

      const patch = await workspacePatch(h.workspace);
      assert.match(patch, /\+hello/);
      assert.match(patch, /\+int main/);
      assert.deepEqual(await markersIn(markers), []);

      // The attack is real: git run plainly in the same repository starts the planted programs.
      await new Deno.Command("git", {
        args: ["ls-files"],
        cwd: h.workspace,
        stdout: "null",
        stderr: "null",
      }).output();
      assert.ok((await markersIn(markers)).includes("fsmonitor"), "plain git runs fsmonitor");
    });
  });
}

Deno.test("git: runGit ignores GIT_CONFIG_* smuggled in through its env option", async () => {
  await using tmp = await tempDir("deft-git-env-");
  const dir = tmp.path;
  await runGit(dir, ["init", "-q"]);
  const r = await runGit(dir, ["config", "core.fsmonitor"], {
    env: { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "x.y", GIT_CONFIG_VALUE_0: "z" },
  });
  assert.equal(r.out.trim(), "false");
});

Deno.test("git: a git-lfs repository (a required clean filter) still gives a patch, its driver off", async () => {
  await using tmp = await tempDir("deft-git-lfs-");
  const dir = await Deno.realPath(tmp.path);
  await git(dir, "init", "-q");
  await Deno.writeTextFile(`${dir}/model.bin`, "old weights\n");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init");
  // As `git lfs install` leaves it: a clean filter that must succeed, for every *.bin file.
  await Deno.writeTextFile(`${dir}/.gitattributes`, "*.bin filter=lfs diff=lfs merge=lfs -text\n");
  await git(dir, "config", "filter.lfs.clean", "git-lfs clean -- %f");
  await git(dir, "config", "filter.lfs.smudge", "git-lfs smudge -- %f");
  await git(dir, "config", "filter.lfs.process", "git-lfs filter-process");
  await git(dir, "config", "filter.lfs.required", "true");
  await Deno.writeTextFile(`${dir}/model.bin`, "new weights\n");
  const patch = await workspacePatch(dir);
  assert.match(patch, /-old weights\n\+new weights/, `no patch: ${JSON.stringify(patch)}`);
});
