/**
 * What a module loads when it loads, read from the source (no process started): its static
 * imports, followed through relative paths. Type-only imports are left out (they are erased);
 * dynamic `import()` too (it loads later, when the code runs).
 */

/** The specifiers `url`'s module imports at load time, in order. */
export function staticImports(url: URL): string[] {
  const text = Deno.readTextFileSync(url);
  const found: string[] = [];
  const pattern = /^(import|export)(\s+type\b)?[^;]*?\sfrom\s+"([^"]+)"|^import\s+"([^"]+)"/gms;
  for (const m of text.matchAll(pattern)) {
    if (m[2]) continue;
    found.push(m[3] ?? m[4]);
  }
  return found;
}

/** Every module `roots` load at load time: the files (as URLs) and the outside specifiers. */
export function loadedModules(roots: URL[]): { files: string[]; outside: string[] } {
  const files = new Set<string>();
  const outside: string[] = [];
  const visit = (url: URL) => {
    if (files.has(url.href)) return;
    files.add(url.href);
    for (const specifier of staticImports(url)) {
      if (specifier.startsWith(".")) visit(new URL(specifier, url));
      else outside.push(`${url.pathname.replace(/.*\/src\//, "src/")} imports ${specifier}`);
    }
  };
  for (const root of roots) visit(root);
  return { files: [...files], outside };
}
