/**
 * Deft's own folders (src/policy/dirs.ts): with HOME unknown, never a folder of the shared temp
 * folder that anyone could make first (`/tmp/.local/state/deft`), but one of the user's own, made
 * private; and any of them refused when another user could have made it or can change it.
 */
import assert from "node:assert/strict";
import { deftCacheDir, deftConfigDir, DeftDirError, deftStateDir } from "../../src/policy/dirs.ts";
import { tempDir } from "../helpers/temp.ts";

const NAMES = [
  "HOME",
  "XDG_STATE_HOME",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "DEFT_CACHE_DIR",
  "TMPDIR",
];

/** Runs `body` with these variables only (of NAMES), restoring them after. */
function withEnv(vars: Record<string, string>, body: () => void): void {
  const saved = new Map(NAMES.map((n) => [n, Deno.env.get(n)]));
  try {
    for (const n of NAMES) {
      if (n in vars) Deno.env.set(n, vars[n]);
      else Deno.env.delete(n);
    }
    body();
  } finally {
    for (const [n, v] of saved) v === undefined ? Deno.env.delete(n) : Deno.env.set(n, v);
  }
}

for (
  const [label, vars] of [
    ["unset", {}],
    ["empty", { HOME: "" }],
    ["relative", { HOME: "home/me" }],
  ] as const
) {
  Deno.test(`HOME ${label}: state and cache go to folders of the user's own in TMPDIR, made private`, async () => {
    await using temp = await tempDir("deft-dirs-tmp-");
    withEnv({ ...vars, TMPDIR: temp.path }, () => {
      for (const [kind, get] of [["state", deftStateDir], ["cache", deftCacheDir]] as const) {
        const path = get();
        assert.equal(path, `${temp.path}/deft-${kind}-${Deno.uid()}`);
        const info = Deno.lstatSync(path);
        assert.ok(info.isDirectory && info.uid === Deno.uid(), `${path} is not the user's folder`);
        assert.equal(info.mode! & 0o077, 0, `${path} is open to others`);
      }
      assert.equal(deftConfigDir(), undefined);
    });
  });
}

Deno.test("HOME unset: a state or cache folder someone else made first in TMPDIR is refused", async () => {
  await using temp = await tempDir("deft-dirs-tmp-");
  await using elsewhere = await tempDir("deft-dirs-else-");
  for (const [kind, get] of [["state", deftStateDir], ["cache", deftCacheDir]] as const) {
    const planted = `${temp.path}/deft-${kind}-${Deno.uid()}`;
    await Deno.symlink(elsewhere.path, planted);
    withEnv({ TMPDIR: temp.path }, () => {
      assert.throws(() => get(), (e) => e instanceof DeftDirError && /is a link/.test(e.message));
    });
    await Deno.remove(planted);
    if (Deno.uid() === 0) { // only root can make a folder that is someone else's
      await Deno.mkdir(planted, { mode: 0o755 });
      await Deno.chown(planted, 65534, 65534);
      withEnv({ TMPDIR: temp.path }, () => {
        assert.throws(
          () => get(),
          (e) => e instanceof DeftDirError && /belongs to another user/.test(e.message),
        );
      });
    }
  }
});

Deno.test("a relative XDG_STATE_HOME is ignored for HOME's", () => {
  withEnv({ HOME: "/home/me", XDG_STATE_HOME: "state" }, () => {
    assert.equal(deftStateDir(), "/home/me/.local/state/deft");
  });
});

/** Each folder, how it is named by a base folder, and how to ask for it. */
const FOLDERS = [
  { name: "state", vars: (base: string) => ({ XDG_STATE_HOME: base }), get: deftStateDir },
  {
    name: "config",
    vars: (base: string) => ({ XDG_CONFIG_HOME: base }),
    get: () => deftConfigDir(),
  },
  { name: "cache", vars: (base: string) => ({ XDG_CACHE_HOME: base }), get: deftCacheDir },
];

for (const folder of FOLDERS) {
  Deno.test(`the ${folder.name} folder: the user's own is used, a link or a shared one refused`, async () => {
    await using temp = await tempDir("deft-dirs-");
    const deft = `${temp.path}/deft`;
    const vars = { HOME: "/nonexistent", ...folder.vars(temp.path) };
    const refused = (why: RegExp) =>
      withEnv(vars, () => {
        assert.throws(
          () => folder.get(),
          (e) => e instanceof DeftDirError && why.test(e.message) && e.message.includes(deft),
        );
      });

    // Missing: made now, private.
    withEnv(vars, () => assert.equal(folder.get(), deft));
    assert.equal((await Deno.stat(deft)).mode! & 0o077, 0);
    withEnv(vars, () => assert.equal(folder.get(), deft));

    await Deno.chmod(deft, 0o777);
    refused(/writable by other users/);
    await Deno.chmod(deft, 0o770);
    refused(/writable by its group/);
    await Deno.remove(deft);

    await Deno.mkdir(`${temp.path}/elsewhere`, { mode: 0o700 });
    await Deno.symlink(`${temp.path}/elsewhere`, deft);
    refused(/is a link/);
    await Deno.remove(deft);

    await Deno.writeTextFile(deft, "");
    refused(/is not a folder/);
    await Deno.remove(deft);

    if (Deno.uid() === 0) { // only root can make a folder that is someone else's
      await Deno.mkdir(deft, { mode: 0o700 });
      await Deno.chown(deft, 65534, 65534);
      refused(/belongs to another user/);
    }
  });
}

Deno.test("under a umask of 002, the folders Deft makes are not refused on the next run", async () => {
  await using temp = await tempDir("deft-dirs-umask-");
  const before = Deno.umask(0o002);
  try {
    withEnv({ HOME: temp.path }, () => {
      for (
        const [get, inside] of [[deftStateDir, "trajectories"], [deftCacheDir, "ckg"]] as const
      ) {
        const path = get();
        // What a run then writes there, as the recorder and the code graph make their folders.
        Deno.mkdirSync(`${path}/${inside}`, { recursive: true });
        assert.equal(get(), path, "refused on the next run");
        assert.equal(Deno.statSync(path).mode! & 0o077, 0, `${path} is open to the group`);
      }
    });
  } finally {
    Deno.umask(before);
  }
});
