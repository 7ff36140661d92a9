/**
 * How a batch drives a task's container: the argv of the task's test inside it and of the task's
 * `deft run` attaching to it. No shell on the host reads any of it; a hostile test command or
 * workdir stays one word for the runtime's `exec`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  attachArgs,
  containerTestLaunch,
  openTaskContainer,
} from "../../src/batch/task_container.ts";
import { type Container, ContainerError } from "../../src/container/container.ts";
import { tempDir } from "../helpers/temp.ts";

function container(program: "docker" | "podman", workspace = "/testbed"): Container {
  return {
    cli: program === "podman" ? { program, ociRuntime: "runc" } : { program },
    id: "0123456789ab",
    image: "img:1",
    workspace,
    started: true,
    kept: false,
    inside: { binds: [], argv: [], env: {}, probe: [], self: { exec: "deno", main: "main.ts" } },
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

Deno.test("a line's Dockerfile that turned into a link since the task file was read is not built", async () => {
  await using tmp = await tempDir("deft-task-moved-");
  await Deno.mkdir(join(tmp.path, "tasks"));
  await Deno.mkdir(join(tmp.path, "outside"));
  await Deno.writeTextFile(join(tmp.path, "outside", "Dockerfile"), "FROM scratch\n");
  // Checked when read: a plain file inside. Now a link leading out.
  const checked = join(tmp.path, "tasks", "Dockerfile");
  await Deno.symlink(join(tmp.path, "outside", "Dockerfile"), checked);
  const settings = { network: false, runtime: "docker" as const };
  await assert.rejects(
    () => openTaskContainer({ index: 0, id: "t", dockerfile: checked }, settings, tmp.path),
    (e: Error) =>
      e instanceof ContainerError &&
      e.message.includes(`now leads to ${join(tmp.path, "outside", "Dockerfile")}`) &&
      /refused, as its folder is the build context/.test(e.message),
  );
  await Deno.remove(checked);
  await assert.rejects(
    () => openTaskContainer({ index: 0, id: "t", dockerfile: checked }, settings, tmp.path),
    /is gone since the task file was read/,
  );
});
