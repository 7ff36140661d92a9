/**
 * Podman's `--ulimit` flags never ask for more than Deft's own hard limits: in a container or a
 * login with `ulimit -Hu 1000`, asking for 4096 processes fails the container's start with
 * "error setting rlimit type 6: operation not permitted".
 */
import assert from "node:assert/strict";
import { ownHardLimits, podmanLimits } from "../../src/policy/container_cli.ts";

/** What `ulimit -Hu; ulimit -Hn` prints. */
const LIMITS = "1000\n800\n";

Deno.test("podman limits: lowered to the hard limits Deft runs under, as bash's ulimit says them", () => {
  assert.deepEqual(ownHardLimits(LIMITS), { files: 800, processes: 1000 });
  assert.deepEqual(podmanLimits(4096, { files: 800, processes: 1000 }), [
    "--ulimit",
    "nofile=800:800",
    "--ulimit",
    "nproc=1000:1000",
  ]);
});

Deno.test("podman limits: the wanted ones where the hard limits are higher, unlimited or unknown", () => {
  assert.deepEqual(ownHardLimits("unlimited\n800\n"), {
    files: 800,
    processes: undefined,
  });
  assert.deepEqual(podmanLimits(4096, {}), [
    "--ulimit",
    "nofile=1024:1024",
    "--ulimit",
    "nproc=4096:4096",
  ]);
  assert.deepEqual(podmanLimits(512, { files: 20000, processes: 96367 }), [
    "--ulimit",
    "nofile=1024:1024",
    "--ulimit",
    "nproc=512:512",
  ]);
});
