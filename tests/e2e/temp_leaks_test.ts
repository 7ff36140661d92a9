/**
 * The suite leaves nothing new in the temp root: a sample of test files, chosen to cover each way
 * a test gets a temp folder (`tempDir()` in a block, `tempDirUntilExit()` behind makeBuggyRepo and
 * a helper's HOME, folders Deft itself makes while a test drives it), runs in a `deno test` of its
 * own whose TMPDIR is a private, empty folder. Whatever is in that folder afterwards was left
 * behind: this test names it. tests/temp_folders_test.ts keeps hand-made temp folders out.
 */
import assert from "node:assert/strict";
import { REPO_ROOT } from "../helpers/deft.ts";
import { tempDir } from "../helpers/temp.ts";

/** Test files whose temp folders must all be gone when their run ends, pass or fail. */
export const SAMPLE = [
  "tests/e2e/trajectory/recorder_test.ts", // tempDir() in each test
  "tests/e2e/tools/edit/view_test.ts", // withEditor(): tempDir() around a callback
  "tests/e2e/policy/permissions_test.ts", // deft tool in a workspace; Deft's own temp folders
  "tests/e2e/cli/console/stream_json_test.ts", // makeBuggyRepo() and a HOME per run: until exit
];

Deno.test({
  name: "a sample of the suite, run in a private temp root, leaves it empty",
  sanitizeResources: false,
}, async () => {
  await using root = await tempDir("deft-temp-root-");
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-env",
      "--allow-net",
      "--allow-sys",
      ...SAMPLE,
    ],
    cwd: REPO_ROOT,
    env: { TMPDIR: root.path, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const said = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, `the sample failed:\n${said.slice(-3000)}`);
  assert.match(said, /\| [1-9]\d* passed/, said.slice(-2000));
  const left = [...Deno.readDirSync(root.path)].map((e) => e.name).sort();
  assert.deepEqual(left, [], `left in the temp root (TMPDIR=${root.path}): ${left.join(", ")}`);
});
