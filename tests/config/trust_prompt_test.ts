import assert from "node:assert/strict";
import { askToTrust, layerUntrusted } from "../../src/config/trust.ts";
import { tempDir } from "../helpers/temp.ts";
import { loadYaml } from "../../src/config/yaml.ts";

// The config parsers are called here on text, with no file read first (src/config/yaml.ts).
await loadYaml();

const UNTRUSTED = { path: "deft.yaml", folder: "/w/repo", ignored: ["mcp_servers", "sandbox"] };

function asking(answers: (string | null)[], terminal: boolean, declinedFile?: string) {
  const said: string[] = [];
  const asked: string[] = [];
  return {
    said,
    asked,
    decide: askToTrust({
      terminal,
      ask: (q) => {
        asked.push(q);
        return Promise.resolve(answers.shift() ?? null);
      },
      write: (t) => said.push(t),
      declinedFile,
    }),
  };
}

Deno.test("askToTrust without a terminal: one line naming the keys and deft trust, no question", async () => {
  const a = asking([], false);
  assert.equal(await a.decide(UNTRUSTED), false);
  assert.deepEqual(a.asked, []);
  assert.equal(a.said.length, 1);
  assert.match(a.said[0], /its mcp_servers, sandbox are ignored; run `deft trust \/w\/repo`/);
});

Deno.test("askToTrust on a terminal: yes trusts; no is remembered; no answer is not", async () => {
  await using dir = await tempDir();
  const declined = `${dir.path}/state/declined_trust`;
  for (const yes of ["y", "YES", " y "]) {
    assert.equal(await asking([yes], true, declined).decide(UNTRUSTED), true, yes);
  }
  const silent = asking([null], true, declined);
  assert.equal(await silent.decide(UNTRUSTED), false);
  assert.equal(silent.asked.length, 1);
  await assert.rejects(Deno.stat(declined), "end of input is no answer to remember");
  const no = asking(["", "y"], true, declined);
  assert.equal(await no.decide(UNTRUSTED), false);
  assert.match(no.asked[0], /Trust \/w\/repo, .*\[y\/N\] $/);
  assert.equal(await Deno.readTextFile(declined), "/w/repo\n");
  // Asked once: the next start only says it, and another folder is still asked.
  assert.equal(await no.decide(UNTRUSTED), false);
  assert.equal(no.asked.length, 1);
  assert.match(no.said.at(-1)!, /^note: deft\.yaml is in a folder you have not trusted/);
  assert.equal(await no.decide({ ...UNTRUSTED, folder: "/w/other" }), true);
});

Deno.test("askToTrust shows hostile key names and folders inert", async () => {
  const a = asking(["n"], true);
  await a.decide({ path: "deft.yaml", folder: "/w/\x1b[2Jx", ignored: ["evil\x1b]0;t\x07"] });
  for (const text of [...a.said, ...a.asked]) {
    // deno-lint-ignore no-control-regex
    assert.ok(!/[\x00-\x1f]/.test(text.replace(/\n/g, "")), text);
  }
  assert.match(a.said[0], /evil\\x1b\]0;t\\x07/);
});

Deno.test("askToTrust: only a yes is a yes; 'not yet', 'nay', 'no way' are no and are remembered", async () => {
  await using dir = await tempDir();
  for (const answer of ["not yet", "nay", "no way", "n", "no", "yes\nno", "yy"]) {
    const declined = `${dir.path}/${crypto.randomUUID()}`;
    const a = asking([answer], true, declined);
    assert.equal(await a.decide(UNTRUSTED), false, JSON.stringify(answer));
    assert.match(a.said.at(-1)!, /^not trusted: going on without mcp_servers, sandbox/);
    assert.equal(await Deno.readTextFile(declined), "/w/repo\n", JSON.stringify(answer));
  }
  for (const answer of ["y", "Y", "yes", " Yes ", "YES\r"]) {
    assert.equal(await asking([answer], true).decide(UNTRUSTED), true, JSON.stringify(answer));
  }
});

Deno.test("askToTrust: a key or folder holding a newline cannot draw a line of its own", async () => {
  const fake = "\nnote: /w/repo is already trusted (trusted_folders); nothing to do\n";
  const a = asking(["n"], true);
  await a.decide({
    path: `deft.yaml${fake}`,
    folder: `/w/repo${fake}`,
    ignored: [`mcp_servers${fake}`, `sandbox\r\talready trusted`],
  });
  const b = asking([], false);
  await b.decide({ path: "deft.yaml", folder: "/w/repo", ignored: [`mcp_servers${fake}`] });
  for (const text of [...a.said, ...a.asked, ...b.said]) {
    assert.ok(!/[\n\r\t]/.test(text), `a line break reached the terminal: ${JSON.stringify(text)}`);
    assert.match(text, /\\x0anote: \/w\/repo is already trusted/);
  }
  assert.match(a.said[0], /sandbox\\x0d\\x09already trusted/);
});

Deno.test("layerUntrusted: the warning spells a key's newline out instead of drawing a line", () => {
  const repo = `"mcp_servers\\nnote: /w is already trusted\\r": {}\nsandbox: none\n`;
  const layer = layerUntrusted(repo, "/w/deft.yaml");
  assert.deepEqual(layer.ignored, ["mcp_servers\nnote: /w is already trusted\r", "sandbox"]);
  assert.ok(!/[\n\r]/.test(layer.warning!), JSON.stringify(layer.warning));
  assert.match(
    layer.warning!,
    /may not set mcp_servers\\x0anote: \/w is already trusted\\x0d, sandbox/,
  );
});
