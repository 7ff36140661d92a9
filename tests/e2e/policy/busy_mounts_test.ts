/**
 * The sandbox starts beside a Docker daemon whose containers come and go under /tmp (issue 36,
 * finding 13). bwrap binds recursively and then re-applies read-only to every mount under what it
 * bound; a mount that disappears in between, propagated from a shared mount (as a daemon's data
 * root is), failed the whole sandbox: `Can't bind mount /oldroot/ on /newroot/: … remount
 * "/newroot/tmp/…/merged": Invalid argument`.
 *
 * The test makes that situation without a daemon and without touching the machine's own mount
 * table: in a mount namespace of its own (`unshare -m`, or `-Urm` for a user who is not root), a
 * temp folder under /tmp becomes a shared mount, and a small program mounts and unmounts a tmpfs
 * under it as fast as it can while the sandbox Deft builds starts again and again.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sandboxCommand } from "../../../src/policy/sandbox.ts";
import { tempDir } from "../../helpers/temp.ts";

// Mounts and unmounts a tmpfs at argv[1] for argv[2] seconds (a shell loop is far too slow to
// hit the window). Python's ctypes: no compiler needed.
const CHURN = `
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
target = sys.argv[1].encode()
end = time.time() + float(sys.argv[2])
while time.time() < end:
    if libc.mount(b"deft-churn", target, b"tmpfs", 0, None) == 0:
        libc.umount2(target, 0)
`;

// Inside the private mount namespace: the shared mount, the churn, then the sandbox N times.
const SCENE = `
set -u
dir=$1 runs=$2; shift 2
mount --bind "$dir" "$dir" && mount --make-shared "$dir" && mkdir -p "$dir/busy" || exit 90
python3 "$dir/churn.py" "$dir/busy" 60 & churn=$!
sleep 0.3
ok=0
for _ in $(seq 1 "$runs"); do
  if said=$("$@" 2>&1) && [ "$said" = works ]; then ok=$((ok + 1)); else echo "$said" >&2; fi
done
kill "$churn"
echo "$ok"
`;

Deno.test("the sandbox starts while mounts under /tmp come and go (a Docker daemon's containers)", async () => {
  await using dir = await tempDir("deft-busy-", { dir: "/tmp" });
  const workspace = join(dir.path, "ws");
  await Deno.mkdir(workspace);
  await Deno.writeTextFile(join(dir.path, "churn.py"), CHURN);
  const sandbox = sandboxCommand(["bash", "-c", "echo works"], {
    mode: "workspace-write",
    workspace,
    cwd: workspace,
  });
  const root = Deno.uid() === 0;
  const runs = 40;
  const out = await new Deno.Command("unshare", {
    args: [
      ...(root ? ["-m"] : ["-Urm"]),
      "bash",
      "-c",
      SCENE,
      "scene",
      dir.path,
      String(runs),
      sandbox.program,
      ...sandbox.args,
    ],
    env: { PYTHONDONTWRITEBYTECODE: "1" },
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout).trim();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `the scene could not be set up (${out.code}): ${stderr}`);
  assert.equal(stdout, String(runs), `the sandbox failed to start:\n${stderr.slice(0, 2000)}`);
});
