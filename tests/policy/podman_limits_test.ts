/**
 * Podman's `--ulimit` flags never ask for more than Deft's own hard limits: in a container or a
 * login with `ulimit -Hu 1000`, asking for 4096 processes fails the container's start with
 * "error setting rlimit type 6: operation not permitted".
 */
import assert from "node:assert/strict";
import { ownHardLimits, podmanLimits } from "../../src/policy/container_cli.ts";

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max processes             1000                 1000                 processes
Max open files            512                  800                  files
`;

Deno.test("podman limits: lowered to the hard limits Deft runs under, read from /proc's table", () => {
  assert.deepEqual(ownHardLimits(LIMITS), { files: 800, processes: 1000 });
  assert.deepEqual(podmanLimits(4096, { files: 800, processes: 1000 }), [
    "--ulimit",
    "nofile=800:800",
    "--ulimit",
    "nproc=1000:1000",
  ]);
});

Deno.test("podman limits: the wanted ones where the hard limits are higher, unlimited or unknown", () => {
  assert.deepEqual(ownHardLimits(LIMITS.replace(/1000 {17}processes/, "unlimited processes")), {
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

Deno.test("podman limits: this process's own hard limits are read", () => {
  const own = ownHardLimits();
  const text = Deno.readTextFileSync("/proc/self/limits");
  const processes = /^Max processes\s+\S+\s+(\S+)/m.exec(text)![1];
  assert.equal(own.processes, processes === "unlimited" ? undefined : Number(processes));
});
