/**
 * Answer first, index later: which files could define (or mention) a name, judged from their
 * bytes alone, so a search on a folder whose index is missing or stale parses only those.
 *
 * Every name the graph stores is a slice of its file's decoded text (a name node, a C declarator's
 * last word, a string key without its quotes, a base type without its generic arguments), and a
 * reference is an identifier node. So a file that does not contain the name's UTF-8 bytes, with no
 * identifier character on either side, cannot hold a symbol or reference of that name: the filter
 * narrows, never misses. What it cannot see the graph never sees either: names built by the C
 * preprocessor (`##` pasting, macros that expand to a definition), and identifiers spelled with
 * escapes (`\u0061bc` in Java or JavaScript) are stored as written, not as what they mean.
 */

/** Bytes that can continue an identifier: letters, digits, `_`, `$`, and any non-ASCII byte. */
function isWordByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) ||
    b === 0x5f || b === 0x24 || b >= 0x80;
}

/** A compiled byte search for one name. */
export interface Needle {
  /** The name searched for. */
  readonly text: string;
  /**
   * True when `bytes` (of the file `path`, when known) may hold the name: as a whole word (as far
   * as its ends are word bytes), and for a definition search in Python, in a defining position.
   */
  test(bytes: Uint8Array, path?: string): boolean;
  /**
   * For a needle narrower than the name's bytes (a Python definition search): whether `bytes`
   * hold the name at all, so a file turned away can still be counted as holding it.
   */
  holds?(bytes: Uint8Array): boolean;
}

const encoder = new TextEncoder();

/**
 * A literal byte search for `name` at word boundaries: a boundary is only required on a side where
 * the name itself ends in an identifier character (`operator+` may touch anything on its right).
 */
export function needleFor(name: string): Needle {
  const pattern = encoder.encode(name);
  const first = pattern[0];
  const length = pattern.length;
  const checkLeft = length > 0 && isWordByte(first);
  const checkRight = length > 0 && isWordByte(pattern[length - 1]);
  /** Whether the match at `at` stands alone (no identifier byte either side, where it matters). */
  const whole = (bytes: Uint8Array, at: number) =>
    !(checkLeft && at > 0 && isWordByte(bytes[at - 1])) &&
    !(checkRight && at + length < bytes.length && isWordByte(bytes[at + length]));
  if (length >= HORSPOOL_MIN) return { text: name, test: horspool(pattern, whole) };
  return {
    text: name,
    test(bytes: Uint8Array): boolean {
      if (length === 0) return false;
      const last = bytes.length - length;
      for (
        let at = bytes.indexOf(first);
        at >= 0 && at <= last;
        at = bytes.indexOf(first, at + 1)
      ) {
        let i = 1;
        while (i < length && bytes[at + i] === pattern[i]) i++;
        if (i === length && whole(bytes, at)) return true;
      }
      return false;
    },
  };
}

/**
 * From this many bytes on, Horspool's search: it compares the window's last byte and skips by up
 * to the name's length, so a miss (the common case) looks at a fraction of the bytes. Shorter
 * names skip too little to beat `indexOf` of their first byte, a native scan.
 */
const HORSPOOL_MIN = 4;

/** Boyer-Moore-Horspool over `pattern`: true at the first match `whole` accepts. */
function horspool(
  pattern: Uint8Array,
  whole: (bytes: Uint8Array, at: number) => boolean,
): (bytes: Uint8Array) => boolean {
  const length = pattern.length;
  const lastIndex = length - 1;
  const lastByte = pattern[lastIndex];
  // How far the window may move when its last byte is b: to the next b in the pattern.
  const shift = new Int32Array(256).fill(length);
  for (let i = 0; i < lastIndex; i++) shift[pattern[i]] = lastIndex - i;
  return (bytes) => {
    const end = bytes.length - length;
    let at = 0;
    while (at <= end) {
      const b = bytes[at + lastIndex];
      if (b === lastByte) {
        let i = lastIndex - 1;
        while (i >= 0 && bytes[at + i] === pattern[i]) i--;
        if (i < 0 && whole(bytes, at)) return true;
      }
      at += shift[b];
    }
    return false;
  };
}

/** Any of several needles. */
export function anyNeedle(needles: readonly Needle[]): Needle {
  if (needles.length === 1) return needles[0];
  return {
    text: needles.map((n) => n.text).join(" | "),
    test: (bytes, path) => needles.some((n) => n.test(bytes, path)),
    holds: (bytes) => needles.some((n) => n.holds ? n.holds(bytes) : n.test(bytes)),
  };
}

const PYTHON_FILE = /\.pyw?$|\.pyi$/;
/** C sources and headers (a `.h` may hold C++: the C rule below lets C++'s forms through too). */
const C_FILE = /\.[ch]$/;
const latin1 = new TextDecoder("latin1");

/**
 * A needle for a definition search: as `searchNeedle`, and in a Python file the name must also
 * stand where Python defines it. The graph's Python definitions are \`def X\`, \`class X\`, and
 * assignments to a bare name (\`X = …\`, \`X: T = …\`, \`X: T\`, \`X = lambda …\`), so the name is
 * preceded by \`def\`/\`class\` or followed by \`=\` or \`:\` (line continuations allowed in between).
 * Other matches (\`X == y\`, \`{X: 1}\`) only let more files through. Files that merely use the
 * name wait for the background index.
 */
export function definitionNeedle(identifier: string, command?: string): Needle {
  const word = searchNeedle(identifier);
  const name = word.text;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return word;
  const cFunction = command === "search_function" ? cFunctionTest(name) : undefined;
  const defining = new RegExp(
    `(?:\\bdef|\\bclass)(?:\\s|\\\\)+${name}(?![\\w\\x80-\\xff])|` +
      `(?<![\\w\\x80-\\xff])${name}(?:[ \\t\\f]|\\\\\\r?\\n)*[:=]`,
  );
  // A file turned away is asked at once whether it holds the name at all (`holds`): the answer
  // of the word scan `test` just made, kept for those same bytes, saves scanning them twice (on
  // a miss, every file of the tree).
  let scanned: Uint8Array | undefined;
  let held = false;
  return {
    text: name,
    test(bytes: Uint8Array, path?: string): boolean {
      held = word.test(bytes);
      scanned = bytes;
      if (!held) return false;
      if (cFunction && path !== undefined && C_FILE.test(path)) return cFunction(bytes);
      if (path === undefined || !PYTHON_FILE.test(path)) return true;
      // Latin-1 keeps one character per byte: the pattern sees the bytes as they are.
      return defining.test(latin1.decode(bytes));
    },
    holds(bytes: Uint8Array): boolean {
      const known = bytes === scanned;
      scanned = undefined;
      return known ? held : word.test(bytes);
    },
  };
}

/**
 * The name a file must contain to hold a match for `identifier`: the member of a qualified
 * `Cls.method` (or `Cls::method`, `Cls#method`) — a superset of files holding either form.
 */
export function searchNeedle(identifier: string): Needle {
  const m = /^(?:.*(?:\.|::))?([^.:#\s]+)(?:\.|::|#)([^.:#\s]+)$/.exec(identifier);
  const name = m ? m[2] : identifier;
  // `operator +` is stored as `operator+`: the word is what a file must hold.
  return needleFor(/^operator\W/.test(name) ? "operator" : name);
}

/**
 * For a function search in a C file: whether `name` stands somewhere a function definition's
 * declarator can put it. A definition is its declarator, then its body: after the name come any
 * `)` of a parenthesized declarator (or of a macro, `BPF_CALL_0(name) {`), the parameter list,
 * more `)` and lists (a function returning a function pointer) or `[…]`, and then no token that
 * ends or continues an expression: `{`, or a
 * word (an attribute, a K&R parameter declaration, C++'s `const`, `noexcept`), `#` (a
 * preprocessor line before the body), `:` (a C++ constructor's initializers), `->` or `&` (C++).
 * Calls (`schedule();`, `if (f(x)) …`, `x = f(y) + 1`) are turned away, so a first answer parses
 * the files that may define the name, not every file that calls it. Comments, strings and
 * character literals are skipped; a scan that runs past `SCAN_LIMIT` bytes lets the file through.
 * What this cannot foresee: a "function" tree-sitter's error recovery glues together from a run of
 * statements (1 of 14,832 functions in Linux's kernel/: `per_cpu(v, cpu).kthread = NULL;` stored
 * as a definition of `per_cpu`); a first answer leaves such a file for the full index.
 */
function cFunctionTest(name: string): (bytes: Uint8Array) => boolean {
  const word = new RegExp(`(?<![\\w$\\x80-\\xff])${name}(?![\\w$\\x80-\\xff])`, "g");
  return (bytes) => {
    const text = latin1.decode(bytes);
    const ends = commentEnds(text);
    word.lastIndex = 0;
    for (let m = word.exec(text); m; m = word.exec(text)) {
      if (cDefinable(text, m.index + name.length, ends)) return true;
    }
    return false;
  };
}

const SCAN_LIMIT = 8192;

/** Where the comments of one file's text can end: `*\/` for a block comment, a newline for a line one. */
interface CommentEnds {
  block: Occurrences;
  line: Occurrences;
}

function commentEnds(text: string): CommentEnds {
  return { block: new Occurrences(text, "*/"), line: new Occurrences(text, "\n") };
}

/**
 * The places a string occurs in a text, found in one pass on first use, then looked up. Every
 * match of the name may meet a comment, and searching the text from there each time would cost
 * the rest of the file per match: a hostile file of many `f(x) /*` sends each match to the one
 * `*\/` at its end, quadratic in the file's size.
 */
class Occurrences {
  #starts?: Int32Array;

  constructor(private readonly text: string, private readonly needle: string) {}

  /** Where the first occurrence at or after `from` starts, if it ends by `limit`; else -1. */
  within(from: number, limit: number): number {
    const starts = this.#starts ??= this.#find();
    let low = 0;
    let high = starts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (starts[middle] < from) low = middle + 1;
      else high = middle;
    }
    const at = low < starts.length ? starts[low] : -1;
    return at >= 0 && at + this.needle.length <= limit ? at : -1;
  }

  #find(): Int32Array {
    const found: number[] = [];
    for (let at = this.text.indexOf(this.needle); at >= 0;) {
      found.push(at);
      at = this.text.indexOf(this.needle, at + this.needle.length);
    }
    return Int32Array.from(found);
  }
}

/** Whether the declarator name ending at `at` in `text` may be followed by a function body. */
function cDefinable(text: string, at: number, ends: CommentEnds): boolean {
  const limit = Math.min(text.length, at + SCAN_LIMIT);
  let i = skipSpace(text, at, limit, ends);
  while (text[i] === ")") i = skipSpace(text, i + 1, limit, ends);
  if (i >= limit) return true;
  // A word right after the name (an old `foo __P((int))` macro): let it through.
  if (isWordChar(text.charCodeAt(i))) return true;
  while (text[i] === "(" || text[i] === "[") {
    i = skipGroup(text, i, limit, ends);
    if (i < 0) return true;
    i = skipSpace(text, i, limit, ends);
    if (i >= limit) return true;
    if (text[i] !== ")") continue;
    // Past the parameters, a `)` closes a declarator only if more parameters follow
    // (`(*f(int))(char)`); otherwise it closes a call's surroundings (`if (f(x)) {`).
    while (text[i] === ")") i = skipSpace(text, i + 1, limit, ends);
    if (i >= limit) return true;
    if (text[i] !== "(" && text[i] !== "[") return false;
  }
  const c = text[i];
  return c === "{" || c === "#" || c === ":" || c === "&" || c === "\\" ||
    (c === "-" && text[i + 1] === ">") || isWordChar(text.charCodeAt(i));
}

function isWordChar(code: number): boolean {
  return isWordByte(code);
}

/** The index after whitespace, comments and line continuations from `i`. */
function skipSpace(text: string, i: number, limit: number, ends: CommentEnds): number {
  while (i < limit) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v") i++;
    else if (c === "\\" && (text[i + 1] === "\n" || text[i + 1] === "\r")) i += 2;
    else if (c === "/" && text[i + 1] === "*") {
      const close = ends.block.within(i + 2, limit);
      i = close < 0 ? limit : close + 2;
    } else if (c === "/" && text[i + 1] === "/") {
      const eol = ends.line.within(i + 2, limit);
      i = eol < 0 ? limit : eol + 1;
    } else break;
  }
  return i;
}

/**
 * From an opening `(` or `[` at `i`, the index after its matching close, skipping comments,
 * strings and character literals; -1 when the scan reaches `limit` first.
 */
function skipGroup(text: string, i: number, limit: number, ends: CommentEnds): number {
  let depth = 0;
  while (i < limit) {
    const c = text[i];
    if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") {
      if (--depth === 0) return i + 1;
    } else if (c === "/" && (text[i + 1] === "*" || text[i + 1] === "/")) {
      i = skipSpace(text, i, limit, ends);
      continue;
    } else if (c === '"' || c === "'") {
      for (i++; i < limit && text[i] !== c && text[i] !== "\n"; i++) {
        if (text[i] === "\\") i++;
      }
    }
    i++;
  }
  return -1;
}
