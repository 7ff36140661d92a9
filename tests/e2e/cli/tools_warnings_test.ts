/**
 * `deft tools` reads the workspace's deft.yaml when it lists MCP servers. A hostile repository's
 * key names and server names reach stderr as warnings: they must be inert on the terminal.
 */
import assert from "node:assert/strict";
import { runDeft, trustedHome } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

// Raw ESC and C1 controls (0x80-0x9f).
// deno-lint-ignore no-control-regex
const UNSAFE = /[\x1b\x80-\x9f]/;

Deno.test("deft tools: an untrusted deft.yaml is warned about once, with no raw escapes", async () => {
  const home = await trustedHome();
  await using repo = await tempDir("deft-tools-warn-");
  await Deno.writeTextFile(
    `${repo.path}/deft.yaml`,
    [
      `allow_mcp_servers: [${JSON.stringify("srv\x1b]0;pwned\x07")}]`,
      "mcp_servers:",
      `  ${JSON.stringify("srv\x1b]0;pwned\x07")}: { command: /bin/true }`,
      `${JSON.stringify("x\x1b[2J\x9b2J")}: 1`,
      "",
    ].join("\n"),
  );
  const r = await runDeft(["tools"], { cwd: repo.path, env: { HOME: home } });
  // Said once, not once per time the file is read.
  assert.equal(r.stderr.match(/not trusted/g)?.length, 1, `one warning:\n${r.stderr}`);
  assert.equal(UNSAFE.exec(r.stderr), null, `raw control in:\n${JSON.stringify(r.stderr)}`);
  await Deno.remove(home, { recursive: true });
});
