/**
 * The container policy's own decisions, without a runtime: the set-id guard a bound host folder
 * gets, the docker client's configuration (none of the user's proxies), and the ownership proof
 * the leftover sweep trusts. The same promises are checked against real runtimes in
 * tests/e2e/container/hardening_test.ts.
 */
import assert from "node:assert/strict";
import {
  containerLaunch,
  containerSeccompProfile,
  dockerClientConfig,
} from "../../src/policy/process.ts";
import { provenLeftover, runStamp, stampLabels } from "../../src/container/ownership.ts";
import { tempDir } from "../helpers/temp.ts";

const BASE = {
  defaultAction: "SCMP_ACT_ERRNO",
  defaultErrnoRet: 1,
  syscalls: [
    { names: ["read", "chmod", "openat", "write", "io_uring_setup"], action: "SCMP_ACT_ALLOW" },
    { names: ["fchmodat"], action: "SCMP_ACT_ALLOW", includes: { caps: ["CAP_FOWNER"] } },
    { names: ["ptrace"], action: "SCMP_ACT_ERRNO", errnoRet: 1 },
  ],
};

Deno.test("containerSeccompProfile: a mode call is allowed only without a set-id bit", () => {
  const profile = containerSeccompProfile(BASE) as {
    defaultAction: string;
    syscalls: { names: string[]; action: string; args?: unknown[] }[];
  };
  assert.equal(profile.defaultAction, "SCMP_ACT_ERRNO");
  // Nothing allows chmod, openat or fchmodat unconditionally any more; the rest stays.
  const unconditional = profile.syscalls.filter((r) => r.action === "SCMP_ACT_ALLOW" && !r.args)
    .flatMap((r) => r.names);
  assert.deepEqual(unconditional, ["read", "write"]);
  assert.ok(profile.syscalls.some((r) => r.names.includes("ptrace")));
  for (const [name, index] of [["chmod", 1], ["fchmodat", 2], ["openat", 3], ["mknod", 1]]) {
    const rule = profile.syscalls.find((r) => r.names[0] === name && r.args);
    assert.deepEqual(rule?.args, [{
      index,
      value: 0o6000,
      valueTwo: 0,
      op: "SCMP_CMP_MASKED_EQ",
    }]);
  }
  const refused = profile.syscalls.find((r) => r.names.includes("openat2"));
  assert.equal(refused?.action, "SCMP_ACT_ERRNO");
  assert.ok(refused?.names.includes("io_uring_setup"));
  // A profile that allows by default is no base to build on.
  assert.throws(() => containerSeccompProfile({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [] }));
  assert.throws(() => containerSeccompProfile(undefined));
});

Deno.test("containerLaunch: no device nodes, no file capabilities, the seccomp file given", () => {
  const spec = {
    image: "deft-test:1",
    name: "deft-1-ab",
    labels: {},
    network: "none" as const,
    binds: [],
    keep: false,
  };
  const plain = containerLaunch({ program: "docker" }, spec).args;
  assert.ok(plain.join(" ").includes("--cap-drop MKNOD --cap-drop SETFCAP"), plain.join(" "));
  assert.ok(!plain.some((a) => a.startsWith("seccomp=")));
  const guarded = containerLaunch({ program: "podman" }, {
    ...spec,
    seccompProfile: "/tmp/p.json",
  }).args;
  assert.ok(guarded.includes("seccomp=/tmp/p.json"));
  assert.ok(guarded.includes("--http-proxy=false"));
  assert.throws(() =>
    containerLaunch({ program: "docker" }, { ...spec, seccompProfile: "p.json" })
  );
});

Deno.test("dockerClientConfig keeps the chosen context and nothing else", () => {
  assert.deepEqual(
    dockerClientConfig({
      proxies: { default: { httpProxy: "http://u:secret@proxy:3128" } },
      auths: { "registry.example": { auth: "c2VjcmV0" } },
      credsStore: "desktop",
      currentContext: "remote-1",
    }),
    { currentContext: "remote-1" },
  );
  assert.deepEqual(dockerClientConfig({ currentContext: "--host=x" }), {});
  assert.deepEqual(dockerClientConfig(null), {});
});

Deno.test("ownership: only a proof made under this install's secret, for that name, counts", async () => {
  await using cache = await tempDir();
  const before = Deno.env.get("DEFT_CACHE_DIR");
  Deno.env.set("DEFT_CACHE_DIR", cache.path);
  try {
    const mine = await runStamp();
    assert.ok(mine);
    const secret = `${cache.path}/containers/secret`;
    assert.equal((await Deno.stat(secret)).mode! & 0o777, 0o600);
    // This run's own: never a leftover while it lives.
    const own = await stampLabels("container", "deft-1-a");
    assert.equal(await provenLeftover("container", "deft-1-a", own), false);
    // Another run of this install, over: its lock file is free.
    const over = "0".repeat(32);
    await Deno.writeTextFile(`${cache.path}/containers/runs/${over}.lock`, "");
    const proof = await (await runStampFor(over)).proof("container", "deft-2-b");
    const labels = { "deft.run": over, "deft.proof": proof };
    assert.equal(await provenLeftover("container", "deft-2-b", labels), true);
    // The same labels on another name, or as an image's, or forged: not proven.
    assert.equal(await provenLeftover("container", "users-own", labels), false);
    assert.equal(await provenLeftover("image", "deft-2-b", labels), false);
    assert.equal(
      await provenLeftover("container", "deft-2-b", { ...labels, "deft.proof": "f".repeat(64) }),
      false,
    );
    // Held by a live run (in whatever PID namespace): not over.
    const file = await Deno.open(`${cache.path}/containers/runs/${over}.lock`, { write: true });
    await file.lock(true);
    try {
      assert.equal(await provenLeftover("container", "deft-2-b", labels), false);
    } finally {
      file.close();
    }
  } finally {
    if (before === undefined) Deno.env.delete("DEFT_CACHE_DIR");
    else Deno.env.set("DEFT_CACHE_DIR", before);
  }
});

/** A stamp for run `run` under the install's secret (what that run's Deft would have made). */
async function runStampFor(run: string) {
  const secret = (await Deno.readTextFile(`${Deno.env.get("DEFT_CACHE_DIR")}/containers/secret`))
    .trim();
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return {
    proof: async (kind: string, name: string) =>
      [
        ...new Uint8Array(
          await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${kind}:${name}:${run}`)),
        ),
      ].map((b) => b.toString(16).padStart(2, "0")).join(""),
  };
}
