/**
 * The shell's environment: what a parent process (or a hostile wrapper around Deft) exported
 * must not turn into code the model's shell runs.
 */
import assert from "node:assert/strict";
import { shellEnvironment } from "../../../src/policy/shell_env.ts";
import { helperLaunch, runChild } from "../../../src/policy/process.ts";

// An exported function overriding `cd`: bash defines it at start-up in every shell that inherits it.
const FUNCTION = { "BASH_FUNC_cd%%": "() { echo hijacked; }" };

Deno.test("shell env: exported bash functions are dropped, whatever the inherit policy", () => {
  for (const inherit of ["all", "core"] as const) {
    const env = shellEnvironment(
      { inherit, include_only: inherit === "all" ? undefined : ["*"] },
      { PATH: "/usr/bin:/bin", ...FUNCTION },
    );
    assert.ok(!Object.keys(env).some((name) => name.startsWith("BASH_FUNC_")), inherit);
  }
  const all = shellEnvironment({}, { PATH: "/usr/bin:/bin", HOME: "/h", ...FUNCTION });
  assert.deepEqual(all, { PATH: "/usr/bin:/bin", HOME: "/h" });
});

Deno.test("shell env: a bash started with the environment does not run the exported function", async () => {
  const env = shellEnvironment({}, { PATH: "/usr/bin:/bin", ...FUNCTION });
  const launch = {
    ...helperLaunch("bash", ["--noprofile", "--norc", "-c", "cd / && echo plain"]),
    env,
  };
  const out = await runChild(launch);
  assert.equal(new TextDecoder().decode(out.stdout), "plain\n");
});
