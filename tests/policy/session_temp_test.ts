import assert from "node:assert/strict";
import { createSessionTemp, sweepOrphans } from "../../src/policy/session_temp.ts";
import { tempDir } from "../helpers/temp.ts";

const ns = /^pid:\[(\d+)\]$/.exec(Deno.readLinkSync("/proc/self/ns/pid"))![1];
// No process has a pid at or above pid_max.
const deadPid = Number(Deno.readTextFileSync("/proc/sys/kernel/pid_max").trim());

Deno.test("a session folder is named for its owner, and removed when closed", async () => {
  await using parent = await tempDir("deft-st-");
  const temp = createSessionTemp([parent.path])!;
  assert.match(temp.path, new RegExp(`/deft-session-${ns}\\.${Deno.pid}-[^/]+$`));
  assert.equal(Deno.statSync(temp.path).mode! & 0o777, 0o700);
  temp.remove();
  assert.throws(() => Deno.statSync(temp.path), Deno.errors.NotFound);
});

Deno.test("a killed Deft's session folder is swept by the next one; nothing else is", async () => {
  await using parent = await tempDir("deft-st-");
  const at = (name: string) => `${parent.path}/${name}`;
  await using outside = await tempDir("deft-st-outside-");
  Deno.writeTextFileSync(`${outside.path}/keep`, "keep");
  // The orphan holds a link out: removing it must not follow the link.
  const orphan = at(`deft-session-${ns}.${deadPid}-abc`);
  Deno.mkdirSync(`${orphan}/deep`, { recursive: true });
  Deno.writeTextFileSync(`${orphan}/deep/file`, "x");
  Deno.symlinkSync(outside.path, `${orphan}/link`);
  const live = at(`deft-session-${ns}.${Deno.pid}-live`);
  // pid 1 runs in every pid namespace: another Deft's folder, alive.
  const alive = at(`deft-session-${ns}.1-alive`);
  const otherNs = at(`deft-session-1.${deadPid}-otherns`);
  const ownerless = at("deft-session-plain");
  const linkNamed = at(`deft-session-${ns}.${deadPid}-link`);
  const fileNamed = at(`deft-session-${ns}.${deadPid}-file`);
  for (const dir of [live, alive, otherNs, ownerless]) Deno.mkdirSync(dir);
  Deno.symlinkSync(outside.path, linkNamed);
  Deno.writeTextFileSync(fileNamed, "");

  const temp = createSessionTemp([parent.path])!;
  try {
    assert.throws(() => Deno.lstatSync(orphan), Deno.errors.NotFound);
    for (const kept of [live, alive, otherNs, ownerless, linkNamed, fileNamed, temp.path]) {
      Deno.lstatSync(kept);
    }
    assert.equal(Deno.readTextFileSync(`${outside.path}/keep`), "keep");
    assert.deepEqual(sweepOrphans(parent.path), []);
  } finally {
    temp.remove();
  }
});
