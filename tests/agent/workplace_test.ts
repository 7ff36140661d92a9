/**
 * Where the tools act is decided once, by the session's `Workplace` (src/agent/workplace.ts):
 * the session, `deft run`, `deft interactive`, resuming and `@` mentions never look at the
 * container themselves. Checked on their text (code only, comments left out), and on what a
 * mention reads: the workplace's file, wherever that place is.
 */
import assert from "node:assert/strict";
import { readMention } from "../../src/cli/interactive/mentions.ts";
import type { PlaceRead } from "../../src/agent/workplace.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The files that ask the workplace rather than branch on a container. */
const BEHIND_WORKPLACE = [
  "src/agent/session.ts",
  "src/agent/session_types.ts",
  "src/cli/run.ts",
  "src/cli/interactive.ts",
  "src/cli/interactive/mentions.ts",
  "src/cli/resume.ts",
];

/** What would mean a file decides host or container itself, each with what it is. */
const CONTAINER_CODE: { pattern: RegExp; what: string }[] = [
  { pattern: /\.container\b/, what: "reads a `.container`" },
  { pattern: /\bContainer\b/, what: "names the `Container` type" },
  { pattern: /["'][^"']*\/container\/[^"']*["']/, what: "imports src/container" },
  { pattern: /\b(?:wantsContainer|inContainer)\b/, what: "asks whether there is a container" },
  {
    pattern: /\b(?:host|container)(?:Workplace|CheckpointPlace)\b|\bInContainer\b/,
    what: "picks the host's or the container's way itself",
  },
];

/** `source` without block and `//` comments, so prose may speak of containers. */
function code(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

Deno.test("the session, run, interactive, resume and @ mentions leave the container to the Workplace", async () => {
  const found: string[] = [];
  for (const file of BEHIND_WORKPLACE) {
    const lines = code(await Deno.readTextFile(`${ROOT}${file}`)).split("\n");
    lines.forEach((line, i) => {
      for (const { pattern, what } of CONTAINER_CODE) {
        if (pattern.test(line)) found.push(`${file}:${i + 1} ${what}: ${line.trim()}`);
      }
    });
  }
  assert.deepEqual(found, [], `decide it in src/agent/workplace*.ts instead:\n${found.join("\n")}`);
});

Deno.test("an @ mention is read where the workplace says, bounded by the attachment limit", async () => {
  // A place whose files are not the host's (as a container's are not): the host has no
  // /testbed/notes.md, so only the place can have read it.
  const asked: { path: string; limit: number }[] = [];
  const place = {
    readFile: (path: string, limit: number): Promise<PlaceRead> => {
      asked.push({ path, limit });
      return Promise.resolve(
        path === "notes.md"
          ? { bytes: new TextEncoder().encode("read in the place\n") }
          : { refused: "there is no such file in the container's workspace" },
      );
    },
  };
  const text = await readMention(place, "notes.md");
  assert.ok("text" in text, JSON.stringify(text));
  assert.equal(text.text, "read in the place\n");
  const refused = await readMention(place, "gone.png");
  assert.deepEqual(refused, {
    path: "gone.png",
    refused: "there is no such file in the container's workspace",
  });
  // Text files up to 256 KiB, images up to 5 MiB: the place reads no more than that.
  assert.deepEqual(asked, [
    { path: "notes.md", limit: 256 * 1024 },
    { path: "gone.png", limit: 5 * 1024 * 1024 },
  ]);
});
