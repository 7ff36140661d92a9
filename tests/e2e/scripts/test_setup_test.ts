/**
 * `deno task test:setup` (scripts/test_setup.ts) run for real by a user who is not root, with a
 * PATH of stub programs: a sudo that asks for a password makes it stop at once with one message
 * naming the packages; a sudo that lets it through gets exactly the apt-get commands.
 */
import assert from "node:assert/strict";
import { type Nobody, nobody } from "../../helpers/as_nobody.ts";
import { tempDir } from "../../helpers/temp.ts";

const FLAGS = ["run", "--allow-read", "--allow-run", "--allow-env", "--allow-sys"];

/** A folder of stub programs: `sudo` as given, an `apt-get` that logs its argv to `log`. */
async function stubPath(dir: string, sudo: string, log: string): Promise<string> {
  const bin = `${dir}/bin`;
  await Deno.mkdir(bin);
  await Deno.writeTextFile(`${bin}/sudo`, `#!/bin/sh\n${sudo}\n`, { mode: 0o755 });
  await Deno.writeTextFile(`${bin}/apt-get`, `#!/bin/sh\necho "apt-get $*" >>'${log}'\n`, {
    mode: 0o755,
  });
  // git is there; bwrap, python3, ctags and the rest of /usr/bin are not.
  await Deno.symlink("/usr/bin/git", `${bin}/git`);
  return bin;
}

/** Runs the set-up as `user` with PATH `bin` alone (set by env, after setpriv is found). */
function setUpAs(user: Nobody, bin: string) {
  const script = `${user.code}/scripts/test_setup.ts`;
  return user.run("/usr/bin/env", [`PATH=${bin}`, user.deno, ...FLAGS, script]);
}

Deno.test({
  name: "test set-up: not root and sudo asks a password → stops with one message, installs nothing",
  sanitizeResources: false,
}, async () => {
  await using user = await nobody();
  await using dir = await tempDir();
  const log = `${dir.path}/apt.log`;
  const bin = await stubPath(dir.path, 'echo "sudo: a password is required" >&2; exit 1', log);
  await Deno.chmod(dir.path, 0o755);
  const out = await setUpAs(user, bin);
  assert.equal(out.code, 1, out.stderr);
  const text = out.stderr;
  // Set apart from what came before (`deno task`'s package install), first thing it says.
  assert.match(text, /^\nNo test was run: the tests need what this machine does not have:\n/);
  assert.match(text, /\n {2}bwrap \(bubblewrap\)\n/);
  assert.match(text, /\n {2}python3 \(python3\)\n/);
  assert.doesNotMatch(text, /\n {2}git \(git\)\n/);
  assert.match(text, /not root, and sudo is missing or asks for a password/);
  assert.match(text, /\n {2}sudo apt-get update && sudo apt-get install -y bubblewrap python3 /);
  // One message: the header appears once, and nothing ran apt-get.
  assert.equal(text.split("the tests need").length, 2, text);
  assert.equal(await Deno.readTextFile(log).catch(() => ""), "");
});

Deno.test({
  name: "test set-up: not root with a sudo that asks nothing → apt-get through sudo -n",
  sanitizeResources: false,
}, async () => {
  await using user = await nobody();
  await using dir = await tempDir();
  const log = `${dir.path}/apt.log`;
  const bin = await stubPath(
    dir.path,
    '[ "$1" = -n ] && shift; PATH="$PATH:/usr/bin:/bin" exec "$@"',
    log,
  );
  await Deno.chmod(dir.path, 0o777);
  const out = await setUpAs(user, bin);
  const logged = await Deno.readTextFile(log).catch(() => "");
  const lines = logged.trim().split("\n");
  assert.equal(lines[0], "apt-get update -qq", out.stderr);
  assert.match(lines[1], /^apt-get install -y -qq bubblewrap python3 universal-ctags procps /);
  assert.doesNotMatch(lines[1], / git( |$)/);
  assert.match(out.stderr, /^test set-up: installing bubblewrap python3 .* \(with sudo\)\n/);
  // The stub installed nothing: the set-up says so and stops, before any test.
  assert.equal(out.code, 1);
  assert.match(out.stderr, /still missing after the install/);
});
