/** The session protocol's pieces: command framing, marker payloads, message tidying. */
import assert from "node:assert/strict";
import {
  commandBytes,
  newMarkerTag,
  parseMarker,
  tidyMessages,
} from "../../../src/tools/bash/protocol.ts";

Deno.test("protocol: a command follows its line and its byte count", () => {
  const bytes = commandBytes("echo é\n}", 7);
  const text = new TextDecoder().decode(bytes);
  const newline = text.indexOf("\n");
  assert.match(text.slice(0, newline), /^__deft_read 9 7;/);
  assert.equal(text.slice(newline + 1), "echo é\n}");
});

Deno.test("protocol: only plain text is read without switching to the C locale", () => {
  const line = (command: string) => {
    const text = new TextDecoder().decode(commandBytes(command, 1));
    return text.slice(0, text.indexOf("\n"));
  };
  // Printable ASCII, tabs and line breaks: one character per byte in every locale.
  assert.match(line("echo 'a\tb' | wc -c\n~!@#$%^&*()_+{}|:<>?"), /^__deft_readt \d+ 1;/);
  // A multibyte character, an escape (stateful encodings), other control bytes, DEL: counted
  // as bytes in the C locale.
  for (const command of ["echo é", "printf '\x1b$B'", "echo \r", "echo \x7f"]) {
    assert.match(line(command), /^__deft_read \d+ 1;/, JSON.stringify(command));
  }
});

Deno.test("protocol: marker tags are fresh and unguessable", () => {
  const tags = new Set(Array.from({ length: 100 }, newMarkerTag));
  assert.equal(tags.size, 100);
  for (const tag of tags) assert.match(tag, /^__DEFT_END_[0-9a-f]{32}$/);
});

Deno.test("protocol: marker payloads carry the status and a directory with colons", () => {
  assert.deepEqual(parseMarker("3:/a:b/c"), { status: 3, cwd: "/a:b/c" });
  assert.deepEqual(parseMarker("0:"), { status: 0, cwd: "" });
});

Deno.test("protocol: error messages read like bash -c", () => {
  const run = "/tmp/deft-bash-1/run";
  assert.equal(
    tidyMessages(`${run}: eval: line 1: syntax error\n${run}: line 2: x: command not found\n`, run),
    "bash: line 1: syntax error\nbash: line 2: x: command not found\n",
  );
});
