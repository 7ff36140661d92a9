/**
 * How a batch drives a task's container: the argv of the task's test inside it and of the task's
 * `deft run` attaching to it. No shell on the host reads any of it; a hostile test command or
 * workdir stays one word for the runtime's `exec`.
 */
import assert from "node:assert/strict";
import { attachArgs, containerTestLaunch } from "../../src/batch/task_container.ts";
import type { Container } from "../../src/container/container.ts";

function container(program: "docker" | "podman", workspace = "/testbed"): Container {
  return {
    cli: program === "podman" ? { program, ociRuntime: "runc" } : { program },
    id: "0123456789ab",
    image: "img:1",
    workspace,
    started: true,
    kept: false,
    inside: { binds: [], argv: [], env: {}, probe: [] },
    close: () => Promise.resolve(),
  };
}

Deno.test("a task's test runs inside its container: bash there, one word, no host shell", () => {
  const hostile = `python3 t.py; echo "$HOME" \`id\` $(touch /host-pwned) ' "`;
  for (const program of ["docker", "podman"] as const) {
    const launch = containerTestLaunch(container(program, "/src dir"), hostile);
    const argv = [launch.program, ...launch.args];
    const at = argv.indexOf(program);
    assert.ok(at >= 0, argv.join(" "));
    // Only setpriv/setsid (the process group) come before the runtime's client: no shell.
    assert.deepEqual(
      argv.slice(0, at).filter((w) =>
        !/^(\/usr\/bin\/setpriv|setpriv|setsid|--pdeathsig|KILL|--)$/.test(w)
      ),
      [],
    );
    const tail = argv.slice(at);
    const exec = tail.indexOf("exec");
    assert.ok(exec > 0, tail.join(" "));
    assert.deepEqual(tail.slice(exec), [
      "exec",
      "-w",
      "/src dir",
      "--",
      "0123456789ab",
      "bash",
      "--noprofile",
      "--norc",
      "-c",
      hostile,
    ]);
    if (program === "podman") assert.deepEqual(tail.slice(1, 3), ["--runtime", "runc"]);
    // The runtime client's variables only: nothing of Deft's (keys) reaches the test.
    for (const name of Object.keys(launch.env)) {
      assert.ok(!/KEY|TOKEN|SECRET|DEFT_BATCH/i.test(name), name);
    }
  }
});

Deno.test("a task's deft run attaches to the batch's container and its workspace inside", () => {
  assert.deepEqual(attachArgs(container("podman", "/work/repo")), [
    "-w",
    "/work/repo",
    "--docker-container-id",
    "0123456789ab",
    "--container-runtime",
    "podman",
  ]);
});
