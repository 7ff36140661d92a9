/**
 * Every token shape a trajectory must never show in clear: each is masked on its own, inside
 * ordinary text, whatever surrounds it. The keys are made up but shaped like real ones.
 */
import assert from "node:assert/strict";
import { MASK, SecretMasker } from "../../src/policy/secrets.ts";

const SHAPES: Record<string, string> = {
  "OpenAI / Anthropic": "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0",
  "GitHub classic": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2",
  "GitHub fine-grained": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
  "AWS": "AKIA" + "ABCDEFGHIJKLMNOP",
  "Slack": "xoxb-" + "1234567890-abcdefghij",
  "Google API": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
  "JWT": "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" +
    ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
};

for (const [kind, token] of Object.entries(SHAPES)) {
  Deno.test(`secrets: a ${kind} key is masked wherever it appears in text`, () => {
    const masker = new SecretMasker([]);
    for (const text of [token, `key=${token}`, `"${token}"`, `curl -H 'x: ${token}' url\n`]) {
      const masked = masker.mask(text);
      assert.ok(!masked.includes(token), `${kind} shown in clear: ${masked}`);
      assert.ok(masked.includes(MASK), masked);
    }
  });
}

Deno.test("secrets: the Google key's whole length is masked, not a prefix", () => {
  const masked = new SecretMasker([]).mask(`k ${SHAPES["Google API"]} end`);
  assert.equal(masked, `k ${MASK} end`);
});

Deno.test("secrets: the fine-grained GitHub token is masked up to its last character", () => {
  const masked = new SecretMasker([]).mask(`t=${SHAPES["GitHub fine-grained"]};`);
  assert.equal(masked, `t=${MASK};`);
});
