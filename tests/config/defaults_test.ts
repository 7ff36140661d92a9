/**
 * The configuration without a file, as the interactive start takes it without the schema
 * (src/config/defaults.ts), is the schema's; and whether a file is there is judged as the loader
 * judges it.
 */
import assert from "node:assert/strict";
import { configFileGiven, defaultConfigWithoutSchema } from "../../src/config/defaults.ts";
import { defaultConfig } from "../../src/config/load.ts";
import { tempDir } from "../helpers/temp.ts";

Deno.test("config defaults: without the schema they are what the schema gives for no file", () => {
  assert.deepEqual(defaultConfigWithoutSchema(), defaultConfig());
  // Each call is a copy of its own: a session that changes it changes no other's.
  const one = defaultConfigWithoutSchema();
  one.allow_mcp_servers.push("x");
  assert.deepEqual(defaultConfigWithoutSchema().allow_mcp_servers, []);
});

Deno.test("config defaults: a file is there when named, or when anything is at a default place", async () => {
  await using temp = await tempDir("deft-config-defaults-");
  const dir = temp.path;
  // The user's own config file is one of the places: an empty config home of the test's own.
  const configHome = Deno.env.get("XDG_CONFIG_HOME");
  const deftConfig = Deno.env.get("DEFT_CONFIG");
  Deno.env.set("XDG_CONFIG_HOME", `${dir}/config`);
  Deno.env.delete("DEFT_CONFIG");
  try {
    assert.equal(await configFileGiven(`${dir}/missing.yaml`), true, "named: the loader explains");
    const folder = `${dir}/repo`;
    await Deno.mkdir(folder);
    assert.equal(await configFileGiven(undefined, folder), false);
    await Deno.symlink(`${dir}/nowhere`, `${folder}/deft.yaml`);
    assert.equal(await configFileGiven(undefined, folder), true, "a dangling link is the loader's");
    await Deno.remove(`${folder}/deft.yaml`);
    await Deno.mkdir(`${folder}/trae_config.yaml`);
    assert.equal(await configFileGiven(undefined, folder), true, "a folder is the loader's");
    await Deno.remove(`${folder}/trae_config.yaml`);
    await Deno.mkdir(`${dir}/config/deft`, { recursive: true });
    await Deno.writeTextFile(`${dir}/config/deft/config.yaml`, "approval: never\n");
    assert.equal(await configFileGiven(undefined, folder), true, "the user's own file");
  } finally {
    if (configHome === undefined) Deno.env.delete("XDG_CONFIG_HOME");
    else Deno.env.set("XDG_CONFIG_HOME", configHome);
    if (deftConfig !== undefined) Deno.env.set("DEFT_CONFIG", deftConfig);
  }
});
