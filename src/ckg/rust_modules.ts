/**
 * Which Rust module a file is, and which modules its `use` declarations bring names from: enough
 * to tell which of several types called `Circle` an `impl Shape for Circle` means.
 *
 * A file's module follows from its place under the crate root (the nearest folder above it that
 * holds `lib.rs` or `main.rs`): `src/a/b.rs` and `src/a/b/mod.rs` are `crate::a::b`, `src/lib.rs`
 * is `crate`. `use` paths are taken as Rust 2018 reads them: from `crate`, `super` (the parent
 * module, repeatable), `self`, or a first segment that names a module of the current one or of the
 * crate root. Modules declared inline (`mod x { … }`) and `#[path]` attributes are not followed:
 * a name brought from one resolves to no file, and the caller falls back to its other rules.
 */

/** A module path from the crate root: `["crate", "a", "b"]`. */
export type ModulePath = readonly string[];

/**
 * The module of the Rust file at `path` (workspace-relative, `/`-separated). `isFile` says whether
 * a workspace-relative path is a file; it finds the crate root. Undefined when no folder above
 * the file holds `lib.rs` or `main.rs`.
 */
export function rustModuleOf(
  path: string,
  isFile: (path: string) => boolean,
): ModulePath | undefined {
  const parts = path.split("/");
  const file = parts.pop()!;
  for (let depth = parts.length; depth >= 0; depth--) {
    const dir = parts.slice(0, depth).join("/");
    const prefix = dir === "" ? "" : `${dir}/`;
    if (!isFile(`${prefix}lib.rs`) && !isFile(`${prefix}main.rs`)) continue;
    const below = parts.slice(depth);
    const stem = file.replace(/\.rs$/, "");
    // The crate root file itself, or another binary's root beside it (src/bin aside), is `crate`.
    if (below.length === 0 && (stem === "lib" || stem === "main")) return ["crate"];
    if (stem !== "mod") below.push(stem);
    return ["crate", ...below];
  }
  return undefined;
}

/** One name a `use` brings in: from which module, under which name (`*` for a glob). */
export interface UsedName {
  /** The modules the path may mean (a bare first segment reads two ways). */
  modules: ModulePath[];
  /** The item's own name, or `*`. */
  name: string;
  /** The name it is known by here (`as` renames it). */
  local: string;
}

/**
 * The names the `use` declarations in `text` (a file of module `here`) bring in. Comments are
 * left out first, so a `use` in one is not read.
 */
export function usedNames(text: string, here: ModulePath): UsedName[] {
  // An unclosed `/*` runs to the end, as the compiler reads it.
  const code = text.replace(/\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/g, " ");
  const names: UsedName[] = [];
  // At the start of an item: after another one, a block's brace or an attribute. A path holds
  // only name characters, `::`, `,`, `*` and spaces, and braces nest one level deep (which covers
  // `a::{b::{C, D}}`): each part stops at the first character it cannot take, and no part can run
  // past the character a later declaration starts after, so a hostile file costs time in
  // proportion to its length.
  const p = "[\\w\\s:,*#\\u0080-\\uffff]";
  const declaration = new RegExp(
    `(?<=^|[;{}\\]])\\s*(?:pub(?:\\s*\\([\\w\\s:]*\\))?\\s+)?use\\s+` +
      `([\\w:*#\\u0080-\\uffff]${p}*(?:\\{(?:${p}|\\{${p}*\\})*\\}${p}*)?);`,
    "g",
  );
  for (const m of code.matchAll(declaration)) {
    // Spaces only where they separate words (`B as C`).
    const tree = m[1].replace(/\s*(::|[{},])\s*/g, "$1").replace(/\s+/g, " ").trim();
    for (const path of expandTree(tree)) {
      const used = resolve(path, here);
      if (used) names.push(used);
    }
  }
  return names;
}

/** `a::{b::C,d::*}` → `a::b::C`, `a::d::*` (nested braces too). */
function expandTree(tree: string): string[] {
  const open = tree.indexOf("{");
  if (open < 0) return tree === "" ? [] : [tree];
  const prefix = tree.slice(0, open);
  let depth = 0;
  let start = open + 1;
  const items: string[] = [];
  for (let i = open; i < tree.length; i++) {
    const c = tree[i];
    if (c === "{") depth++;
    else if (c === "}" && --depth === 0) {
      items.push(tree.slice(start, i));
      break;
    } else if (c === "," && depth === 1) {
      items.push(tree.slice(start, i));
      start = i + 1;
    }
  }
  return items.flatMap((item) => expandTree(item)).map((item) =>
    // `a::{self, B}`: `self` is the module `a` itself.
    item === "self" ? prefix.replace(/::$/, "") : prefix + item
  );
}

function resolve(path: string, here: ModulePath): UsedName | undefined {
  const renamed = /^(.*?) as ([A-Za-z_]\w*)$/.exec(path);
  const plain = renamed ? renamed[1] : path;
  const local = renamed?.[2];
  const segments = plain.replace(/^::/, "").split("::").filter((s) => s !== "");
  if (segments.length < 2) return undefined;
  const name = segments.pop()!;
  if (!/^(?:[A-Za-z_]\w*|\*)$/.test(name)) return undefined;
  let modules: ModulePath[];
  const [first, ...rest] = segments;
  if (first === "crate") modules = [["crate", ...rest]];
  else if (first === "self") modules = [[...here, ...rest]];
  else if (first === "super") {
    let base = [...here];
    let i = 0;
    for (; i < segments.length && segments[i] === "super"; i++) {
      if (base.length <= 1) return undefined;
      base = base.slice(0, -1);
    }
    modules = [[...base, ...segments.slice(i)]];
  } else {
    modules = [[...here, ...segments], ["crate", ...segments]];
  }
  return { modules, name, local: local ?? name };
}

/** Whether `a` and `b` are the same module. */
export function sameModule(a: ModulePath, b: ModulePath): boolean {
  return a.length === b.length && a.every((segment, i) => segment === b[i]);
}
