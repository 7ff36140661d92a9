/**
 * Recovery for C and C++ files whose preprocessor conditionals split a block: with both branches
 * of `#ifdef X … } else { #else … { #endif` in the text, braces do not balance and tree-sitter's
 * error recovery can swallow the functions that follow. Keeping only one branch of each
 * conditional, as a compiler would, gives text whose braces balance again.
 */

const DIRECTIVE = /^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(.*)$/;

/**
 * `text` with every conditional directive blanked and, of each conditional, only the branch a
 * compiler would most likely see kept (the first, or the `#else` of an `#if 0`); the other branches
 * are blanked too. Blanking keeps line breaks and replaces every other character with a space, so
 * offsets and line numbers stay those of `text`. Undefined when there is no conditional.
 */
export function oneBranchOnly(text: string): string | undefined {
  if (!/^[ \t]*#[ \t]*if/m.test(text)) return undefined;
  const lines = text.split("\n");
  // Per open conditional: whether the branch being read is kept, and whether one was kept.
  const stack: { keeping: boolean; kept: boolean; outerKeeping: boolean }[] = [];
  let keeping = true;
  let continued = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (continued) {
      continued = line.endsWith("\\");
      lines[i] = blank(line);
      continue;
    }
    const m = DIRECTIVE.exec(line);
    if (!m) {
      if (!keeping) lines[i] = blank(line);
      continue;
    }
    const [, directive, rest] = m;
    continued = line.endsWith("\\");
    lines[i] = blank(line);
    if (directive.startsWith("if")) {
      const dead = directive === "if" && /^\s*0\s*(?:\/[/*].*)?$/.test(rest);
      stack.push({ keeping: keeping && !dead, kept: !dead, outerKeeping: keeping });
      keeping = keeping && !dead;
    } else if (directive === "endif") {
      const frame = stack.pop();
      keeping = frame ? frame.outerKeeping : true;
    } else {
      const frame = stack[stack.length - 1];
      if (!frame) continue;
      frame.keeping = frame.outerKeeping && !frame.kept;
      frame.kept = true;
      keeping = frame.keeping;
    }
  }
  return lines.join("\n");
}

function blank(line: string): string {
  return line.replace(/[^\r]/g, " ");
}

/**
 * Where `text` can be cut into top-level definitions, for parsing each on its own when one bad
 * region (an initializer holding `#define` rows, a macro tree-sitter misreads, an unbalanced
 * brace) would otherwise swallow or misplace the definitions after it: the offsets of lines that
 * start at column 0 with a name (not a label) right after a line that ends a declaration or
 * definition (`}`, `;`), a preprocessor directive or a comment. Code inside a function is
 * indented in practice, as ctags also assumes. The first cut is 0.
 */
export function definitionCuts(text: string): number[] {
  const cuts = [0];
  let ended = true;
  let inComment = false;
  let continued = false;
  let offset = 0;
  for (const line of text.split("\n")) {
    const start = offset;
    offset += line.length + 1;
    const trimmed = line.trim();
    if (continued) {
      continued = trimmed.endsWith("\\");
      ended = true;
      continue;
    }
    if (inComment) {
      if (trimmed.includes("*/")) {
        inComment = false;
        ended = ended || /\*\/\s*$/.test(trimmed);
      }
      continue;
    }
    if (trimmed === "") continue;
    if (trimmed.startsWith("#")) {
      continued = trimmed.endsWith("\\");
      ended = true;
      continue;
    }
    if (trimmed.startsWith("//")) continue;
    if (trimmed.startsWith("/*")) {
      if (!trimmed.includes("*/")) inComment = true;
      continue;
    }
    if (ended && start > 0 && /^[A-Za-z_]/.test(line) && !/^[A-Za-z_]\w*\s*:(?!:)/.test(line)) {
      cuts.push(start);
    }
    const code = trimmed.replace(/\/\/.*$/, "").replace(/\/\*.*?\*\//g, "").trimEnd();
    if (/\/\*/.test(code) && !/\*\//.test(code.slice(code.lastIndexOf("/*")))) inComment = true;
    ended = /[;}]$/.test(code);
  }
  return cuts;
}
