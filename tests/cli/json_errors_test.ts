import assert from "node:assert/strict";
import { requestedJsonFormat } from "../../src/cli/json_errors.ts";

Deno.test("a usage error is JSON for every headless spelling that asked for JSON", () => {
  assert.equal(requestedJsonFormat(["run", "x", "--json"]), "json");
  assert.equal(requestedJsonFormat(["exec", "x", "--output-format=stream-json"]), "stream-json");
  assert.equal(requestedJsonFormat(["-p", "x", "--output-format", "json"]), "json");
  assert.equal(
    requestedJsonFormat(["--print", "x", "--output-format", "stream-json"]),
    "stream-json",
  );
  // Not headless, or no JSON asked for: the error stays on stderr only.
  assert.equal(requestedJsonFormat(["-c", "--output-format", "json"]), undefined);
  assert.equal(requestedJsonFormat(["sessions", "--json", "-p"]), undefined);
  assert.equal(requestedJsonFormat(["run", "x", "--output-format", "text"]), undefined);
});
