import assert from "node:assert/strict";
import { checkBatchContainerFlags, hasDefaultImage } from "../../src/batch/default_image.ts";
import { UsageError } from "../../src/errors.ts";

Deno.test("deft batch refuses --docker-container-id: one container per task", () => {
  assert.throws(
    () => checkBatchContainerFlags({ dockerContainerId: "abc123" }),
    (e: Error) =>
      e instanceof UsageError && /--docker-container-id does not apply to deft batch/.test(
        e.message,
      ) && /--docker-image/.test(e.message),
  );
});

Deno.test("deft batch: the default image's flags are exclusive, the error names both", () => {
  const pairs: [Record<string, string>, RegExp][] = [
    [{ dockerImage: "a:1", dockerfilePath: "D" }, /--docker-image and --dockerfile-path/],
    [{ dockerImage: "a:1", dockerImageFile: "x.tar" }, /--docker-image and --docker-image-file/],
    [
      { dockerfilePath: "D", dockerImageFile: "x.tar" },
      /--dockerfile-path and --docker-image-file/,
    ],
  ];
  for (const [flags, named] of pairs) {
    assert.throws(
      () => checkBatchContainerFlags(flags),
      (e: Error) =>
        e instanceof UsageError && named.test(e.message) && /cannot go together/
          .test(e.message),
      JSON.stringify(flags),
    );
  }
  // An image name a runtime would read as an option is refused too.
  assert.throws(() => checkBatchContainerFlags({ dockerImage: "--privileged" }), UsageError);
  // One of them, with --docker-keep and --image-template, is fine.
  checkBatchContainerFlags({ dockerImage: "a:1", dockerKeep: true, imageTemplate: "t/{id}" });
  checkBatchContainerFlags({ dockerfilePath: "D", dockerKeep: true });
  assert.equal(hasDefaultImage({ dockerImageFile: "x.tar" }), true);
  assert.equal(hasDefaultImage({ dockerKeep: true, imageTemplate: "t/{id}" }), false);
});
