/**
 * The process policy's container views: argv only (no shell, nothing quoted), every container
 * isolated the same way, and nothing of Deft's environment handed to the runtime client but what
 * finds the daemon. No runtime is needed here.
 */
import assert from "node:assert/strict";
import {
  containerBuildLaunch,
  containerExecLaunch,
  containerImageRemoveLaunch,
  containerLaunch,
  containerLoadLaunch,
  containerRemoveLaunch,
  type ContainerSpec,
} from "../../../src/policy/process.ts";

const SPEC: ContainerSpec = {
  image: "deft-test:1",
  name: "deft-1-ab",
  labels: { "deft.container": "1", "deft.run": "0123" },
  network: "none",
  memory: "4g",
  pidsLimit: 100,
  binds: [{ host: "/usr/bin/deno", container: "/opt/deft/deno", readOnly: true }],
  keep: false,
};

Deno.test("containerLaunch: isolated, labelled, attached by stdin, the image after --", () => {
  Deno.env.set("DEFT_VIEW_CANARY", "x");
  Deno.env.set("DOCKER_HOST", "unix:///tmp/d.sock");
  try {
    const launch = containerLaunch({ program: "docker" }, SPEC);
    assert.equal(launch.program, "docker");
    assert.deepEqual(launch.args, [
      "run",
      "-i",
      "--rm",
      "--name",
      "deft-1-ab",
      "--label",
      "deft.container=1",
      "--label",
      "deft.run=0123",
      "--network",
      "none",
      "--security-opt",
      "no-new-privileges",
      "--cap-drop",
      "MKNOD",
      "--cap-drop",
      "SETFCAP",
      "--memory",
      "4g",
      "--pids-limit",
      "100",
      "-v",
      "/usr/bin/deno:/opt/deft/deno:ro",
      "--entrypoint",
      "cat",
      "--",
      "deft-test:1",
    ]);
    assert.equal(launch.env.DOCKER_HOST, "unix:///tmp/d.sock");
    assert.equal(launch.env.DEFT_VIEW_CANARY, undefined);
  } finally {
    Deno.env.delete("DEFT_VIEW_CANARY");
    Deno.env.delete("DOCKER_HOST");
  }
});

Deno.test("containerLaunch: podman gets runc and rlimits; a kept container runs detached", () => {
  const launch = containerLaunch({ program: "podman", ociRuntime: "runc" }, {
    ...SPEC,
    keep: true,
  });
  assert.deepEqual(launch.args.slice(0, 5), ["--runtime", "runc", "run", "-d", "-i"]);
  assert.ok(!launch.args.includes("--rm"));
  const i = launch.args.indexOf("--ulimit");
  assert.deepEqual(launch.args.slice(i, i + 4), [
    "--ulimit",
    "nofile=1024:1024",
    "--ulimit",
    "nproc=100:100",
  ]);
});

Deno.test("container views refuse words the client would read as options or syntax", () => {
  for (const image of ["-v/:/host", "--privileged", "a b", "", "x;rm -rf /"]) {
    assert.throws(() => containerLaunch({ program: "docker" }, { ...SPEC, image }), /plain name/);
  }
  for (const host of ["/a:b", "/a,b", "relative"]) {
    assert.throws(
      () =>
        containerLaunch({ program: "docker" }, {
          ...SPEC,
          binds: [{ host, container: "/x", readOnly: true }],
        }),
      /cannot be bound/,
    );
  }
  assert.throws(() => containerRemoveLaunch({ program: "docker" }, ["-f"]), /plain name/);
  assert.throws(
    () => containerExecLaunch({ program: "docker" }, "--privileged", { argv: ["true"] }),
    /plain name/,
  );
});

Deno.test("containerExecLaunch: argv as given, every variable with its value", () => {
  const hostile = "$(touch /tmp/x); `id` \"'";
  const launch = containerExecLaunch({ program: "docker" }, "abc", {
    argv: ["bash", "-c", hostile],
    env: { DENO_DIR: "/opt/deft/deno-dir" },
    workdir: "/testbed",
    interactive: true,
  });
  assert.deepEqual(launch.args, [
    "exec",
    "-i",
    "-w",
    "/testbed",
    "-e",
    "DENO_DIR=/opt/deft/deno-dir",
    "--",
    "abc",
    "bash",
    "-c",
    hostile,
  ]);
  assert.throws(
    () => containerExecLaunch({ program: "docker" }, "abc", { argv: [], env: { "A B": "1" } }),
    /bad variable name/,
  );
});

Deno.test("containerBuildLaunch: no pull, no network, labelled, the paths after their flags", () => {
  const build = {
    dockerfile: "/p/-x/Dockerfile",
    context: "/p/-x",
    tag: "deft-built-1-ab:latest",
    labels: { "deft.image": "1", "deft.image.owner": "h/1/t" },
    network: "none" as const,
  };
  assert.deepEqual(containerBuildLaunch({ program: "docker" }, build).args, [
    "build",
    "-q",
    "--network",
    "none",
    "-t",
    "deft-built-1-ab:latest",
    "--label",
    "deft.image=1",
    "--label",
    "deft.image.owner=h/1/t",
    "-f",
    "/p/-x/Dockerfile",
    "--",
    "/p/-x",
  ]);
  const podman = containerBuildLaunch({ program: "podman", ociRuntime: "runc" }, build).args;
  assert.deepEqual(podman.slice(0, 2), ["--runtime", "runc"]);
  assert.ok(podman.includes("--pull=never"), podman.join(" "));
  assert.ok(podman.includes("nofile=1024:1024"), podman.join(" "));
  for (const dockerfile of ["Dockerfile", "-f", "/a\nb"]) {
    assert.throws(
      () => containerBuildLaunch({ program: "docker" }, { ...build, dockerfile }),
      /absolute path on one line/,
    );
  }
  assert.throws(
    () => containerBuildLaunch({ program: "docker" }, { ...build, tag: "--squash" }),
    /plain name/,
  );
  assert.deepEqual(containerLoadLaunch({ program: "docker" }, "/t/i.tar").args, [
    "load",
    "-q",
    "-i",
    "/t/i.tar",
  ]);
  assert.throws(() => containerLoadLaunch({ program: "docker" }, "-i.tar"), /absolute/);
  assert.throws(() => containerImageRemoveLaunch({ program: "docker" }, ["-f"]), /plain name/);
});
