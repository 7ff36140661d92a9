/**
 * Every token shape a trajectory must never show in clear: each is masked on its own, inside
 * ordinary text, whatever surrounds it. The keys are made up but shaped like real ones.
 *
 * Promises of masking, each with the test that guards it (here unless a file is named):
 * - every token shape is masked wherever it appears, whole: "secrets: a … key is masked wherever
 *   it appears in text", "… Google key's whole length …", "… fine-grained GitHub token …"
 * - Deft's secrets are masked forwards and reversed: tests/e2e/policy/secrets_test.ts "secrets:
 *   masked forwards, reversed and by shape"; in trajectories: "trajectory: a printed token and the
 *   reversed provider key are masked"; `deft config` shows at most the last 4 characters: "deft
 *   config: …"
 * - the shell's environment holds no secret: tests/e2e/policy/secrets_test.ts "shell env: `env` in
 *   the bash tool shows no secret …"
 * - a secret used as an object key is masked; a key streamed in pieces is never shown in part:
 *   output_masking_test.ts (both tests)
 * - an `@mention`'s text and `!command` output are masked on the terminal and in the model's
 *   request: tests/e2e/cli/interactive_masking_test.ts
 * - what a hook says for the user is masked: tests/e2e/hooks/runner_test.ts "what a hook says …"
 * - ACP's permission request (title, command, diff) is masked:
 *   tests/e2e/acp/permission_promises_test.ts "acp promise: the permission request's title,
 *   command and diff are masked"; streamed ACP text is masked: tests/acp/console_test.ts "acp
 *   console: secrets are masked in streamed text"
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
