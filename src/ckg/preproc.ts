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
