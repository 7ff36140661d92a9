/**
 * Which sessions `--continue`, `--resume` and the picker find: a host folder's among the host's
 * sessions, a container's among those of the same workspace path in containers of the same image
 * (or the very same container), never the other kind with the same path.
 */
import assert from "node:assert/strict";
import {
  imageKey,
  listSessions,
  recordedIn,
  type SessionPlace,
} from "../../src/trajectory/conversation.ts";
import {
  type ContainerMarker,
  type Trajectory,
  TrajectoryRecorder,
} from "../../src/trajectory/recorder.ts";
import { resumedContainerNote, resumeTarget } from "../../src/cli/resume.ts";
import { UsageError } from "../../src/cli/io.ts";
import { emptyUsage } from "../../src/llm/types.ts";
import { tempDir } from "../helpers/temp.ts";

const IMAGE_A: ContainerMarker = { runtime: "docker", image: "deft-test:1", id: "a".repeat(64) };
const IMAGE_B: ContainerMarker = { runtime: "docker", image: "other:2", id: "b".repeat(64) };

function trajectory(working_dir: string, container?: ContainerMarker): Trajectory {
  return {
    task: "t",
    working_dir,
    container,
    start_time: "2026-01-01T00:00:00Z",
    end_time: null,
    provider: "p",
    model: "m",
    max_steps: 9,
    llm_interactions: [],
    agent_steps: [],
    success: false,
    final_result: null,
    execution_time: 0,
    total_usage: emptyUsage(),
    format_version: 1,
  };
}

Deno.test("a host place matches host sessions of the path only; a container place, the same image's or container's", () => {
  const host: SessionPlace = { workspace: "/testbed" };
  const inA: SessionPlace = {
    workspace: "/testbed",
    container: { ...IMAGE_A, id: "c".repeat(64) },
  };
  // Old trajectories have no marker: they were recorded on the host.
  assert.equal(recordedIn(trajectory("/testbed"), host), true);
  assert.equal(recordedIn(trajectory("/testbed", IMAGE_A), host), false);
  assert.equal(recordedIn(trajectory("/testbed"), inA), false);
  assert.equal(recordedIn(trajectory("/testbed", IMAGE_A), inA), true);
  assert.equal(recordedIn(trajectory("/testbed", IMAGE_B), inA), false);
  assert.equal(recordedIn(trajectory("/app", IMAGE_A), inA), false);
  // The very container (attached again) matches whatever its image is called.
  const attached: SessionPlace = {
    workspace: "/testbed",
    container: { runtime: "docker", image: null, id: IMAGE_B.id },
  };
  assert.equal(recordedIn(trajectory("/testbed", IMAGE_B), attached), true);
  assert.equal(recordedIn(trajectory("/testbed", IMAGE_A), attached), false);
  // Attached by the short id Deft printed when it kept the container.
  const short: SessionPlace = {
    workspace: "/testbed",
    container: { runtime: "docker", image: null, id: IMAGE_B.id.slice(0, 12) },
  };
  assert.equal(recordedIn(trajectory("/testbed", IMAGE_B), short), true);
  assert.equal(recordedIn(trajectory("/testbed", IMAGE_A), short), false);
  // A name is no prefix.
  const named: SessionPlace = {
    workspace: "/testbed",
    container: { runtime: "docker", image: null, id: "bbb" },
  };
  assert.equal(recordedIn(trajectory("/testbed", IMAGE_B), named), false);
  // Podman's and Docker Hub's spellings of a name are that name.
  const podman: SessionPlace = {
    workspace: "/testbed",
    container: { runtime: "podman", image: "localhost/deft-test:1", id: "d" },
  };
  assert.equal(recordedIn(trajectory("/testbed", IMAGE_A), podman), true);
  assert.equal(imageKey("docker.io/library/debian"), "debian:latest");
  assert.equal(imageKey("registry:5000/x/y"), "registry:5000/x/y:latest");
  assert.equal(imageKey("x@sha256:ab"), "x@sha256:ab");
});

async function record(dir: string, name: string, workingDir: string, container?: ContainerMarker) {
  const rec = new TrajectoryRecorder(`${dir}/trajectories/trajectory_${name}.json`, {
    task: `task ${name}`,
    working_dir: workingDir,
    provider: "p",
    model: "m",
    max_steps: 9,
    session_id: name,
    container,
  });
  rec.finalize(false, null);
  // Newest last, by modification time.
  await new Promise((r) => setTimeout(r, 15));
  return rec;
}

Deno.test("--continue and the listing pick the latest session of the place; --resume ID refuses the other kind", async () => {
  await using state = await tempDir();
  const saved = Deno.env.get("XDG_STATE_HOME");
  Deno.env.set("XDG_STATE_HOME", state.path);
  try {
    const dir = `${state.path}/deft`;
    await record(dir, "inA", "/testbed", IMAGE_A);
    await record(dir, "inB", "/testbed", IMAGE_B);
    await record(dir, "host", "/testbed");
    const hostPlace = { workspace: "/testbed" };
    const placeA: SessionPlace = {
      workspace: "/testbed",
      container: { ...IMAGE_A, id: "e".repeat(64) },
    };
    assert.deepEqual((await listSessions(hostPlace)).map((s) => s.id), ["host"]);
    assert.deepEqual((await listSessions(placeA)).map((s) => s.id), ["inA"]);

    const latest = await resumeTarget({ continue: true }, placeA);
    assert.equal(latest?.link.session_id, "inA");
    // It goes on in a new container: one line says the old one's changes are not there.
    const note = resumedContainerNote(latest!, placeA);
    assert.match(
      note ?? "",
      /goes on in container eeeeeeeeeeee, not in the one it was recorded in \(aaaaaaaaaaaa\)/,
    );
    assert.match(note ?? "", /changes are not here/);
    assert.equal(
      resumedContainerNote(latest!, { workspace: "/testbed", container: IMAGE_A }),
      undefined,
    );
    // The same container, attached again by its short id: nothing to say.
    const again = { ...IMAGE_A, image: null, id: IMAGE_A.id.slice(0, 12) };
    assert.equal(
      resumedContainerNote(latest!, { workspace: "/testbed", container: again }),
      undefined,
    );

    // A container's session named by id goes on in another image's container, never on the host.
    const other = await resumeTarget({ resume: "inB" }, placeA);
    assert.equal(other?.link.session_id, "inB");
    await assert.rejects(
      () => resumeTarget({ resume: "inA" }, hostPlace),
      (e: Error) =>
        e instanceof UsageError &&
        /its tools ran in a container \(\/testbed in a container of deft-test:1\)/.test(e.message),
    );
    await assert.rejects(
      () => resumeTarget({ resume: "host" }, placeA),
      (e: Error) => e instanceof UsageError && /recorded on the host/.test(e.message),
    );

    // A place with no session of its own says which place it looked in.
    await assert.rejects(
      () =>
        resumeTarget({ continue: true }, {
          workspace: "/app",
          container: { ...IMAGE_A, id: "f" },
        }),
      (e: Error) => /no earlier session in \/app in a container of deft-test:1/.test(e.message),
    );
  } finally {
    if (saved === undefined) Deno.env.delete("XDG_STATE_HOME");
    else Deno.env.set("XDG_STATE_HOME", saved);
  }
});

Deno.test("a trajectory with a malformed container marker is skipped, not taken for a host session", async () => {
  await using state = await tempDir();
  const saved = Deno.env.get("XDG_STATE_HOME");
  Deno.env.set("XDG_STATE_HOME", state.path);
  try {
    const rec = await record(`${state.path}/deft`, "odd", "/testbed");
    const data = { ...rec.data, container: "yes" };
    await Deno.writeTextFile(rec.path, JSON.stringify(data));
    assert.deepEqual(await listSessions({ workspace: "/testbed" }), []);
  } finally {
    if (saved === undefined) Deno.env.delete("XDG_STATE_HOME");
    else Deno.env.set("XDG_STATE_HOME", saved);
  }
});
