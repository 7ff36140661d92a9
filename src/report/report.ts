/**
 * `deft report PATH…` as a function: reads the runs and batches the paths name and returns one
 * self-contained HTML page (no network, nothing loaded from anywhere, every string inert).
 */
import { batchSection, compareSection, runAnchor } from "./batch.ts";
import { loadChildren } from "./children.ts";
import { text } from "./escape.ts";
import { loadInput, type ReportInput, ReportInputError } from "./model.ts";
import { page } from "./page.ts";
import { byteSize, runSection } from "./run.ts";
import { VERSION } from "../version.ts";

export { byteSize, ReportInputError };

/** Builds the report page for `paths` (trajectory files, session ids, batch output folders). */
export async function buildReport(paths: readonly string[]): Promise<string> {
  if (paths.length === 0) {
    throw new ReportInputError("give a trajectory file, a session id or a batch folder");
  }
  const inputs: ReportInput[] = [];
  for (const path of paths) {
    const input = await loadInput(path);
    if (input.kind === "run") await loadChildren(input.run);
    inputs.push(input);
  }
  return await renderReport(inputs);
}

/** The page for inputs already read. */
export async function renderReport(inputs: readonly ReportInput[]): Promise<string> {
  const batches = inputs.flatMap((i) => i.kind === "batch" ? [i.batch] : []);
  let body: string;
  let title: string;
  if (inputs.length === 2 && batches.length === 2) {
    title = "Deft: two batches compared";
    body = compareSection(batches[0], batches[1]);
  } else {
    title = inputs.length === 1
      ? inputs[0].kind === "run"
        ? `Deft run: ${inputs[0].run.name}`
        : `Deft batch: ${inputs[0].batch.dir}`
      : `Deft report: ${inputs.length} inputs`;
    body = inputs.map((input, i) =>
      input.kind === "run"
        ? `<h2 id="${runAnchor(`r${i}-`, 0)}">Run ${text(input.run.name)}</h2>${
          runSection(input.run)
        }`
        : `<h2>Batch</h2>${batchSection(input.batch, `p${i}-`)}`
    ).join("\n");
  }
  const footer = `<p class="note">Made by deft ${text(VERSION)} report on ${
    text(new Date().toISOString())
  }. Everything above is text from the runs, shown as text.</p>`;
  return await page(title, `<h1>${text(title)}</h1>${body}${footer}`);
}
