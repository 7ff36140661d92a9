/**
 * The `network:` section: strict checks with the entry's position, the file each entry came
 * from, and a repository's section narrowing the user's list, never widening it.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/load.ts";
import { covers, fromFile, narrowedBy } from "../../src/config/network.ts";
import { parseEntry } from "../../src/policy/network/rules.ts";
import { loadYaml } from "../../src/config/yaml.ts";

// The config parsers are called here on text, with no file read first (src/config/yaml.ts).
await loadYaml();

Deno.test("network config: entries are read and marked with their file", () => {
  const { config } = parseConfig(
    [
      "network:",
      "  allow:",
      '    - "pypi.org"',
      '    - { host: "*.githubusercontent.com", reason: "release downloads" }',
      "  deny: [evil.pypi.org]",
    ].join("\n"),
    "/home/u/.config/deft/config.yaml",
  );
  assert.deepEqual(
    config.network?.allow.map((e) => [e.text, e.reason, e.source]),
    [
      ["pypi.org", undefined, "/home/u/.config/deft/config.yaml"],
      ["*.githubusercontent.com", "release downloads", "/home/u/.config/deft/config.yaml"],
    ],
  );
  assert.equal(config.network?.deny[0].host, "evil.pypi.org");
  assert.equal(parseConfig("{}").config.network, undefined, "no section: no network");
});

Deno.test("network config: a bad entry is an error naming its key, line and fix", () => {
  const bad = [
    [
      "network:\n  allow:\n    - pypi.org\n    - ::1\n",
      /'network\.allow\.1' \(line 4, column 7\): "::1": an IPv6 address must be written in brackets/,
    ],
    ["network:\n  allow: [https://x.org/]\n", /looks like a URL; write only the host/],
    ["network:\n  allow: [{ host: x.org, why: y }]\n", /network\.allow\.0.*why/],
    ["network:\n  allowed: [x.org]\n", /allowed/],
    ["network: { allow: [x.org] }\nallow_network: true\n", /'allow_network'.*remove one of them/],
  ] as const;
  for (const [text, expected] of bad) {
    assert.throws(() => parseConfig(text, "/c.yaml"), expected, text);
  }
});

Deno.test("network config: a repository's list narrows the user's and never widens it", () => {
  const user = fromFile({
    allow: ["*.example.com", "pypi.org", "10.0.0.5:8080"].map((e) => parseEntry(e)),
    deny: [],
  }, "/user.yaml");
  const repo = fromFile({
    allow: ["docs.example.com", "evil.test", "pypi.org:22", "*.example.com", "10.0.0.5:8080"].map(
      (e) => parseEntry(e),
    ),
    deny: ["pypi.org"].map((e) => parseEntry(e)),
  }, "/repo/deft.yaml");
  const { list, dropped } = narrowedBy(user, repo);
  assert.deepEqual(list.allow.map((e) => [e.text, e.source]), [
    ["docs.example.com", "/repo/deft.yaml"],
    ["*.example.com", "/repo/deft.yaml"],
    ["10.0.0.5:8080", "/repo/deft.yaml"],
  ]);
  assert.deepEqual(dropped.map((e) => e.text), ["evil.test", "pypi.org:22"]);
  assert.deepEqual(list.deny.map((e) => [e.text, e.source]), [["pypi.org", "/repo/deft.yaml"]]);
  // Only denials: the user's allow list stays, narrowed by them.
  const onlyDeny = narrowedBy(user, { allow: [], deny: repo.deny });
  assert.equal(onlyDeny.list.allow.length, 3);
  // No user list at all: a repository cannot open the network.
  assert.deepEqual(narrowedBy(undefined, repo).list.allow, []);
  assert.equal(covers(parseEntry("*.example.com"), parseEntry("example.com")), false);
  assert.equal(covers(parseEntry("x.org:443"), parseEntry("x.org")), false, "80 is not covered");
});
