/**
 * How a call is shown is said once, by the catalog's descriptions (src/tools/describe.ts): the
 * places that show calls — the approval preview, the consoles, ACP's updates and permission
 * requests, `deft report` — name no tool and read no argument of a call, and show a call by its
 * description, never by its effect (what it does, which the gate decides by). Read from their
 * source (comments left out): a tool's name, a parameter name of a built-in tool where it reads
 * an argument, a look inside a call's `arguments` or an effect shown fails the test, naming the
 * file and line.
 */
import assert from "node:assert/strict";
import { CATALOG } from "../../src/tools/catalog.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The TypeScript files of a source folder, sorted. */
const filesOf = (dir: string) =>
  [...Deno.readDirSync(`${ROOT}${dir}`)]
    .filter((e) => e.isFile && e.name.endsWith(".ts"))
    .map((e) => `${dir}/${e.name}`)
    .sort();

/** Every module that shows a call: the gate (its questions and previews) among them. */
const CONSUMERS = [
  ...filesOf("src/gate"),
  "src/report/run.ts",
  "src/acp/console.ts",
  "src/acp/permission.ts",
  "src/acp/replay.ts",
  "src/agent/console.ts",
  ...filesOf("src/cli/console"),
];

/** `source` with its comments blanked out, line breaks kept (so line numbers hold). */
function code(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/(^|[\s;{}(),])\/\/.*$/gm, "$1");
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const TOOL_NAMES = CATALOG.map((e) => e.definition.name);
const PARAMETERS = [...new Set(CATALOG.flatMap((e) => e.definition.parameters.map((p) => p.name)))];
/** Names no other word is spelled like (`old_str`, `file_text`): wrong wherever they appear. */
const DISTINCT = PARAMETERS.filter((p) => /_|[a-z][A-Z]/.test(p));
/** A name in camelCase, as a reader might wrongly spell an argument (`nextThoughtNeeded`). */
const camel = (p: string) => p.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** What a consumer may not write, with why. */
const FORBIDDEN: { pattern: RegExp; why: string }[] = [
  ...TOOL_NAMES.map((name) => ({
    pattern: new RegExp(`(?<![\\w$])${escape(name)}(?![\\w$])`),
    why: `names the tool \`${name}\``,
  })),
  ...DISTINCT.flatMap((p) => [p, camel(p)]).filter((p, i, all) => all.indexOf(p) === i).map(
    (p) => ({
      pattern: new RegExp(`(?<![\\w$])${escape(p)}(?![\\w$])`),
      why: `reads the argument \`${p}\``,
    }),
  ),
  ...PARAMETERS.map((p) => ({
    // `args.command`, `a?.path`, `arguments.thought`, `input["value"]`: an argument read by name.
    pattern: new RegExp(
      `(?<![\\w$])(?:a|args?|arguments|argumentsOf\\([^)]*\\)|argsOf\\([^)]*\\)|input|params|rawInput)` +
        `\\s*(?:\\?\\.|\\.)\\s*${escape(p)}(?![\\w$])|\\[\\s*["'\`]${escape(p)}["'\`]\\s*\\]`,
    ),
    why: `reads the argument \`${p}\``,
  })),
  {
    // A call's arguments go on whole (to describeCall, to JSON, to the client), never looked into.
    pattern: /\.arguments\s*(?:\?\.|\.|\[|as\b)|(?<![=!<>])=\s*[\w$.]+\.arguments\b(?!\s*[?=!])/,
    why: "looks inside a call's arguments",
  },
  {
    // What a call does (its effect) decides; what is shown of it is its description's. An edit
    // effect's `summary` and `after` exist to be shown: shown from the effect, a call is shown
    // twice over, once by the catalog's description and once by the effect.
    pattern:
      /(?<![\w$])effect\s*(?:\?\.|\.)\s*(?:summary|after)\b|\b(?:show|preview)\w*\(\s*effect\b/i,
    why: "shows a call by its effect, not by its description",
  },
];

Deno.test("describe: no module that shows a call names a tool or reads its arguments", () => {
  const found: string[] = [];
  for (const file of CONSUMERS) {
    const lines = code(Deno.readTextFileSync(`${ROOT}${file}`)).split("\n");
    lines.forEach((line, i) => {
      for (const { pattern, why } of FORBIDDEN) {
        if (pattern.test(line)) found.push(`${file}:${i + 1} ${why}: ${line.trim()}`);
      }
    });
  }
  assert.deepEqual(found, [], `ask the catalog's description instead:\n${found.join("\n")}`);
});

Deno.test("describe: the check catches each way of reading an argument or naming a tool", () => {
  const caught = (line: string) => FORBIDDEN.some(({ pattern }) => pattern.test(code(line)));
  for (
    const bad of [
      `if (call.name === "bash") {}`,
      `const t = "str_replace_based_edit_tool";`,
      `const old = a.old_str;`,
      `const c = str(a.command);`,
      `status: args.nextThoughtNeeded === true`,
      `const path = argumentsOf(call).path;`,
      `return args?.command;`,
      `const v = input["value"];`,
      `const args = call.arguments as Record<string, unknown>;`,
      `const args = call.arguments;`,
      `const x = call.arguments.command;`,
      `show: showEdit(effect, this.workspace, this.inContainer),`,
      `return preview ?? limitLines(effect.summary.split("\\n")).join("\\n");`,
      `const after = effect.after?.(before);`,
    ]
  ) assert.ok(caught(bad), `not caught: ${bad}`);
  for (
    const fine of [
      `// bash runs the command`,
      `rawInput: call.arguments,`,
      `describeCall(call.name, call.arguments, effect)`,
      `JSON.stringify(call.arguments ?? null)`,
      `const path = description.diff.path;`,
      `question.kind === "command"`,
      `const text = typeof call.arguments === "string" ? call.arguments : "";`,
      `show: showEdit(describeCall(tool.name, args, effect), call, workspace, false),`,
      `always: \`edit \${effect.path}\`,`,
    ]
  ) assert.ok(!caught(fine), `caught, though fine: ${fine}`);
});
