/**
 * `deft run --continue --rewind-to TURN` rewinds the session's files where it works before the
 * new run records where it starts (src/agent/workplace.ts: the session to go on with is found,
 * and rewound, once the workplace is open and before anything runs there). So the run's "files
 * changed" and patch hold what the run did, not what the rewind put back: the same on the host
 * and in a container (real Podman, the container kept between the two runs, where the
 * checkpoints are).
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { runDeft } from "../../helpers/deft.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";
import { testRuntime } from "../../helpers/containers.ts";
import { mockModelArgs as modelArgs } from "../../helpers/mock_session.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/**
 * Runs a first session (flags `first`) that writes `note.txt` in `workspace`, then goes on from
 * its start with `--rewind-to 0` (flags `onward`, from the first run's stderr); returns the second
 * run's `--json` summary and its `--patch-path` file.
 */
async function rewoundRun(
  first: string[],
  onward: (firstStderr: string) => string[],
  workspace: string,
  env: Record<string, string>,
  cwd: string,
): Promise<{ summary: Json; patch: string }> {
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: `echo made > ${workspace}/note.txt` }]]),
    chatText("wrote the note"),
    chatText("went on"),
  ]);
  try {
    const one = await runDeft(["run", "write a note", ...first, ...modelArgs(mock)], { cwd, env });
    assert.equal(one.code, 0, one.stderr);
    const patchPath = `${cwd}/onward.patch`;
    const two = await runDeft(
      [
        "run",
        "go on",
        "--continue",
        "--rewind-to",
        "0",
        "--json",
        "--patch-path",
        patchPath,
        ...onward(one.stderr),
        ...modelArgs(mock),
      ],
      { cwd, env },
    );
    assert.equal(two.code, 0, two.stderr);
    return { summary: JSON.parse(two.stdout), patch: await Deno.readTextFile(patchPath) };
  } finally {
    await mock.close();
  }
}

Deno.test("deft run --continue --rewind-to 0 on the host: the rewind is not the run's change", async () => {
  const repo = await makeBuggyRepo();
  await using home = await tempDir();
  const env = { HOME: home.path, XDG_STATE_HOME: `${home.path}/state` };
  const { summary, patch } = await rewoundRun(
    ["-w", repo],
    () => ["-w", repo],
    repo,
    env,
    home.path,
  );
  assert.equal(
    await Deno.stat(`${repo}/note.txt`).then(() => "there", () => "gone"),
    "gone",
    "rewound",
  );
  assert.deepEqual(summary.files_changed, [], JSON.stringify(summary));
  assert.equal(patch, "");
});

Deno.test({
  name:
    "deft run --continue --rewind-to 0 in a container (podman): the rewind is not the run's change",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using rt = await testRuntime("podman");
  await using home = await tempDir();
  const env = { ...rt.env, HOME: home.path, XDG_STATE_HOME: `${home.path}/state` };
  let id: string | undefined;
  try {
    // The first run keeps its container; the second attaches to it, where the checkpoints are.
    const where = ["--container-runtime", "podman", "-w", "/testbed"];
    const { summary, patch } = await rewoundRun(
      ["--docker-image", rt.image, "--docker-keep", ...where],
      (stderr) => {
        id = /container kept: ([0-9a-f]{64})/.exec(stderr)?.[1];
        assert.ok(id, stderr);
        return ["--docker-container-id", id, ...where];
      },
      "/testbed",
      env,
      home.path,
    );
    const gone = await rt.cli("exec", id!, "sh", "-c", "test -e /testbed/note.txt || echo gone");
    assert.equal(gone, "gone", "rewound in the container");
    assert.deepEqual(summary.files_changed, [], JSON.stringify(summary));
    assert.equal(patch, "");
  } finally {
    if (id) await rt.cli("rm", "-f", id).catch(() => {});
  }
});
