/** Shared helpers for the code graph tests. */
import { type ExtractedSymbol, extractSymbols } from "../../src/ckg/extract.ts";
import { languageFor } from "../../src/ckg/languages.ts";
import { captureInProcess } from "../../src/ckg/runtime.ts";
import { type TempDir, tempDir as tempFolder } from "./temp.ts";

/** The per-language fixtures. */
export const LANGS_DIR = new URL("../fixtures/ckg/langs/", import.meta.url).pathname;

/** One line per symbol: `kind[.subkind] name [@Class] [in parent] start-end`. */
export function describeSymbol(s: {
  kind: string;
  subkind: string | null;
  name: string;
  className: string | null;
  parentFunction: string | null;
  startLine: number;
  endLine: number;
}): string {
  const kind = s.subkind && s.subkind !== "class" ? `${s.kind}.${s.subkind}` : s.kind;
  const owner = s.className ? ` @${s.className}` : "";
  const parent = s.parentFunction ? ` in ${s.parentFunction}` : "";
  return `${kind} ${s.name}${owner}${parent} ${s.startLine}-${s.endLine}`;
}

/** Parses `text` as the file `name` would be and extracts its symbols. */
export async function symbolsOf(name: string, text: string): Promise<ExtractedSymbol[]> {
  const lang = languageFor(name, text);
  if (!lang) throw new Error(`no language for ${name}`);
  const outcome = await captureInProcess(lang, text, 10_000);
  if (!outcome.ok) throw new Error(outcome.error);
  return extractSymbols(lang, text, outcome.result);
}

/** A fresh temporary folder (see helpers/temp.ts), named for the graph's tests. */
export function tempDir(prefix = "deft-ckg-test-"): Promise<TempDir> {
  return tempFolder(prefix);
}

/** Writes files (path → content) under `root`, creating folders. */
export async function writeTree(
  root: string,
  files: Record<string, string | Uint8Array>,
): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const abs = `${root}/${path}`;
    await Deno.mkdir(abs.slice(0, abs.lastIndexOf("/")), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(abs, content);
    else await Deno.writeFile(abs, content);
  }
}
