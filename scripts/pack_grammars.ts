/**
 * `deno task grammars`: packs the tree-sitter runtime and grammar `.wasm` files from node_modules
 * into src/ckg/wasm/*.wasm.gz. Deft embeds the packed files (a tenth of the size), which keeps the
 * bundle small and fast to start; tests/ckg/packed_grammars_test.ts fails when they go stale.
 */
import { GRAMMAR_SOURCES } from "../src/ckg/grammar_sources.ts";

const root = new URL("..", import.meta.url).pathname;

for (const [id, source] of Object.entries(GRAMMAR_SOURCES)) {
  const bytes = await Deno.readFile(`${root}node_modules/${source}`);
  const packed = await new Response(
    new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip")),
  ).bytes();
  await Deno.writeFile(`${root}src/ckg/wasm/${id}.wasm.gz`, packed);
  console.log(`${id}: ${bytes.length} -> ${packed.length} bytes`);
}
