/**
 * Background shells that print a lot hold bounded memory (measured in a fresh Deno, after a full
 * GC, by tests/fixtures/bash/background_memory.ts): one printing without end keeps at most its
 * 1 MiB of unread output; 100 shells of 10 MB each keep the output of the 16 that ended last,
 * and a read of an older one says its output was dropped.
 */
import assert from "node:assert/strict";
import { denoDir } from "../../../helpers/deft.ts";

interface Measured {
  liveMiB: number;
  rssMiB: number;
  reads: Record<string, string>;
}

async function measure(scenario: "endless" | "hundred"): Promise<Measured> {
  const script = new URL("../../../fixtures/bash/background_memory.ts", import.meta.url);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--v8-flags=--expose-gc", script.pathname, scenario],
    env: { DENO_DIR: denoDir(), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const measured = JSON.parse(stdout.trim().split("\n").at(-1)!) as Measured;
  console.log(
    `${scenario}: ${measured.liveMiB.toFixed(1)} MiB live after GC, RSS +${
      measured.rssMiB.toFixed(0)
    } MiB`,
  );
  return measured;
}

Deno.test("background memory: a shell printing without end keeps at most its buffer", async () => {
  const { liveMiB, reads } = await measure("endless");
  const dropped = Number(/\[… (\d+) bytes dropped/.exec(reads.endless)?.[1] ?? 0);
  assert.ok(dropped > 16 << 20, `over 16 MiB was printed and dropped: ${dropped}`);
  assert.match(reads.endless, /^0123456789abcdef$/m);
  assert.ok(liveMiB < 16, `${liveMiB} MiB still live`);
});

Deno.test("background memory: 100 shells × 10 MB keep at most 32 buffers", async () => {
  const { liveMiB, reads } = await measure("hundred");
  assert.match(reads.last, /end 99/);
  assert.match(reads.first, /^status: exited \(exit code 0\)$/m);
  assert.match(reads.first, /bytes dropped: not read in time/);
  assert.doesNotMatch(reads.first, /end 0/, "the first shell's output is gone");
  // (16 running + 16 ended) × 1 MiB at most, and what Deno itself holds.
  assert.ok(liveMiB < 64, `${liveMiB} MiB still live`);
});
