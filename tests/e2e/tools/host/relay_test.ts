/**
 * `deft __tool-host` serves the calls in its own process only when that process holds no more
 * than the worker would (#39): Deft starts it with the worker's permissions as its Deno flags and
 * says so in the boot message. A host process that holds more (a compiled Deft keeps every
 * permission it was built with) runs the fenced worker as before, whatever the boot message says.
 */
import assert from "node:assert/strict";
import { readLines } from "../../../../src/line_reader.ts";
import { toolPermissions } from "../../../../src/policy/permissions.ts";
import { FULL_PERMISSION_FLAGS } from "../../../../src/policy/self.ts";
import { tempDir } from "../../../helpers/temp.ts";

const ENTRY = new URL("../../../../src/tools/host/worker_main.ts", import.meta.url).pathname;
const CODE = new URL("../../../../", import.meta.url).pathname.replace(/\/$/, "");
const UNSTABLE = ["--unstable-worker-options", "--unstable-raw-imports", "--no-prompt"];

/** Starts a host with `flags`, boots it with `permissions`, and returns each probe's outcome. */
async function probeHost(
  flags: readonly string[],
  permissions: Deno.PermissionOptionsObject,
  targets: string[],
): Promise<string[]> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...UNSTABLE, ...flags, ENTRY, "__tool-host"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  await send({ type: "boot", permissions, fencedProcess: true });
  const outcomes: string[] = [];
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    let sent = false;
    for await (const event of readLines(child.stdout)) {
      if (!("line" in event)) continue;
      const reply = JSON.parse(event.line);
      if (reply.type === "ready" && !sent) {
        sent = true;
        for (const [id, target] of targets.entries()) {
          await send({ type: "probe", id, probe: { action: "write", target } });
        }
      } else if (reply.type === "probed") {
        outcomes[reply.id] = reply.outcome;
        if (outcomes.filter((o) => o !== undefined).length === targets.length) break;
      }
    }
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {});
    await child.stderr.cancel().catch(() => {});
    await child.status;
  }
  return outcomes;
}

Deno.test("tool host: a host process holding every permission still fences the calls with the worker's", async () => {
  await using ws = await tempDir("deft-relay-ws-");
  await using outside = await tempDir("deft-relay-outside-");
  const permissions = toolPermissions({ workspace: ws.path, code: CODE });
  const inside = `${ws.path}/in.txt`;
  const escape = `${outside.path}/escaped.txt`;
  // The boot message claims the process is fenced; it holds -A-like flags instead.
  const [allowed, refused] = await probeHost(FULL_PERMISSION_FLAGS, permissions, [inside, escape]);
  assert.equal(allowed, "allowed");
  assert.match(refused, /outside the workspace|NotCapable|Requires write access/);
  await assert.rejects(Deno.stat(escape), Deno.errors.NotFound, "nothing was written outside");
});

Deno.test("tool host: a host started with the worker's permissions as flags is fenced by them", async () => {
  await using ws = await tempDir("deft-relay-ws-");
  await using outside = await tempDir("deft-relay-outside-");
  const permissions = toolPermissions({ workspace: ws.path, code: CODE });
  const flags = [
    `--allow-read=${ws.path},${CODE}`,
    `--allow-write=${ws.path}`,
    `--allow-run=${(permissions.run as string[]).join(",")}`,
    "--allow-env",
    "--deny-import",
  ];
  const escape = `${outside.path}/escaped.txt`;
  const [allowed, refused] = await probeHost(flags, permissions, [`${ws.path}/in.txt`, escape]);
  assert.equal(allowed, "allowed");
  assert.match(refused, /outside the workspace|NotCapable|Requires write access/);
  await assert.rejects(Deno.stat(escape), Deno.errors.NotFound, "nothing was written outside");
});
