/**
 * The approval rules' reading of a command line checked against bash itself: random lines made
 * of shell syntax, wrappers and `rm x` run in a real bash whose `rm` only leaves a mark. Whenever
 * bash ran `rm`, `deny: ["$ rm"]` must have refused the line or asked about it, and allowing every
 * other command named must not have let it through.
 */
import assert from "node:assert/strict";
import { ApprovalRules } from "../../../src/agent/approval_rules.ts";
import { tempDir } from "../../helpers/temp.ts";

/** A small seeded generator, so a failure repeats. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PIECES = [
  "rm x",
  "rm x",
  "rm x",
  " ",
  ";",
  "&&",
  "||",
  "|",
  "&",
  "\n",
  "(",
  ")",
  "{ ",
  "; }",
  "$(",
  "`",
  "'",
  '"',
  "\\",
  "$'",
  "\\\\",
  "#",
  "<<E\n",
  "\nE\n",
  "<<'E'\n",
  "eval ",
  "bash -c ",
  "sh -c ",
  "nice ",
  "env ",
  "timeout 5 ",
  "xargs ",
  "echo ",
  "true",
  "f() ",
  "if true; then ",
  "fi",
  "do ",
  "done",
  "for i in a; ",
  "$X",
  "${X:-",
  "}",
  "<(",
  "2>&1",
  "=",
  "A=1 ",
  "r\\m",
  "exec ",
  "command ",
  "time ",
  "trap ",
  " EXIT",
  "case a in a) ",
  ";;",
  " esac",
  "$((",
  "))",
];

Deno.test("rules vs bash: every line where bash ran rm is refused or asked under deny `$ rm` (1,500 random lines; no allow covers them)", async () => {
  await using dir = await tempDir();
  const bin = `${dir.path}/bin`;
  const work = `${dir.path}/work`;
  await Deno.mkdir(bin);
  await Deno.mkdir(work);
  const marks = `${dir.path}/marks`;
  await Deno.mkdir(marks);
  // Each line's `rm` marks that line (a background `rm &` may finish after bash has exited).
  await Deno.writeTextFile(`${bin}/rm`, '#!/bin/sh\necho ran >> "$MARK"\n', { mode: 0o755 });
  for (const tool of ["env", "nice", "timeout", "xargs", "sh", "bash", "true"]) {
    const found = ["/usr/bin", "/bin"].map((d) => `${d}/${tool}`).find((p) => {
      try {
        return Deno.statSync(p).isFile;
      } catch {
        return false;
      }
    });
    if (found) await Deno.symlink(found, `${bin}/${tool}`);
  }
  const rules = new ApprovalRules([
    { action: "deny", text: "$ rm", source: "policy.yaml", origin: "file" },
  ]);
  // Every command the pieces name but rm: an allow of them all must still not let rm through.
  const allowing = new ApprovalRules(
    ["echo", "true", "bash", "sh", "nice", "env", "timeout", "xargs", "eval", "f", "x", "E"].map((
      name,
    ) => ({
      action: "allow" as const,
      text: `$ ${name}`,
      source: "policy.yaml",
      origin: "file" as const,
    })),
  );
  const next = random(7);
  const lines: string[] = [];
  for (let n = 0; n < 1500; n++) {
    // Pieces around one `rm x`, at a random place.
    const parts = Array.from(
      { length: Math.floor(next() * 7) },
      () => PIECES[Math.floor(next() * PIECES.length)],
    );
    parts.splice(Math.floor(next() * (parts.length + 1)), 0, "rm x");
    const line = parts.join("");
    lines.push(line);
    await new Deno.Command("/bin/bash", {
      args: ["--norc", "--noprofile", "-c", line],
      cwd: work,
      env: { PATH: bin, HOME: work, MARK: `${marks}/${n}` },
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
  }
  // Background jobs (`timeout 5` at most) have ended.
  await new Promise((r) => setTimeout(r, 6000));
  let ran = 0;
  for (const entry of Deno.readDirSync(marks)) {
    ran++;
    const line = lines[Number(entry.name)];
    const verdict = rules.match("bash", { kind: "command", command: line });
    assert.ok(
      verdict?.action === "deny" || verdict?.action === "ask",
      `bash ran rm, the rules let it through: ${JSON.stringify(line)}`,
    );
    const allowed = allowing.match("bash", { kind: "command", command: line });
    assert.notEqual(
      allowed?.action,
      "allow",
      `bash ran rm, an allow covered it: ${JSON.stringify(line)}`,
    );
  }
  // The generator reaches rm often enough for the check to mean something.
  assert.ok(ran > 400, `bash ran rm in only ${ran} lines`);
});
