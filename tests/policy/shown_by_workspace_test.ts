import assert from "node:assert/strict";
import { shownByWorkspace } from "../../src/policy/sandbox.ts";

const HIDDEN = ["/run", "/var/run", "/var/tmp", "/dev/shm"];

Deno.test("shownByWorkspace: a path under the sandbox's private /tmp is not shown by a workspace at /", () => {
  // Deno from npx under a HOME in /tmp, with a workspace at `/`: it must be bound on its own.
  assert.equal(
    shownByWorkspace("/", "/tmp/home/.npm/_npx/1/node_modules/deno/deno", HIDDEN),
    false,
  );
  assert.equal(shownByWorkspace("/", "/run/user/0/deft", HIDDEN), false);
  assert.equal(shownByWorkspace("/", "/dev/shm/x", HIDDEN), false);
  // Elsewhere under `/` the workspace's bind shows it.
  assert.equal(shownByWorkspace("/", "/usr/bin/deno", HIDDEN), true);
  assert.equal(shownByWorkspace("/", "/root/.cache/deft", HIDDEN), true);
});

Deno.test("shownByWorkspace: a workspace inside /tmp shows what is inside it; outside is never shown", () => {
  assert.equal(shownByWorkspace("/tmp/ws", "/tmp/ws/.deft", HIDDEN), true);
  assert.equal(shownByWorkspace("/tmp", "/tmp/deft-code/main.ts", HIDDEN), true);
  assert.equal(shownByWorkspace("/home/u/project", "/home/u/project/node_modules", HIDDEN), true);
  assert.equal(shownByWorkspace("/home/u/project", "/home/u/.cache/deft", HIDDEN), false);
  assert.equal(shownByWorkspace("/home/u/project", "/home/u/project-2/x", HIDDEN), false);
});
