/**
 * With no `--container-runtime`, an installed Docker whose daemon is down is the error Deft
 * reports: it does not go on with Podman, which holds none of Docker's images.
 */
import assert from "node:assert/strict";
import { runMocked } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

async function dockerInstalled(): Promise<boolean> {
  try {
    return (await new Deno.Command("docker", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output()).success;
  } catch {
    return false;
  }
}

Deno.test({
  name: "container: Docker installed, its daemon down, no runtime chosen: a Docker error",
  ignore: !await dockerInstalled(),
  fn: async () => {
    await using dir = await tempDir();
    const run = await runMocked({ url: "http://127.0.0.1:9" }, "t", "/testbed", {
      extra: ["--docker-image", "debian:bookworm"],
      env: { DOCKER_HOST: `unix://${dir.path}/no.sock` },
    });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /the Docker daemon does not answer \(docker: /);
    assert.match(run.stderr, /--container-runtime podman/);
    assert.doesNotMatch(run.stderr, /image not known|podman: /i, "no word about Podman's images");
  },
});
