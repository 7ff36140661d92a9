/**
 * The languages the code graph understands: which files belong to which tree-sitter grammar, and
 * which definitions query runs over them. Pure data and string matching; nothing here loads a
 * grammar.
 */
import { C_MACROS, C_QUERY } from "./queries/c.ts";
import { CPP_QUERY } from "./queries/cpp.ts";
import { GO_QUERY } from "./queries/go.ts";
import { JAVA_QUERY } from "./queries/java.ts";
import { JAVASCRIPT_QUERY } from "./queries/javascript.ts";
import { PYTHON_QUERY } from "./queries/python.ts";
import { RUST_QUERY } from "./queries/rust.ts";
import { TYPESCRIPT_QUERY } from "./queries/typescript.ts";
import {
  C_REFS,
  CPP_REFS,
  GO_REFS,
  JAVA_REFS,
  JAVASCRIPT_REFS,
  PYTHON_REFS,
  RUST_REFS,
  TYPESCRIPT_REFS,
} from "./queries/refs.ts";

/** One tree-sitter grammar the graph can parse with. */
export type GrammarId =
  | "python"
  | "java"
  | "c"
  | "cpp"
  | "javascript"
  | "typescript"
  | "tsx"
  | "go"
  | "rust";

/** How a grammar is used: its definitions query and the family whose classes it shares. */
export interface LanguageSpec {
  id: GrammarId;
  /**
   * Languages of one family share classes: a C++ method defined in a `.cpp` file belongs to the
   * class declared in a `.h` file, a TSX component may extend a TS class.
   */
  family: string;
  /** The tree-sitter query whose captures name the definitions and references (see `extract.ts`). */
  query: string;
  /**
   * The source of a regular expression (flags `g`) matching macros the parser should see blanked,
   * such as C's attribute macros (see `queries/c.ts`).
   */
  macros?: string;
}

/** Every supported grammar. */
export const LANGUAGES: Readonly<Record<GrammarId, LanguageSpec>> = {
  python: { id: "python", family: "python", query: PYTHON_QUERY + PYTHON_REFS },
  java: { id: "java", family: "java", query: JAVA_QUERY + JAVA_REFS },
  c: { id: "c", family: "c", query: C_QUERY + C_REFS, macros: C_MACROS },
  cpp: { id: "cpp", family: "c", query: CPP_QUERY + CPP_REFS, macros: C_MACROS },
  javascript: { id: "javascript", family: "js", query: JAVASCRIPT_QUERY + JAVASCRIPT_REFS },
  typescript: { id: "typescript", family: "js", query: TYPESCRIPT_QUERY + TYPESCRIPT_REFS },
  tsx: { id: "tsx", family: "js", query: TYPESCRIPT_QUERY + TYPESCRIPT_REFS },
  go: { id: "go", family: "go", query: GO_QUERY + GO_REFS },
  rust: { id: "rust", family: "rust", query: RUST_QUERY + RUST_REFS },
};

/** `.h` is C or C++ depending on what it holds; see `headerLanguage`. */
const HEADER = "header";

const BY_EXTENSION: ReadonlyMap<string, GrammarId | typeof HEADER> = new Map<
  string,
  GrammarId | typeof HEADER
>([
  [".py", "python"],
  [".pyi", "python"],
  [".pyw", "python"],
  [".java", "java"],
  [".c", "c"],
  [".h", HEADER],
  [".cc", "cpp"],
  [".cpp", "cpp"],
  [".cxx", "cpp"],
  [".c++", "cpp"],
  [".C", "cpp"],
  [".hh", "cpp"],
  [".hpp", "cpp"],
  [".hxx", "cpp"],
  [".h++", "cpp"],
  [".H", "cpp"],
  [".ipp", "cpp"],
  [".tpp", "cpp"],
  [".inl", "cpp"],
  [".js", "javascript"],
  [".jsx", "javascript"],
  [".mjs", "javascript"],
  [".cjs", "javascript"],
  [".ts", "typescript"],
  [".mts", "typescript"],
  [".cts", "typescript"],
  [".tsx", "tsx"],
  [".go", "go"],
  [".rs", "rust"],
]);

function extensionOf(path: string): string {
  const slash = path.lastIndexOf("/");
  const dot = path.lastIndexOf(".");
  return dot > slash + 1 ? path.slice(dot) : "";
}

/** True when the file name has an extension the graph can parse. */
export function isSourcePath(path: string): boolean {
  const ext = extensionOf(path);
  return BY_EXTENSION.has(ext) || BY_EXTENSION.has(ext.toLowerCase());
}

/**
 * The grammar for a file, from its name and (for `.h`) its text. Returns undefined for files the
 * graph does not parse.
 */
export function languageFor(path: string, text: string): GrammarId | undefined {
  const ext = extensionOf(path);
  const found = BY_EXTENSION.get(ext) ?? BY_EXTENSION.get(ext.toLowerCase());
  if (found === HEADER) return headerLanguage(text);
  return found;
}

/** The grammars files with these names may need (`.h` may need C and C++). */
export function grammarsForPaths(paths: Iterable<string>): GrammarId[] {
  const found = new Set<GrammarId>();
  for (const path of paths) {
    const ext = extensionOf(path);
    const id = BY_EXTENSION.get(ext) ?? BY_EXTENSION.get(ext.toLowerCase());
    if (id === HEADER) {
      found.add("c");
      found.add("cpp");
    } else if (id) found.add(id);
  }
  return [...found];
}

// C++-only constructs that a C header never contains outside comments and strings.
const CPP_MARKERS =
  /^\s*(?:class|namespace|template)\b|^\s*(?:public|private|protected)\s*:|\b(?:constexpr|nullptr|noexcept)\b|^\s*using\s+namespace\b|::\s*~?[A-Za-z_]/m;

/** `.h` files hold C++ when they use C++-only syntax; Trae parsed them all as C and lost classes. */
export function headerLanguage(text: string): GrammarId {
  return CPP_MARKERS.test(text) ? "cpp" : "c";
}
