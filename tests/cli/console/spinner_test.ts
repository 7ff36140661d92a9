import assert from "node:assert/strict";
import { holdScreen, Spinner } from "../../../src/cli/console/spinner.ts";

const tick = () => new Promise((r) => setTimeout(r, 5));

function spinner() {
  const frames: string[] = [];
  const s = new Spinner((bytes) => frames.push(new TextDecoder().decode(bytes)), 1000);
  return { s, frames };
}

Deno.test("a question holds the spinner; it comes back with its label and clock after the answer", async () => {
  const { s, frames } = spinner();
  s.start("step 2 · running bash");
  const release = holdScreen();
  assert.equal(s.active, false, "nothing is drawn while the question is open");
  const drawn = frames.length;
  release();
  assert.equal(s.active, false, "not before the answer's own lines are written");
  await tick();
  assert.equal(s.active, true);
  assert.ok(frames.slice(drawn).some((f) => f.includes("step 2 · running bash")));
  s.stop();
});

Deno.test("two questions in a row: the second keeps the spinner away until it is answered", async () => {
  const { s } = spinner();
  s.start("step 1 · running bash");
  const first = holdScreen();
  first();
  const second = holdScreen();
  await tick();
  assert.equal(
    s.active,
    false,
    "the first release must not bring it back over the second question",
  );
  second();
  await tick();
  assert.equal(s.active, true);
  s.stop();
});

Deno.test("a spinner the console moved on from while held does not come back", async () => {
  const { s } = spinner();
  s.start("step 1 · running bash");
  const release = holdScreen();
  s.stop();
  release();
  await tick();
  assert.equal(s.active, false);
});
