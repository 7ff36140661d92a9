/**
 * The shared output masker (finding 7 of issue 28; issue 29 item 7): object keys are masked like
 * values, and a key streamed in pieces is never shown in part.
 */
import assert from "node:assert/strict";
import { addOutputSecrets, outputMasker, StreamMasker } from "../../src/policy/secrets.ts";

const KEY = "cfgkey-unit-Zq81mX0pLw93";

Deno.test("a secret used as an object key is masked, as are nested values", () => {
  addOutputSecrets([KEY]);
  const masked = outputMasker().maskDeep({
    value: { [KEY]: 1, [`x${KEY}`]: { deep: [KEY] } },
    name: "ok",
  });
  const text = JSON.stringify(masked);
  assert.ok(!text.includes(KEY), text);
  assert.deepEqual(Object.keys(masked.value).length, 2, "two masked keys stay apart");
  assert.equal(masked.name, "ok");
});

Deno.test("a key split across any two stream pieces is never shown, and the text still streams", () => {
  addOutputSecrets([KEY]);
  const text = `first words, then the key ${KEY} and ${[...KEY].reverse().join("")} end ghp_${
    "A".repeat(30)
  } done\n`;
  for (let a = 1; a < text.length - 1; a += 3) {
    for (const size of [1, 2, 7]) {
      const stream = new StreamMasker();
      const shown: string[] = [];
      for (let i = 0; i < text.length; i += i < a ? a : size) {
        shown.push(stream.push(text.slice(i, i < a ? a : i + size)));
      }
      shown.push(stream.flush());
      const all = shown.join("");
      assert.ok(!all.includes(KEY) && !all.includes("ghp_AAAA"), `split at ${a}/${size}: ${all}`);
      assert.ok(!all.includes([...KEY].reverse().join("")), `reversed, split at ${a}/${size}`);
    }
  }
  const stream = new StreamMasker();
  assert.equal(stream.push("plain words "), "plain words ", "ordinary text is not held back");
});
