/** The container flags: one source of a container at a time, each refusal saying what to do. */
import assert from "node:assert/strict";
import { checkContainerOptions, ContainerError } from "../../src/container/container.ts";

Deno.test("checkContainerOptions: one of image, Dockerfile, image file or container id", () => {
  const sources = [
    { image: "deft-test:1" },
    { dockerfile: "Dockerfile" },
    { imageFile: "image.tar" },
    { containerId: "abc123" },
  ];
  for (const one of sources) checkContainerOptions(one);
  for (const [i, a] of sources.entries()) {
    for (const b of sources.slice(i + 1)) {
      assert.throws(
        () => checkContainerOptions({ ...a, ...b }),
        (e) =>
          e instanceof ContainerError && /cannot go together: give one of --docker-image/
            .test(e.message),
      );
    }
  }
  assert.throws(
    () => checkContainerOptions({ dockerfile: "" }),
    /--dockerfile-path needs a file name/,
  );
  assert.throws(
    () => checkContainerOptions({ imageFile: "" }),
    /--docker-image-file needs a file name/,
  );
  // Keeping is for what Deft starts: a built or loaded image's container may be kept.
  checkContainerOptions({ dockerfile: "Dockerfile", keep: true });
  checkContainerOptions({ imageFile: "image.tar", keep: true });
});

Deno.test("checkContainerOptions: a network list needs a container Deft starts, without the host's network", () => {
  const proxy = "/tmp/deft-net-x/proxy.sock";
  checkContainerOptions({ image: "deft-test:1", networkProxy: proxy });
  assert.throws(
    () => checkContainerOptions({ containerId: "abc123", networkProxy: proxy }),
    (e) =>
      e instanceof ContainerError &&
      /not one named by --docker-container-id, which keeps the network it was started with/
        .test(e.message),
  );
  assert.throws(
    () => checkContainerOptions({ image: "deft-test:1", network: true, networkProxy: proxy }),
    (e) =>
      e instanceof ContainerError &&
      /container\.allow_network: true .* the network list \(network:\) would mean nothing/
        .test(e.message),
  );
});
