/**
 * deno.json cannot import, so its copies of Deft's Deno flags are checked here against
 * src/policy/self.ts, which starts Deft again with them: the `deft` and `compile` tasks and the
 * `unstable` list must say what a child Deft is started with.
 */
import assert from "node:assert/strict";
import { deftArgv, FULL_PERMISSION_FLAGS } from "../../src/policy/self.ts";

const config = JSON.parse(
  await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
) as { unstable: string[]; tasks: Record<string, string> };

/** The flags self.ts puts between `deno run` and the module: unstable ones, then the rest. */
function selfFlags(): { unstable: string[]; other: string[] } {
  const argv = deftArgv(FULL_PERMISSION_FLAGS, "/deft/main.ts");
  assert.equal(argv[1], "run", `the tests run under deno, so deftArgv is a deno run: ${argv}`);
  const flags = argv.slice(2, -1).filter((f) => !FULL_PERMISSION_FLAGS.includes(f));
  return {
    unstable: flags.filter((f) => f.startsWith("--unstable-")),
    other: flags.filter((f) => !f.startsWith("--unstable-")),
  };
}

function taskFlags(name: string): string[] {
  const task = config.tasks[name];
  assert.ok(task, `deno.json has no "${name}" task`);
  return task.split(/\s+/).filter((t) => t.startsWith("--"));
}

const sorted = (list: readonly string[]) => [...list].sort();

Deno.test("deno.json's unstable list is the one self.ts starts Deft with", () => {
  assert.deepEqual(
    sorted(config.unstable.map((feature) => `--unstable-${feature}`)),
    sorted(selfFlags().unstable),
  );
});

for (const name of ["deft", "compile"]) {
  Deno.test(`deno.json's ${name} task grants self.ts's permissions and flags`, () => {
    const flags = taskFlags(name);
    assert.deepEqual(flags.filter((f) => f.startsWith("--allow-")), [...FULL_PERMISSION_FLAGS]);
    for (const flag of selfFlags().other) assert.ok(flags.includes(flag), `${name}: ${flag}`);
    const given = new Set(flags.filter((f) => f.startsWith("--unstable-")));
    // `deno run` also reads deno.json's unstable list; a compiled executable keeps only the
    // flags it was built with, so the compile task names every one.
    if (name === "deft") {
      for (const feature of config.unstable) given.add(`--unstable-${feature}`);
    }
    assert.deepEqual(sorted([...given]), sorted(selfFlags().unstable));
  });
}
