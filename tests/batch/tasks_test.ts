import { join } from "node:path";
import assert from "node:assert/strict";
import { applyDefaultImage, parseTasks } from "../../src/batch/tasks.ts";
import { indexRanges, shellQuote } from "../../src/batch/slurm.ts";
import { UsageError } from "../../src/errors.ts";
import { tempDir } from "../helpers/temp.ts";

Deno.test("a valid task file: relative repos and replays resolve against its folder", () => {
  const tasks = parseTasks(
    [
      '{"id": "a", "repo": "repos/a", "task": "fix it", "test": "make test", "max_steps": 5}',
      "",
      '{"id": "b.2", "repo": "https://example.com/r.git", "commit": "v1.2", "replay": "t.json", "timeout": 1.5}',
    ].join("\n"),
    "/data/tasks.jsonl",
  );
  assert.equal(tasks.length, 2);
  assert.deepEqual(tasks[0], {
    index: 0,
    id: "a",
    repo: "/data/repos/a",
    task: "fix it",
    test: "make test",
    max_steps: 5,
  });
  assert.equal(tasks[1].index, 1);
  assert.equal(tasks[1].repo, "https://example.com/r.git");
  assert.equal(tasks[1].replay, "/data/t.json");
  assert.equal(tasks[1].timeout, 1.5);
});

Deno.test("every bad line is reported with its line number, and nothing is returned", () => {
  const text = [
    '{"id": "ok", "repo": "r", "task": "t"}',
    "not json",
    '{"id": "../escape", "repo": "r", "task": "t"}',
    '{"id": "ok", "repo": "r", "task": "t"}',
    '{"id": "c", "repo": "r", "task": "t", "commit": "--upload-pack=evil"}',
    '{"id": "d", "task": "t", "max_steps": 0, "tset": "x"}',
    '{"id": "e", "repo": "r"}',
    "[1, 2]",
  ].join("\n");
  let message = "";
  try {
    parseTasks(text, "T.jsonl");
  } catch (e) {
    assert.ok(e instanceof UsageError);
    message = e.message;
  }
  assert.match(message, /7 bad line\(s\); nothing was started/);
  assert.match(message, /T\.jsonl:2: not valid JSON/);
  assert.match(message, /T\.jsonl:3: "id" "\.\.\/escape" must be/);
  assert.match(message, /T\.jsonl:4: "id" "ok" is used again \(first on line 1\)/);
  assert.match(message, /T\.jsonl:5: "commit" "--upload-pack=evil" is not a commit/);
  assert.match(
    message,
    /T\.jsonl:6: unknown field\(s\) tset.*"repo" is missing.*"max_steps" must be/,
  );
  assert.match(message, /T\.jsonl:7: "task" is missing/);
  assert.match(message, /T\.jsonl:8: expected a JSON object/);
  assert.doesNotMatch(message, /T\.jsonl:1:/);
});

Deno.test("an empty task file is refused", () => {
  assert.throws(() => parseTasks("\n\n", "E.jsonl"), /holds no tasks/);
});

Deno.test("array ranges and shell quoting for the job script", () => {
  assert.equal(indexRanges([7, 0, 1, 2, 5, 8]), "0-2,5,7-8");
  assert.equal(indexRanges([3]), "3");
  assert.equal(shellQuote("/a/b.jsonl"), "/a/b.jsonl");
  assert.equal(shellQuote("it's $HOME"), "'it'\\''s $HOME'");
});

/** A SWE-bench dataset line with its usual fields. */
function sweLine(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    repo: "astropy/astropy",
    instance_id: "astropy__astropy-12907",
    base_commit: "d16bfe05a744909de4b27f5875fe0d4ed41ce607",
    patch: "diff --git a/x b/x\n",
    test_patch: "diff --git a/y b/y\n",
    problem_statement: "Modeling's separability_matrix is wrong for nested models",
    hints_text: "",
    created_at: "2022-03-03T15:14:54Z",
    version: "4.3",
    FAIL_TO_PASS: '["astropy/modeling/tests/test_separable.py::test_separable[compound_model6]"]',
    PASS_TO_PASS: "[]",
    environment_setup_commit: "298ccb478e6bf092953bca67a3d29dc6c35f6752",
    ...extra,
  });
}

function usageMessage(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof UsageError, String(e));
    return e.message;
  }
  assert.fail("no UsageError");
}

Deno.test("a SWE-bench line as it is: its id, statement and image; repo and commit recorded", () => {
  const [task] = parseTasks(
    sweLine({ replay: "r.json", test: "pytest -x", timeout: 60 }),
    "/d/swe.jsonl",
    {
      imageTemplate: "swebench",
    },
  );
  assert.deepEqual(task, {
    index: 0,
    id: "astropy__astropy-12907",
    instance_id: "astropy__astropy-12907",
    // Recorded as the dataset names it, not resolved as a path: nothing is cloned.
    repo: "astropy/astropy",
    commit: "d16bfe05a744909de4b27f5875fe0d4ed41ce607",
    image: "swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest",
    task: "Modeling's separability_matrix is wrong for nested models",
    test: "pytest -x",
    timeout: 60,
    replay: "/d/r.json",
  });
});

Deno.test("--image-template: SWE-bench's naming, the other placeholders, and a line's image wins", () => {
  const text = [
    sweLine(),
    sweLine({ instance_id: "Django__django-11099", image: "my/own:img", workdir: "/src/" }),
  ].join("\n");
  const [a, b] = parseTasks(text, "t.jsonl", {
    imageTemplate: "sweb.eval.x86_64.{id_lower}:v1-{swebench_id}",
  });
  assert.equal(a.image, "sweb.eval.x86_64.astropy__astropy-12907:v1-astropy_1776_astropy-12907");
  assert.equal(b.image, "my/own:img");
  assert.equal(b.workdir, "/src");
  const [c] = parseTasks(sweLine({ instance_id: "Org__Repo-1" }), "t.jsonl", {
    imageTemplate: "reg/{id}",
  });
  assert.equal(c.image, "reg/Org__Repo-1");
});

Deno.test("--image-template swebench and {id_lower} lower-case an id with capitals", () => {
  // Image names are lower case; SWE-bench's own ids need not be.
  const line = sweLine({ instance_id: "Org__Repo-1" });
  const [swe] = parseTasks(line, "t.jsonl", { imageTemplate: "swebench" });
  assert.equal(swe.image, "swebench/sweb.eval.x86_64.org_1776_repo-1:latest");
  // The task keeps its id as written (its folder, its prediction's instance_id).
  assert.equal(swe.id, "Org__Repo-1");
  assert.equal(swe.instance_id, "Org__Repo-1");
  const [local] = parseTasks(line, "t.jsonl", {
    imageTemplate: "sweb.eval.x86_64.{id_lower}:latest",
  });
  assert.equal(local.image, "sweb.eval.x86_64.org__repo-1:latest");
});

Deno.test("a bad --image-template is refused, naming what is wrong", () => {
  assert.match(
    usageMessage(() => parseTasks(sweLine(), "t", { imageTemplate: "img:{instance}" })),
    /--image-template "img:\{instance\}" has unknown placeholder\(s\) \{instance\}: use \{id\}/,
  );
  assert.match(
    usageMessage(() => parseTasks(sweLine(), "t", { imageTemplate: "fixed:latest" })),
    /names no instance/,
  );
  assert.match(
    usageMessage(() => parseTasks(sweLine(), "t", { imageTemplate: "--privileged {id}" })),
    /is not a plain name/,
  );
});

Deno.test("image lines: clear errors for a missing image, repo or statement, and bad fields", () => {
  const text = [
    // A SWE-bench line without an image and no template.
    sweLine(),
    // A Deft line with neither a repo nor an image.
    '{"id": "a", "task": "t"}',
    // A hostile image name.
    '{"id": "b", "image": "-v/:/host", "task": "t"}',
    // A workdir that is not absolute; another without an image.
    '{"id": "c", "image": "img", "workdir": "src", "task": "t"}',
    '{"id": "d", "repo": "r", "workdir": "/src", "task": "t"}',
    // A SWE-bench line without its statement, and one with an id beside its instance_id.
    JSON.stringify({ instance_id: "x__y-1", image: "img" }),
    JSON.stringify({ instance_id: "x__y-2", id: "z", image: "img", problem_statement: "p" }),
    '{"id": "e", "dockerfile": "Dockerfile", "image": "img", "task": "t"}',
  ].join("\n");
  const message = usageMessage(() => parseTasks(text, "T"));
  assert.match(message, /8 bad line\(s\)/);
  assert.match(
    message,
    /T:1: no image for instance "astropy__astropy-12907": give --image-template/,
  );
  assert.match(message, /T:2: "repo" is missing \(the repository to clone; or name an "image"/);
  assert.match(message, /T:3: "image" '-v\/:\/host' is not a plain name/);
  assert.match(message, /T:4: "workdir" "src" must be an absolute folder inside the image/);
  assert.match(message, /T:5: "workdir" names a folder inside an image: give "image" too/);
  assert.match(message, /T:6: "problem_statement" is missing/);
  assert.match(message, /T:7: "id" and "instance_id" cannot go together/);
  assert.match(message, /T:8: "image" and "dockerfile" cannot go together/);
});

Deno.test("a line may name a Dockerfile: relative to the task file, no repo, no template", async () => {
  await using tmp = await tempDir("deft-tasks-dockerfile-");
  await Deno.mkdir(join(tmp.path, "images"));
  await Deno.writeTextFile(join(tmp.path, "images", "Dockerfile"), "FROM scratch\n");
  // A link that stays inside the task file's folder is fine: what is built is where it leads.
  await Deno.symlink("images/Dockerfile", join(tmp.path, "Dockerfile.link"));
  const [a, b, c] = parseTasks(
    [
      '{"id": "a", "dockerfile": "images/Dockerfile", "task": "t"}',
      JSON.stringify({
        instance_id: "o__r-1",
        dockerfile: join(tmp.path, "images", "Dockerfile"),
        problem_statement: "p",
      }),
      '{"id": "c", "dockerfile": "Dockerfile.link", "task": "t"}',
    ].join("\n"),
    join(tmp.path, "t.jsonl"),
  );
  const built = join(tmp.path, "images", "Dockerfile");
  assert.deepEqual(a, { index: 0, id: "a", dockerfile: built, task: "t" });
  // A SWE-bench line with its own Dockerfile needs no --image-template.
  assert.equal(b.dockerfile, built);
  assert.equal(b.image, undefined);
  assert.equal(c.dockerfile, built);
});

Deno.test("a line's Dockerfile outside the task file's folder is refused, links included", async () => {
  // The attacker's task file: its lines make folders elsewhere the build context, whose files
  // (a .env here) would be copied into the image the model works in.
  await using tmp = await tempDir("deft-tasks-escape-");
  const tasksDir = join(tmp.path, "tasks");
  const outside = join(tmp.path, "outside");
  await Deno.mkdir(join(tasksDir, "sub"), { recursive: true });
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "Dockerfile"), "FROM scratch\nCOPY .env /\n");
  await Deno.writeTextFile(join(outside, ".env"), "MARKER_SECRET=1\n");
  await Deno.symlink(join(outside, "Dockerfile"), join(tasksDir, "Dockerfile"));
  await Deno.symlink(outside, join(tasksDir, "sub", "dir"));
  const text = [
    '{"id": "up", "dockerfile": "../outside/Dockerfile", "task": "t"}',
    JSON.stringify({ id: "abs", dockerfile: join(outside, "Dockerfile"), task: "t" }),
    '{"id": "link", "dockerfile": "Dockerfile", "task": "t"}',
    '{"id": "dirlink", "dockerfile": "sub/dir/Dockerfile", "task": "t"}',
    '{"id": "deep", "dockerfile": "sub/../../outside/Dockerfile", "task": "t"}',
    '{"id": "missing", "dockerfile": "sub/Dockerfile", "task": "t"}',
    '{"id": "folder", "dockerfile": "sub", "task": "t"}',
  ].join("\n");
  const file = join(tasksDir, "t.jsonl");
  const message = usageMessage(() => parseTasks(text, file));
  assert.match(message, /7 bad line\(s\); nothing was started/);
  const named = join(outside, "Dockerfile");
  const line = (n: number) => message.split("\n").find((l) => l.includes(`t.jsonl:${n}:`)) ?? "";
  for (const n of [1, 2, 5]) {
    assert.ok(
      line(n).includes(`names ${named}, outside the task file's folder ${tasksDir}: refused`),
      line(n),
    );
  }
  for (const n of [3, 4]) {
    assert.ok(
      line(n).includes(`leads through a symbolic link to ${named}, outside the task file's`),
      line(n),
    );
  }
  for (const n of [1, 2, 3, 4, 5]) {
    // Why, and what to do.
    assert.match(line(n), /its folder would be the build context/);
    assert.match(
      line(n),
      /move the Dockerfile, .* or build that image yourself .*--dockerfile-path/,
    );
  }
  assert.match(line(6), /"dockerfile" "sub\/Dockerfile": there is no file .*sub\/Dockerfile/);
  assert.match(line(7), /"dockerfile" "sub": .*sub is not a file/);
});

Deno.test("a Deft line with an image needs no repo; its repo is recorded as written", () => {
  const [a, b] = parseTasks(
    [
      '{"id": "a", "image": "img:1", "task": "t"}',
      '{"id": "b", "image": "img:1", "repo": "repos/b", "commit": "v1", "task": "t"}',
    ].join("\n"),
    "/d/t.jsonl",
  );
  assert.deepEqual(a, { index: 0, id: "a", image: "img:1", task: "t" });
  assert.equal(b.repo, "repos/b");
  assert.equal(b.commit, "v1");
  // Unknown fields stay typos on Deft's own lines.
  assert.match(
    usageMessage(() => parseTasks('{"id": "a", "image": "i", "task": "t", "hints_text": ""}', "T")),
    /unknown field\(s\) hints_text/,
  );
});

Deno.test("the default image: a line's own image, then --image-template, then the default", async () => {
  await using tmp = await tempDir("deft-tasks-default-");
  await Deno.mkdir(join(tmp.path, "d"));
  await Deno.writeTextFile(join(tmp.path, "d", "Dockerfile"), "FROM scratch\n");
  const tasksFile = join(tmp.path, "t.jsonl");
  const text = [
    // A Deft line with no repo: fine with a default image.
    '{"id": "plain", "task": "fix it"}',
    // A Deft line with a repo: recorded as written, not cloned.
    '{"id": "withrepo", "repo": "repos/x", "task": "fix it"}',
    '{"id": "own", "image": "mine:1", "task": "fix it"}',
    '{"id": "built", "dockerfile": "d/Dockerfile", "task": "fix it"}',
    '{"instance_id": "a__b-1", "problem_statement": "p"}',
  ].join("\n");
  const withTemplate = applyDefaultImage(
    parseTasks(text, tasksFile, { imageTemplate: "t/{id}", defaultImage: true }),
    "dflt:2",
  );
  assert.deepEqual(withTemplate.map((t) => [t.id, t.image ?? t.dockerfile]), [
    ["plain", "dflt:2"],
    ["withrepo", "dflt:2"],
    ["own", "mine:1"],
    ["built", join(tmp.path, "d", "Dockerfile")],
    ["a__b-1", "t/a__b-1"],
  ]);
  assert.equal(withTemplate[1].repo, "repos/x");
  // Without a template, the SWE-bench line takes the default too.
  const noTemplate = applyDefaultImage(
    parseTasks(text, tasksFile, { defaultImage: true }),
    "dflt:2",
  );
  assert.equal(noTemplate[4].image, "dflt:2");
  // Without a default image, the same lines are refused: no repo, no image.
  assert.throws(
    () => parseTasks(text, tasksFile),
    (e: Error) =>
      e instanceof UsageError && /t\.jsonl:1: "repo" is missing/.test(e.message) &&
      /t\.jsonl:5: no image for instance "a__b-1"/.test(e.message),
  );
});
