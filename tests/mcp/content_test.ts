import assert from "node:assert/strict";
import { REMOTE_ERROR_CODE, toToolResult } from "../../src/mcp/content.ts";

Deno.test("text content becomes the output", () => {
  const result = toToolResult(
    { content: [{ type: "text", text: "one" }, { type: "text", text: "two" }] },
    "srv",
    "t",
  );
  assert.deepEqual(result, { output: "one\ntwo", error: null, error_code: 0 });
});

Deno.test("isError results are failures carrying the content text", () => {
  const result = toToolResult(
    { content: [{ type: "text", text: "no such row" }], isError: true },
    "db",
    "query",
  );
  assert.deepEqual(result, { output: null, error: "no such row", error_code: REMOTE_ERROR_CODE });
  assert.notEqual(REMOTE_ERROR_CODE, 0);
  const silent = toToolResult({ content: [], isError: true }, "db", "query");
  assert.equal(
    silent.error,
    "Tool 'query' of MCP server 'db' reported an error without a message.",
  );
});

Deno.test("images, audio and resources are described in a line", () => {
  const result = toToolResult(
    {
      content: [
        { type: "image", data: btoa("x".repeat(2048)), mimeType: "image/png" },
        { type: "audio", data: btoa("y".repeat(10)), mimeType: "audio/wav" },
        { type: "resource_link", uri: "file:///r.pdf", name: "r", mimeType: "application/pdf" },
        { type: "resource", resource: { uri: "file:///n.txt", text: "notes" } },
        { type: "resource", resource: { uri: "file:///b", blob: btoa("abc"), mimeType: "x/y" } },
      ],
    },
    "s",
    "t",
  );
  assert.equal(
    result.output,
    [
      "[image: image/png, 2.0 KB]",
      "[audio: audio/wav, 10 bytes]",
      "[resource link: r <file:///r.pdf>, application/pdf]",
      "[resource <file:///n.txt>]\nnotes",
      "[resource <file:///b>, x/y, 3 bytes of binary data]",
    ].join("\n"),
  );
});

Deno.test("structured content alone is shown as JSON", () => {
  const result = toToolResult({ content: [], structuredContent: { a: 1 } }, "s", "t");
  assert.equal(result.output, '{\n  "a": 1\n}');
});
