/**
 * Reads a shell command line far enough to say which simple commands it runs, for the approval
 * rules (agent/approval_rules.ts). It follows bash's grammar for what matters to that question:
 * quotes and escapes, `;` `&&` `||` `|` `|&` `&` and newlines, subshells and `{ … }`, keywords
 * (`if … then`, `while … do`, `for … in`), function definitions, assignments, redirections,
 * here-documents, and the commands hidden in `$( … )`, backticks, `<( … )`, `>( … )` and `${ … }`,
 * inside double quotes and unquoted here-documents too.
 *
 * It never guesses: a word whose value is known only when the command runs (`$X`, a glob, a brace
 * expansion, `$'…'` escapes) is `null`, and syntax it does not follow (`case`, `coproc`, extended
 * globs, an unclosed quote, nesting past MAX_DEPTH) is reported in `unjudged`, so the caller can
 * ask instead of judging. Nothing here runs or reads anything.
 *
 * Why not an npm parser: the gate needs the answer synchronously, and the well-kept full parser
 * (sh-syntax, mvdan/sh in WebAssembly) is asynchronous and instantiates its module per call; the
 * synchronous build of the same parser (mvdan-sh, GopherJS from Go 1.17) takes half a second to
 * load and sets `Error.stackTraceLimit` to Infinity for the whole process; bash-parser is
 * unmaintained and shell-quote is a tokenizer that does not descend into `$( … )`.
 */

/** A word of a command: its text with quotes removed, or null when only the run will know it. */
export type Word = string | null;

/** One simple command: its assignments, its words, and whether it writes a file by redirection. */
export interface SimpleCommand {
  /** `NAME=value` words before the command name. */
  assignments: Word[];
  words: Word[];
  /** An output redirection to anything but `/dev/null` or another descriptor. */
  writes: boolean;
}

/** What a command line runs, and what of it could not be read. */
export interface Parsed {
  commands: SimpleCommand[];
  /** Why part of the line could not be judged; empty when all of it was read. */
  unjudged: string[];
}

/** Deepest nesting of substitutions, subshells and wrapped shells followed. */
export const MAX_DEPTH = 12;

const KEYWORDS_LEADING = new Set(["!", "{", "if", "then", "else", "elif", "do", "while", "until"]);
const KEYWORDS_CLOSING = new Set(["}", "fi", "done", "esac", "]]"]);
const UNFOLLOWED = new Set(["case", "coproc", "select"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

interface WordToken {
  value: Word;
  /** Nothing quoted, escaped or expanded in it: may be a keyword. */
  plain: boolean;
  /** The leading unquoted text, to tell an assignment. */
  lead: string;
}

class Reader {
  i = 0;
  readonly commands: SimpleCommand[] = [];
  readonly unjudged: string[] = [];
  /** Here-documents whose bodies start after the current line. */
  #pending: { delimiter: string; expands: boolean; strip: boolean }[] = [];

  constructor(readonly text: string, readonly depth: number) {}

  fail(reason: string): void {
    if (!this.unjudged.includes(reason)) this.unjudged.push(reason);
  }

  /** Reads commands until `close` (a `)` or a backtick) or the end; returns at the closer. */
  list(close?: string): void {
    const t = this.text;
    let current: WordToken[] = [];
    let writes = false;
    const endCommand = () => {
      if (current.length > 0 || writes) this.#emit(current, writes);
      current = [];
      writes = false;
    };
    let last = -1;
    while (this.i < t.length) {
      if (this.i === last) {
        // Never stuck: a character nothing above consumed is skipped, and judged unreadable.
        this.fail(`\`${t[this.i]}\` where this reader does not expect it`);
        this.i++;
        continue;
      }
      last = this.i;
      const c = t[this.i];
      if (c === close) {
        endCommand();
        return;
      }
      if (c === " " || c === "\t") {
        this.i++;
      } else if (c === "\\" && t[this.i + 1] === "\n") {
        this.i += 2;
      } else if (c === "\n") {
        this.i++;
        endCommand();
        this.#hereDocs();
      } else if (c === "#") {
        while (this.i < t.length && t[this.i] !== "\n") this.i++;
      } else if (c === ";" || c === "&" || c === "|") {
        if (c === "&" && t[this.i + 1] === ">") {
          writes = this.#redirect(current) || writes;
          continue;
        }
        this.i++;
        while (this.i < t.length && ";&|".includes(t[this.i])) this.i++;
        endCommand();
      } else if (c === ")") {
        this.fail("a `)` that closes nothing");
        this.i++;
        endCommand();
      } else if (c === "(") {
        this.#openParen(current);
        current = [];
      } else if (c === "<" || c === ">") {
        writes = this.#redirect(current) || writes;
      } else if (/[0-9]/.test(c) && this.#fdRedirect()) {
        writes = this.#redirect(current) || writes;
      } else {
        const word = this.#word(close);
        if (word) current.push(word);
      }
    }
    endCommand();
    if (close !== undefined) this.fail(`an unclosed \`${close === ")" ? "(" : close}\``);
  }

  /** Whether digits at i are a descriptor before a redirection (`2>`). */
  #fdRedirect(): boolean {
    const m = /^[0-9]+[<>]/.exec(this.text.slice(this.i, this.i + 12));
    return m !== null;
  }

  /** `(` at i: a subshell, `((`, a function definition `name ()`, or an array assignment. */
  #openParen(current: WordToken[]): void {
    const t = this.text;
    const starting = current.every((w) =>
      w.plain && w.value !== null && (KEYWORDS_LEADING.has(w.value) || w.value === "for")
    );
    if (starting) {
      if (t[this.i + 1] === "(") {
        this.i += 2;
        this.#arithmetic("))");
        return;
      }
      this.i++;
      this.#nested(")");
      return;
    }
    const rest = t.slice(this.i + 1).match(/^[ \t]*\)/);
    const named = current.length === 1 ||
      (current.length === 2 && current[0].plain && current[0].value === "function");
    if (rest && named) {
      // `name () body`: the body's commands are judged as if they ran.
      this.i += 1 + rest[0].length;
      return;
    }
    this.fail("a `(` inside a command (an extended glob or an array this reader does not follow)");
    this.i++;
    this.#nested(")");
  }

  /** Reads a nested list up to `close`, one level deeper. */
  #nested(close: string): void {
    if (this.depth + 1 > MAX_DEPTH) {
      this.fail(`nesting deeper than ${MAX_DEPTH} levels`);
      this.#skipTo(close);
      return;
    }
    const inner = new Reader(this.text, this.depth + 1);
    inner.i = this.i;
    inner.list(close);
    this.commands.push(...inner.commands);
    for (const r of inner.unjudged) this.fail(r);
    this.i = inner.i + (inner.i < this.text.length ? close.length : 0);
  }

  /** Skips to after `close`, naively: only for what is already past judging. */
  #skipTo(close: string): void {
    const at = this.text.indexOf(close, this.i);
    this.i = at < 0 ? this.text.length : at + close.length;
  }

  /** Arithmetic up to `end`: its substitutions are read; its value is never a command. */
  #arithmetic(end: string): void {
    const t = this.text;
    let depth = 0;
    while (this.i < t.length) {
      if (depth === 0 && t.startsWith(end, this.i)) {
        this.i += end.length;
        return;
      }
      const c = t[this.i];
      if (c === "(") depth++;
      else if (c === ")") depth--;
      if (c === "$" || c === "`") {
        this.#expansion();
        continue;
      }
      if (c === "[") this.fail("an array index in arithmetic, which bash may run as a command");
      this.i++;
    }
    this.fail("an unclosed `((`");
  }

  /** A redirection at i (after any descriptor digits); true when it writes a file. */
  #redirect(current: WordToken[]): boolean {
    const t = this.text;
    while (/[0-9]/.test(t[this.i])) this.i++;
    const op = /^(<<<|<<-|<<|<>|<&|>&|>>|>\||&>>|&>|<|>)/.exec(t.slice(this.i))![0];
    this.i += op.length;
    if ((op === "<" || op === ">") && t[this.i] === "(") {
      // A process substitution: `<( … )` / `>( … )`, a word of the command.
      this.i++;
      this.#nested(")");
      current.push({ value: null, plain: false, lead: "" });
      return false;
    }
    while (t[this.i] === " " || t[this.i] === "\t") this.i++;
    const start = this.i;
    const target = this.#word();
    if (!target) {
      this.fail(`a redirection \`${op}\` without a target`);
      return false;
    }
    if (op === "<<" || op === "<<-") {
      const raw = t.slice(start, this.i);
      this.#pending.push({
        delimiter: target.value ?? raw.replace(/['"\\]/g, ""),
        expands: !/['"\\]/.test(raw),
        strip: op === "<<-",
      });
      return false;
    }
    if (op === "<" || op === "<<<" || op === "<&") return false;
    if (op === ">&" && target.value !== null && /^[0-9]+-?$|^-$/.test(target.value)) return false;
    return target.value !== "/dev/null";
  }

  /** At the end of the text: a here-document still waiting for its body was never closed. */
  finish(): void {
    for (const doc of this.#pending) {
      this.fail(`a here-document without its closing \`${doc.delimiter}\` line`);
    }
  }

  /** The bodies of the here-documents opened on the line that just ended. */
  #hereDocs(): void {
    const t = this.text;
    for (const doc of this.#pending) {
      let found = false;
      while (this.i < t.length) {
        let end = t.indexOf("\n", this.i);
        if (end < 0) end = t.length;
        const line = t.slice(this.i, end);
        const lineStart = this.i;
        this.i = Math.min(end + 1, t.length);
        if ((doc.strip ? line.replace(/^\t+/, "") : line) === doc.delimiter) {
          found = true;
          break;
        }
        if (doc.expands && /[$`]/.test(line)) this.#expandText(lineStart, end);
      }
      if (!found) this.fail(`a here-document without its closing \`${doc.delimiter}\` line`);
    }
    this.#pending = [];
  }

  /** Reads the substitutions in text[start, end) (a line of an unquoted here-document). */
  #expandText(start: number, end: number): void {
    const saved = this.i;
    this.i = start;
    while (this.i < end) {
      const c = this.text[this.i];
      if (c === "\\") this.i += 2;
      else if (c === "$" || c === "`") this.#expansion();
      else this.i++;
    }
    this.i = saved;
  }

  /**
   * An expansion at i (`$…` or a backtick): the commands inside are read; returns true when it
   * is a plain `$` that expands nothing.
   */
  #expansion(): boolean {
    const t = this.text;
    const c = t[this.i];
    if (c === "`") {
      this.i++;
      // Inside backticks a backslash escapes `$`, `` ` `` and `\`: read them as written.
      const end = this.#closingBacktick();
      if (end < 0) {
        this.fail("an unclosed backtick");
        this.i = t.length;
        return false;
      }
      const body = t.slice(this.i, end).replace(/\\([$`\\])/g, "$1");
      this.#sub(body);
      this.i = end + 1;
      return false;
    }
    const next = t[this.i + 1];
    if (next === "(" && t[this.i + 2] === "(") {
      this.i += 3;
      this.#arithmetic("))");
    } else if (next === "(") {
      this.i += 2;
      this.#nested(")");
    } else if (next === "{") {
      this.i += 2;
      this.#braced();
    } else if (next === "[") {
      this.i += 2;
      this.#arithmetic("]");
    } else if (next !== undefined && /[A-Za-z0-9_@*#?$!-]/.test(next)) {
      this.i += 2;
      if (/[A-Za-z_]/.test(next)) { while (/[A-Za-z0-9_]/.test(t[this.i] ?? "")) this.i++; }
    } else {
      this.i++;
      return true;
    }
    return false;
  }

  #closingBacktick(): number {
    for (let j = this.i; j < this.text.length; j++) {
      if (this.text[j] === "\\") j++;
      else if (this.text[j] === "`") return j;
    }
    return -1;
  }

  /** The commands of a substitution's text, one level deeper. */
  #sub(body: string): void {
    if (this.depth + 1 > MAX_DEPTH) {
      this.fail(`nesting deeper than ${MAX_DEPTH} levels`);
      return;
    }
    const parsed = parseShell(body, this.depth + 1);
    this.commands.push(...parsed.commands);
    for (const r of parsed.unjudged) this.fail(r);
  }

  /** `${ … }` after its `${`: nested braces, quotes and substitutions inside are followed. */
  #braced(): void {
    const t = this.text;
    let depth = 0;
    while (this.i < t.length) {
      const c = t[this.i];
      if (c === "}" && depth === 0) {
        this.i++;
        return;
      }
      if (c === "\\") this.i += 2;
      else if (c === "'") {
        const end = t.indexOf("'", this.i + 1);
        this.i = end < 0 ? t.length : end + 1;
      } else if (c === '"') {
        this.i++;
        this.#doubleQuoted();
      } else if (c === "$" || c === "`") this.#expansion();
      else {
        if (c === "{") depth++;
        else if (c === "}") depth--;
        this.i++;
      }
    }
    this.fail("an unclosed `${`");
  }

  /** The inside of double quotes after the opening `"`; returns its text, or null if expanded. */
  #doubleQuoted(): Word {
    const t = this.text;
    let out: Word = "";
    while (this.i < t.length) {
      const c = t[this.i];
      if (c === '"') {
        this.i++;
        return out;
      }
      if (c === "\\") {
        const n = t[this.i + 1];
        if (n === "\n") this.i += 2;
        else if (n !== undefined && '$`"\\'.includes(n)) {
          if (out !== null) out += n;
          this.i += 2;
        } else {
          if (out !== null) out += c;
          this.i++;
        }
      } else if (c === "$" || c === "`") {
        if (this.#expansion()) {
          if (out !== null) out += "$";
        } else out = null;
      } else {
        if (out !== null) out += c;
        this.i++;
      }
    }
    this.fail('an unclosed `"`');
    return null;
  }

  /** One word at i, or undefined when none starts here. */
  #word(close?: string): WordToken | undefined {
    const t = this.text;
    let value: Word = "";
    let plain = true;
    let lead = "";
    let leading = true;
    let any = false;
    const add = (s: Word) => {
      if (value !== null) value = s === null ? null : value + s;
    };
    while (this.i < t.length) {
      const c = t[this.i];
      if (" \t\n;&|<>()".includes(c) || c === close) break;
      any = true;
      if (c === "\\") {
        const n = t[this.i + 1];
        this.i += 2;
        if (n === "\n") continue;
        plain = false;
        leading = false;
        if (n !== undefined) add(n);
        continue;
      }
      if (c === "'") {
        plain = leading = false;
        const end = t.indexOf("'", this.i + 1);
        if (end < 0) {
          this.fail("an unclosed `'`");
          this.i = t.length;
          return { value: null, plain: false, lead };
        }
        add(t.slice(this.i + 1, end));
        this.i = end + 1;
      } else if (c === '"') {
        plain = leading = false;
        this.i++;
        add(this.#doubleQuoted());
      } else if (c === "$" && t[this.i + 1] === "'") {
        plain = leading = false;
        // `\\` and `\'` are escapes inside: the quote ends at the first unescaped `'`.
        let end = this.i + 2;
        while (end < t.length && t[end] !== "'") end += t[end] === "\\" ? 2 : 1;
        if (end >= t.length) {
          this.fail("an unclosed `$'`");
          this.i = t.length;
          return { value: null, plain: false, lead };
        }
        const body = t.slice(this.i + 2, end);
        // Escapes decode to any byte: the word is known only when they are none.
        add(body.includes("\\") ? null : body);
        this.i = end + 1;
      } else if (c === "$" && t[this.i + 1] === '"') {
        plain = leading = false;
        this.i += 2;
        add(this.#doubleQuoted());
      } else if (c === "$" || c === "`") {
        plain = leading = false;
        if (this.#expansion()) add("$");
        else add(null);
      } else {
        const rest = c === "[" || c === "{" ? t.slice(this.i, this.i + 4096) : "";
        if (
          c === "*" || c === "?" || (c === "[" && /^\[[^\s;&|<>()]*\]/.test(rest)) ||
          (c === "{" && /^\{[^}\s]*(,|\.\.)[^}\s]*\}/.test(rest))
        ) {
          // A glob or a brace expansion: what it becomes depends on the files and the shell.
          add(null);
          plain = false;
        } else add(c);
        if (leading) lead += c;
        this.i++;
      }
    }
    if (!any) return undefined;
    return { value, plain, lead };
  }

  /** Records one simple command from its words, past keywords and assignments. */
  #emit(tokens: WordToken[], writes: boolean): void {
    let i = 0;
    for (;;) {
      const w = tokens[i];
      if (!w || !w.plain || w.value === null) break;
      if (KEYWORDS_LEADING.has(w.value) || KEYWORDS_CLOSING.has(w.value)) i++;
      else if (w.value === "function") i += 2;
      else break;
    }
    const first = tokens[i];
    if (first?.plain && (first.value === "for" || first.value === "in")) return;
    if (first?.plain && first.value !== null && UNFOLLOWED.has(first.value)) {
      this.fail(`\`${first.value}\`, which this reader does not follow`);
      return;
    }
    // `printf -v 'a[$(cmd)]'`, `declare`, `test -v`, an assignment later used in arithmetic:
    // bash runs a substitution it finds in an array index, even one that was quoted.
    if (tokens.some((w) => w.value !== null && /\[[^\]]*(\$\(|`)/.test(w.value))) {
      this.fail("a `$( … )` inside `[ … ]` in a word, which bash may run as an array index");
    }
    const assignments: Word[] = [];
    while (i < tokens.length && ASSIGNMENT.test(tokens[i].lead)) {
      assignments.push(tokens[i].value);
      i++;
    }
    const words = tokens.slice(i).map((w) => w.value);
    if (words.length === 0 && assignments.length === 0 && !writes) return;
    this.commands.push({ assignments, words, writes });
  }
}

/**
 * The simple commands `script` runs, as written (wrappers such as `bash -c` are not followed
 * here: agent/command_wrappers.ts does that). `depth` is how deeply `script` is nested already.
 */
export function parseShell(script: string, depth = 0): Parsed {
  if (depth > MAX_DEPTH) {
    return { commands: [], unjudged: [`nesting deeper than ${MAX_DEPTH} levels`] };
  }
  const reader = new Reader(script, depth);
  reader.list();
  reader.finish();
  return { commands: reader.commands, unjudged: reader.unjudged };
}
