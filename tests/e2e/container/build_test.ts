/**
 * `--dockerfile-path` (build, then start) and `--docker-image-file` (load, then start) against
 * real Docker (a private daemon) and real Podman, on the cached test image. What each run leaves
 * behind is checked by its own image and container names, never by Deft's label alone: other
 * tests use the same Podman at the same time.
 */
import assert from "node:assert/strict";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { runMocked } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import { deftCacheDir } from "../../../src/policy/dirs.ts";
import { type TestRuntime, testRuntime } from "../../helpers/containers.ts";

function includes(text: string, part: string): void {
  assert.ok(text.includes(part), `expected ${JSON.stringify(part)} in:\n${text}`);
}

/** True when the runtime holds the image (or container) `ref`. */
async function exists(rt: TestRuntime, kind: "image" | "container", ref: string) {
  return await rt.cli(kind, "inspect", ref).then(() => true, () => false);
}

/** The ids of the images Deft built (label deft.image=1) from this run's images. */
async function builtImages(rt: TestRuntime): Promise<string[]> {
  const filters = ["--filter", "label=deft.image=1", "--filter", `label=${rt.label}`];
  return (await rt.cli("images", "-q", "--no-trunc", ...filters))
    .split("\n").filter(Boolean).sort();
}

/**
 * The images Deft built that are not in `before` and whose run has ended (its lock, under Deft's
 * cache folder, is free): what a finished run left behind. A Deft still running (another test's,
 * on the shared Podman) holds its lock and owns its own.
 */
async function leftImages(rt: TestRuntime, before: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const id of await builtImages(rt)) {
    if (before.includes(id)) continue;
    const run = await rt.cli(
      "image",
      "inspect",
      "--format",
      '{{index .Config.Labels "deft.image.run"}}',
      id,
    ).catch(() => "");
    if (!/^[0-9a-f]{32}$/.test(run)) continue;
    const cache = rt.env.DEFT_CACHE_DIR ?? deftCacheDir();
    const lock = await Deno.open(`${cache}/containers/runs/${run}.lock`, { write: true })
      .catch(() => undefined);
    const over = lock === undefined || await lock.tryLock(true);
    lock?.close();
    if (over) left.push(id);
  }
  return left;
}

/** `deft run` with `flags` instead of --docker-image; the model reads /testbed/hello.txt. */
async function runWith(rt: TestRuntime, flags: string[], command = "cat /testbed/hello.txt") {
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const run = await runMocked(mock, "t", "/testbed", {
      extra: [...flags, "--container-runtime", rt.name],
      env: rt.env,
    });
    const said = JSON.stringify(mock.requests.at(-1)?.body ?? "");
    // The container's and the image's names, as Deft announced them.
    const started = /started container (\S+) from (\S+) \(/.exec(run.stderr);
    return { ...run, said, container: started?.[1], image: started?.[2] };
  } finally {
    await mock.close();
  }
}

/** A folder holding a Dockerfile of `lines` and hello.txt. */
async function buildContext(dir: string, lines: string[]): Promise<string> {
  await Deno.writeTextFile(`${dir}/Dockerfile`, lines.join("\n") + "\n");
  await Deno.writeTextFile(`${dir}/hello.txt`, "hello from the build context\n");
  return `${dir}/Dockerfile`;
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `container (${runtime}): --dockerfile-path and --docker-image-file`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);
    const rm = (...ids: string[]) =>
      rt.cli("rm", "-f", ...(rt.name === "podman" ? ["-t", "0"] : []), ...ids);

    await t.step(
      "--dockerfile-path builds from the Dockerfile's folder, runs inside, removes the image",
      async () => {
        await using ctx = await tempDir();
        const dockerfile = await buildContext(ctx.path, [
          `FROM ${rt.image}`,
          "COPY hello.txt /testbed/hello.txt",
        ]);
        const before = await builtImages(rt);
        const run = await runWith(rt, ["--dockerfile-path", dockerfile]);
        assert.equal(run.code, 0, run.stderr);
        includes(run.stderr, `building an image from ${dockerfile}`);
        includes(run.said, "hello from the build context");
        assert.match(run.image ?? "", /^deft-built-/);
        assert.equal(await exists(rt, "image", run.image!), false, "the built image stayed");
        assert.equal(await exists(rt, "container", run.container!), false);
        assert.deepEqual(await leftImages(rt, before), []);
      },
    );

    await t.step(
      "a FROM that is not in the runtime's images is named; nothing is pulled or left",
      async () => {
        await using ctx = await tempDir();
        const before = await builtImages(rt);
        const dockerfile = await buildContext(ctx.path, ["FROM deft-no-such/base:1", "RUN true"]);
        const run = await runWith(rt, ["--dockerfile-path", dockerfile]);
        assert.equal(run.code, 2, run.stderr);
        includes(run.stderr, "starts FROM 'deft-no-such/base:1', which is not in");
        includes(run.stderr, `Deft never pulls`);
        includes(run.stderr, `${rt.name} images`);
        assert.deepEqual(await leftImages(rt, before), []);
        // A step that fails is the build's own error, with the runtime's words.
        const failing = await buildContext(ctx.path, [
          `FROM ${rt.image}`,
          "RUN echo deft-step-failed >&2 && false",
        ]);
        const broken = await runWith(rt, ["--dockerfile-path", failing]);
        assert.equal(broken.code, 2, broken.stderr);
        includes(broken.stderr, `${rt.name} could not build ${failing}`);
        assert.deepEqual(await leftImages(rt, before), []);
        const missing = await runWith(rt, ["--dockerfile-path", `${ctx.path}/Nope`]);
        assert.equal(missing.code, 2, missing.stderr);
        includes(missing.stderr, `--dockerfile-path ${ctx.path}/Nope: no such file`);
      },
    );

    await t.step(
      "--docker-image-file loads, runs inside; a new image goes, one held before stays",
      async () => {
        await using ctx = await tempDir();
        // An image of its own (a unique label makes a new id), saved, then removed.
        const tag = `deft-load-test-${crypto.randomUUID().slice(0, 8)}:1`;
        const dockerfile = await buildContext(ctx.path, [
          `FROM ${rt.image}`,
          `LABEL deft.test.load=${tag}`,
          "COPY hello.txt /testbed/hello.txt",
        ]);
        await rt.cli("build", "-q", "--network", "none", "-t", tag, "-f", dockerfile, ctx.path);
        const tar = `${ctx.path}/image.tar`;
        await rt.cli("save", "-o", tar, tag);
        await rt.cli("image", "rm", tag);
        const run = await runWith(rt, ["--docker-image-file", tar]);
        assert.equal(run.code, 0, run.stderr);
        includes(run.stderr, `loading the image in ${tar}`);
        includes(run.said, "hello from the build context");
        assert.equal(await exists(rt, "image", tag), false, "the loaded image stayed");
        assert.equal(await exists(rt, "container", run.container!), false);
        // The runtime held it already: the run leaves it there.
        await rt.cli("load", "-i", tar);
        try {
          const again = await runWith(rt, ["--docker-image-file", tar]);
          assert.equal(again.code, 0, again.stderr);
          assert.equal(await exists(rt, "image", tag), true, "an image held before was removed");
        } finally {
          await rt.cli("image", "rm", tag).catch(() => {});
        }
        // Not an archive, and no file at all: named.
        await Deno.writeTextFile(`${ctx.path}/bad.tar`, "not a tar\n");
        const bad = await runWith(rt, ["--docker-image-file", `${ctx.path}/bad.tar`]);
        assert.equal(bad.code, 2, bad.stderr);
        includes(bad.stderr, `${rt.name} could not load an image from ${ctx.path}/bad.tar`);
        includes(bad.stderr, "docker save");
        const none = await runWith(rt, ["--docker-image-file", `${ctx.path}/none.tar`]);
        assert.equal(none.code, 2, none.stderr);
        includes(none.stderr, `--docker-image-file ${ctx.path}/none.tar: no such file`);
      },
    );

    if (runtime === "docker") {
      // Keeping is shown on the private daemon only: a kept container on the shared Podman
      // would count as another test's leftover.
      await t.step(
        "--docker-keep keeps the built image and the container, and names both",
        async () => {
          await using ctx = await tempDir();
          const dockerfile = await buildContext(ctx.path, [
            `FROM ${rt.image}`,
            "COPY hello.txt /testbed/hello.txt",
          ]);
          const run = await runWith(rt, ["--dockerfile-path", dockerfile, "--docker-keep"]);
          assert.equal(run.code, 0, run.stderr);
          const kept = /image kept: (\S+)/.exec(run.stderr)?.[1];
          assert.equal(kept, run.image, run.stderr);
          const id = /container kept: (\S+)/.exec(run.stderr)?.[1];
          assert.ok(id && await exists(rt, "container", id), run.stderr);
          await rm(id);
          // A later start's sweep leaves a kept image alone.
          const next = await runWith(rt, ["--docker-image", rt.image], "true");
          assert.equal(next.code, 0, next.stderr);
          assert.ok(await exists(rt, "image", kept!), "the sweep removed a kept image");
          await rt.cli("image", "rm", kept!);
        },
      );

      await t.step(
        "the next start leaves an image that only carries Deft's labels (no proof)",
        async () => {
          await using ctx = await tempDir();
          const dockerfile = await buildContext(ctx.path, [`FROM ${rt.image}`]);
          const build = (tag: string, owner: string) =>
            rt.cli(
              "build",
              "-q",
              "--network",
              "none",
              "-t",
              tag,
              "--label",
              "deft.image=1",
              "--label",
              `deft.image.owner=${owner}`,
              "-f",
              dockerfile,
              ctx.path,
            );
          // A pid no process has here, and a tag of a machine that is not this one.
          await build(
            "deft-built-dead:latest",
            `${Deno.hostname()}/999999999/Thu Jan  1 00:00:00 1970`,
          );
          await build("deft-built-elsewhere:latest", "another-host/1/Thu Jan  1 00:00:00 1970");
          const run = await runWith(rt, ["--docker-image", rt.image], "true");
          assert.equal(run.code, 0, run.stderr);
          // Labels anyone can write prove nothing (ownership: hardening_test.ts).
          assert.equal(await exists(rt, "image", "deft-built-dead:latest"), true);
          assert.equal(await exists(rt, "image", "deft-built-elsewhere:latest"), true);
          await rt.cli("image", "rm", "deft-built-dead:latest", "deft-built-elsewhere:latest");
        },
      );
    }
  });
}
