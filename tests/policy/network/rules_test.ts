/**
 * The network list's rules: what each entry form means, the errors for entries that cannot be
 * read, deny winning, ports, and the addresses that need their own entry.
 */
import assert from "node:assert/strict";
import { decideByList, type NetworkList, parseEntry } from "../../../src/policy/network/rules.ts";
import { specialAddress } from "../../../src/policy/network/addresses.ts";

const list = (allow: string[], deny: string[] = []): NetworkList => ({
  allow: allow.map((e) => parseEntry(e)),
  deny: deny.map((e) => parseEntry(e)),
});

Deno.test("network rules: each entry form reads as written", () => {
  assert.deepEqual(
    ["pypi.org", "*.Example.com:8443", "203.0.113.7:22", "[2001:DB8::1]:443", "[::1]"].map((t) => {
      const e = parseEntry(t);
      return [e.kind, e.host, e.port];
    }),
    [
      ["name", "pypi.org", undefined],
      ["suffix", "example.com", 8443],
      ["address", "203.0.113.7", 22],
      ["address", "2001:0db8:0000:0000:0000:0000:0000:0001", 443],
      ["address", "0000:0000:0000:0000:0000:0000:0000:0001", undefined],
    ],
  );
  assert.equal(parseEntry({ host: "pypi.org", reason: "pip" }).reason, "pip");
});

Deno.test("network rules: entries that cannot be read say what to write", () => {
  const cases: [string, RegExp][] = [
    ["https://pypi.org/simple", /looks like a URL/],
    ["::1", /must be written in brackets/],
    ["2001:db8::1:443", /must be written in brackets/],
    ["pypi.org:0", /port must be a number from 1 to 65535/],
    ["pypi.org:http", /port must be a number/],
    ["foo.*.com", /wildcard may only start the name/],
    ["*.com", /whole top-level domain/],
    ["exa mple.com", /not a host name/],
    [" pypi.org", /spaces/],
    ["", /empty/],
    ["[1.2.3.4]:80", /only IPv6 addresses go in brackets/],
    ["999.1.1.1", /not a valid IPv4 address/],
  ];
  for (const [text, expected] of cases) {
    assert.throws(() => parseEntry(text), expected, text);
  }
});

Deno.test("network rules: deny wins, wildcards cover names below, ports are checked", () => {
  const l = list(["*.example.com", "pypi.org", "git.test:8443", "203.0.113.7:80"], [
    "evil.example.com",
  ]);
  const verdict = (host: string, port: number) => {
    const d = decideByList(l, host, port);
    return d.allowed ? "allowed" : d.reason;
  };
  assert.equal(verdict("a.example.com", 443), "allowed");
  assert.equal(verdict("A.B.Example.COM.", 443), "allowed");
  assert.equal(verdict("example.com", 443), "not in allow list");
  assert.equal(verdict("evil.example.com", 443), 'denied by "evil.example.com"');
  assert.equal(verdict("pypi.org", 80), "allowed");
  assert.equal(verdict("pypi.org", 22), 'port 22 not allowed ("pypi.org" allows 80 and 443)');
  assert.equal(verdict("git.test", 8443), "allowed");
  assert.equal(verdict("git.test", 443), 'port 443 not allowed ("git.test:8443" allows 8443)');
  assert.equal(verdict("203.0.113.7", 80), "allowed");
  // A name is never an address entry's, and an address never a name entry's.
  assert.equal(verdict("pypi.org.evil.test", 443), "not in allow list");
  assert.equal(verdict("203.0.113.8", 80), "not in allow list");
  assert.equal(verdict("[::ffff:203.0.113.7]", 80), "not in allow list");
});

Deno.test("network rules: special addresses need an entry of their own", () => {
  const special = [
    "127.0.0.1",
    "127.9.9.9",
    "0.0.0.0",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "169.254.1.1",
    "100.64.0.1",
    "224.0.0.1",
    "::1",
    "::",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "64:ff9b::a9fe:a9fe",
    "2002:7f00:1::",
    "fe80::1",
    "fd12::1",
    "fd00:ec2::254",
    "ff02::1",
  ];
  for (const address of special) assert.ok(specialAddress(address), address);
  for (const address of ["203.0.113.7", "8.8.8.8", "2606:4700::1111"]) {
    assert.equal(specialAddress(address), undefined, address);
  }
  assert.equal(specialAddress("169.254.169.254"), "a cloud metadata address");
});
