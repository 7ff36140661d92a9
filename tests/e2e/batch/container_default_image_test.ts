/**
 * `deft batch`'s default image, against real Docker (a private daemon the test starts and stops)
 * and real Podman: `--docker-image` runs plain Deft lines (no repo) in containers of it,
 * `--dockerfile-path` builds once for the whole batch and the build goes at the end (also after
 * SIGTERM), `--docker-image-file` loads once and a new image goes at the end, and `--docker-keep`
 * leaves exactly the tasks' containers, whose ids the results record. Containers are found by
 * the batch's own label (its output folder), images by the names the results record, so nothing
 * of another test's counts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT, runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import {
  fixAddCall,
  processesWith,
  recordedCall,
  recordedTrajectory,
} from "../../helpers/batch_fixture.ts";
import { type TestRuntime, testRuntime } from "../../helpers/containers.ts";

/** A recording on /testbed: `fix` repairs calc.py; `hang` sleeps. */
function trajectory(kind: "fix" | "hang") {
  const steps = kind === "fix"
    ? [fixAddCall("/testbed", 1)]
    : [recordedCall("bash", { command: "sleep 7322" }, 1)];
  return recordedTrajectory("Fix add.", "/testbed", steps);
}

/** Ids (full) of the containers the batch writing to `out` started, running or not. */
async function batchContainers(rt: TestRuntime, out: string): Promise<string[]> {
  return (await rt.cli("ps", "-a", "-q", "--no-trunc", "--filter", `label=deft.batch=${out}`))
    .split("\n").filter(Boolean).sort();
}

async function imageExists(rt: TestRuntime, ref: string): Promise<boolean> {
  return await rt.cli("image", "inspect", ref).then(() => true, () => false);
}

function jsonLines(path: string): Record<string, unknown>[] {
  return Deno.readTextFileSync(path).trimEnd().split("\n").map((l) => JSON.parse(l));
}

function readResult(out: string, id: string): Record<string, unknown> {
  return JSON.parse(Deno.readTextFileSync(join(out, id, "result.json")));
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `batch (${runtime}): the default image: named, built once, loaded once, kept`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);
    await using dir = await tempDir("deft-default-image-");
    const env = { ...rt.env, HOME: dir.path };
    await Deno.writeTextFile(join(dir.path, "fix.json"), JSON.stringify(trajectory("fix")));
    await Deno.writeTextFile(join(dir.path, "hang.json"), JSON.stringify(trajectory("hang")));
    // Plain Deft lines with no repo: the repository is the image's /testbed.
    const line = (id: string, test: string, replay = "fix.json") =>
      JSON.stringify({ id, task: "Fix add.", replay, test });
    const writeTasks = async (name: string, lines: string[]) => {
      const file = join(dir.path, name);
      await Deno.writeTextFile(file, lines.join("\n") + "\n");
      return file;
    };
    const batch = (file: string, out: string, ...more: string[]) =>
      runDeft([
        "batch",
        file,
        "--out",
        out,
        "--container-runtime",
        runtime,
        "--concurrency",
        "2",
        "--output-format",
        "json",
        ...more,
      ], { env, cwd: dir.path });

    await t.step("--docker-image: lines without a repo run in containers of it", async () => {
      const out = join(dir.path, "out-named");
      const file = await writeTasks("named.jsonl", [
        line("n1", "python3 test_calc.py"),
        line("n2", "python3 test_calc.py"),
      ]);
      const run = await batch(file, out, "--docker-image", rt.image);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout).counts, { passed: 2 }, run.stderr);
      for (const id of ["n1", "n2"]) {
        const result = readResult(out, id);
        assert.equal(result.image, rt.image);
        assert.equal(result.repo, null);
        assert.equal(result.test_exit_code, 0);
        assert.equal("container_id" in result, false);
        assert.equal(await Deno.stat(join(out, id, "workspace")).then(() => 1, () => 0), 0);
      }
      const predictions = jsonLines(join(out, "predictions.jsonl"));
      assert.equal(predictions.length, 2);
      for (const p of predictions) assert.match(p.model_patch as string, /\+ {4}return a \+ b\n/);
      assert.deepEqual(await batchContainers(rt, out), []);
    });

    await t.step("--dockerfile-path: one build for two tasks, gone at the end", async () => {
      const out = join(dir.path, "out-built");
      await Deno.mkdir(join(dir.path, "image"));
      // The base is the cached test image (nothing is pulled); the build marks its result.
      await Deno.writeTextFile(
        join(dir.path, "image", "Dockerfile"),
        `FROM ${rt.image}\nENV DEFT_DEFAULT_BUILT=yes\n`,
      );
      // Passes only in the built image, with the model's fix.
      const test = 'test "$DEFT_DEFAULT_BUILT" = yes && python3 test_calc.py';
      const file = await writeTasks("built.jsonl", [line("b1", test), line("b2", test)]);
      const run = await batch(file, out, "--dockerfile-path", "image/Dockerfile");
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr.match(/building an image from/g)?.length, 1, run.stderr);
      const images = ["b1", "b2"].map((id) => readResult(out, id).image as string);
      assert.match(images[0], /^deft-built-[0-9]+-[0-9a-f]+:latest$/);
      assert.equal(images[1], images[0], "both tasks ran in the one build");
      assert.equal(await imageExists(rt, images[0]), false, "the build was removed");
      assert.deepEqual(await batchContainers(rt, out), []);
    });

    await t.step("--dockerfile-path, SIGTERM: the tasks stop, the build goes", async () => {
      const out = join(dir.path, "out-term");
      const file = await writeTasks("term.jsonl", [line("h1", "true", "hang.json")]);
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...deftFlags(),
          `${REPO_ROOT}main.ts`,
          "batch",
          file,
          "--out",
          out,
          "--container-runtime",
          runtime,
          "--dockerfile-path",
          join(dir.path, "image", "Dockerfile"),
        ],
        cwd: dir.path,
        env: { NO_COLOR: "1", DENO_DIR: denoDir(), ...env },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const output = child.output();
      const deadline = Date.now() + 120_000;
      let running = false;
      while (!running && Date.now() < deadline) {
        running = (await batchContainers(rt, out)).length === 1 &&
          processesWith("sleep 7322").length > 0;
        if (!running) await new Promise((r) => setTimeout(r, 300));
      }
      assert.ok(running, "the task's command never ran in a container");
      child.kill("SIGTERM");
      const ended = await output;
      assert.equal(ended.code, 130, new TextDecoder().decode(ended.stderr));
      const result = readResult(out, "h1");
      assert.equal(result.status, "interrupted");
      assert.match(result.image as string, /^deft-built-/);
      assert.equal(await imageExists(rt, result.image as string), false);
      assert.deepEqual(await batchContainers(rt, out), []);
      assert.deepEqual(processesWith("sleep 7322"), []);
    });

    await t.step("--docker-image-file: loaded once; new to the runtime, so removed", async () => {
      const out = join(dir.path, "out-loaded");
      // An image the runtime does not hold: built with a label of this run, saved, removed.
      const ref = `deft-load-${crypto.randomUUID().slice(0, 8)}:1`;
      await Deno.writeTextFile(
        join(dir.path, "image", "Dockerfile.load"),
        `FROM ${rt.image}\nLABEL deft.test.load=${ref}\nENV DEFT_LOADED=yes\n`,
      );
      await rt.cli(
        "build",
        "--network",
        "none",
        "-t",
        ref,
        "-f",
        join(dir.path, "image", "Dockerfile.load"),
        join(dir.path, "image"),
      );
      const tar = join(dir.path, "image.tar");
      try {
        await rt.cli("save", "-o", tar, ref);
        await rt.cli("rmi", ref);
        const test = 'test "$DEFT_LOADED" = yes && python3 test_calc.py';
        const file = await writeTasks("loaded.jsonl", [line("l1", test), line("l2", test)]);
        const run = await batch(file, out, "--docker-image-file", tar);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.stderr.match(/loading the image in/g)?.length, 1, run.stderr);
        const images = ["l1", "l2"].map((id) => readResult(out, id).image as string);
        assert.equal(images[0], images[1]);
        assert.ok(images[0].includes(ref.split(":")[0]), images[0]);
        assert.equal(await imageExists(rt, ref), false, "the loaded image was removed");
        assert.deepEqual(await batchContainers(rt, out), []);
      } finally {
        await rt.cli("rmi", "-f", ref).catch(() => {});
      }
    });

    await t.step("--docker-keep: exactly the tasks' containers stay, ids recorded", async () => {
      const out = join(dir.path, "out-kept");
      const file = await writeTasks("kept.jsonl", [
        line("k1", "python3 test_calc.py"),
        line("k2", "python3 test_calc.py"),
      ]);
      try {
        const run = await batch(file, out, "--docker-image", rt.image, "--docker-keep");
        assert.equal(run.code, 0, run.stderr);
        const recorded = ["k1", "k2"].map((id) => readResult(out, id).container_id as string);
        const left = await batchContainers(rt, out);
        assert.equal(left.length, 2, `left: ${left}`);
        assert.deepEqual([...recorded].sort(), left);
        assert.match(run.stderr, /kept 2 container\(s\): \S+ \S+/);
        for (const id of recorded) assert.ok(run.stderr.includes(id), run.stderr);
        // Each holds its task's fix.
        for (const id of recorded) {
          assert.match(await rt.cli("exec", id, "cat", "/testbed/calc.py"), /return a \+ b/);
        }
      } finally {
        const left = await batchContainers(rt, out).catch(() => []);
        if (left.length) await rt.cli("rm", "-f", ...left).catch(() => {});
      }
    });

    await t.step("--docker-container-id is refused, naming what to do", async () => {
      const file = await writeTasks("refused.jsonl", [line("r1", "true")]);
      const run = await batch(file, join(dir.path, "out-refused"), "--docker-container-id", "x1");
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /--docker-container-id does not apply to deft batch/);
      const both = await batch(
        file,
        join(dir.path, "out-refused"),
        "--docker-image",
        rt.image,
        "--dockerfile-path",
        "image/Dockerfile",
      );
      assert.equal(both.code, 2, both.stderr);
      assert.match(both.stderr, /--docker-image and --dockerfile-path cannot go together/);
    });
  });
}
