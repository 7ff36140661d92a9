/**
 * The `Task` tool's `apply` (./subagent.ts): a child's patch written into the parent's tree
 * through the parent's own editor, one call per file, each passing the parent's gates — hooks,
 * approval rules and mode — as if the model had made it, so the checkpoints and `/undo` see it.
 *
 * git is the patch's reader and its base check: the files the patch changes are copied from the
 * parent's tree (read pinned inside the workspace: no link out, no FIFO, nothing over the
 * editor's size) into a scratch folder, and `git apply` there (hardened, no repository above)
 * either applies every hunk to the files as they are now or says which one no longer fits. Only
 * then is anything written: each file's new text goes through the editor (`CatalogEntry.rewrite`:
 * create, or one replacement of the whole file, which fails unchanged when the file moved on
 * meanwhile). What the editor cannot write — deletions, renames, binary files, symlinks,
 * executable modes, names with a control character, a quote or a backslash (git quotes those;
 * UTF-8 names are fine) — is refused before anything changes, naming the files, so the model can
 * apply the rest (`files`) and do those by hand.
 */
import { dirname, join } from "node:path";
import { tempRoot } from "../policy/dirs.ts";
import { PATCH_FILES_ARGS, runGit } from "../policy/git.ts";
import { fail, ok, type ResultRecord, type ToolExecResult } from "../tools/base.ts";
import { catalogEntry } from "../tools/catalog.ts";
import type { ToolExecutor } from "../tools/executor.ts";
import { readWorkspaceFile } from "../tools/fs/workspace_read.ts";
import { DEFAULT_MAX_FILE_BYTES } from "../tools/fs/size.ts";

/** A child's patch kept for its parent to apply. */
export interface KeptPatch {
  /** The child's session id, which the `Task` result names the patch by. */
  id: string;
  patch: string;
  /** Where the patch is saved (beside the child's trajectory). */
  file: string;
  /** The folder the patch's paths start from: the parent's repository's top. */
  base: string;
}

/** Where to apply: the parent's workspace, and the executor whose editor and gates write it. */
export interface ApplyPlace {
  workspace: string;
  executor: ToolExecutor;
  maxFileBytes?: number;
}

/** One file of a patch as git reads it. */
interface PatchFile {
  path: string;
  binary: boolean;
  /** What the editor cannot do with it (absent: a text file created or changed in place). */
  refusal?: string;
  created: boolean;
}

let applyCalls = 0;

/**
 * Applies `kept` (or only its `files`) to the parent's tree through `place`'s editor. Answers
 * which files were written, or why none was: a refusal changes nothing.
 */
export async function applyPatch(
  kept: KeptPatch,
  files: readonly string[] | undefined,
  place: ApplyPlace,
): Promise<ToolExecResult> {
  const editor = place.executor.tools.find((t) => catalogEntry(t.name)?.rewrite);
  const rewrite = editor && catalogEntry(editor.name)?.rewrite;
  if (!editor || !rewrite) {
    return fail(
      `task: cannot apply patch ${kept.id}: you have no file editor in this session; ` +
        `apply it yourself from ${kept.file}.`,
    );
  }
  const all = await readPatch(kept.patch);
  if (all === undefined) {
    return fail(`task: git could not read patch ${kept.id} (${kept.file}); nothing was applied.`);
  }
  let chosen = all;
  if (files) {
    const wanted = new Set(files.map((f) => f.replace(/^\.\//, "")));
    const unknown = [...wanted].filter((f) => !all.some((p) => p.path === f));
    if (unknown.length > 0) {
      return fail(
        `task: patch ${kept.id} changes no file named ${unknown.map((f) => `'${f}'`).join(", ")}` +
          `; its files: ${all.map((p) => p.path).join(", ")}. Nothing was applied.`,
      );
    }
    chosen = all.filter((p) => wanted.has(p.path));
  }
  if (chosen.length === 0) return fail(`task: patch ${kept.id} changes no file; nothing to apply.`);
  const refused = chosen.filter((p) => p.refusal);
  if (refused.length > 0) {
    const fine = chosen.filter((p) => !p.refusal).map((p) => p.path);
    return fail(
      `task: patch ${kept.id} was not applied: your file editor cannot ` +
        refused.map((p) => `${p.refusal} (${p.path})`).join("; ") + ". Nothing was changed." +
        (fine.length > 0
          ? ` Apply the rest with {"apply": "${kept.id}", "files": ${JSON.stringify(fine)}} ` +
            `and make the change(s) above yourself (the whole patch is in ${kept.file}).`
          : ` Make the change(s) above yourself (the patch is in ${kept.file}).`),
    );
  }
  const planned = await plan(kept, all, chosen, place);
  if (typeof planned === "string") return fail(planned);
  // Every file checked: now each is written through the editor, behind the parent's gates.
  const edits: NonNullable<ResultRecord["edits"]> = [];
  const lines: string[] = [];
  let failures = 0;
  for (const file of planned) {
    const args = rewrite(file.absolute, file.before, file.after);
    const result = await place.executor.executeToolCall({
      name: editor.name,
      call_id: `task-apply-${++applyCalls}`,
      arguments: args,
    });
    edits.push({ name: editor.name, arguments: args, success: result.success });
    if (result.success) lines.push(`applied: ${file.path}`);
    else {
      failures++;
      lines.push(`not applied: ${file.path}: ${result.error ?? "the edit failed"}`);
    }
  }
  const head = failures === 0
    ? `task: patch ${kept.id} applied to your tree (${planned.length} file(s)), each as an ` +
      `edit of your file editor (undo_edit or /undo takes it back).`
    : `task: patch ${kept.id} was applied in part: ${failures} of ${planned.length} file(s) ` +
      `were not written (the rest were, as edits of your file editor).`;
  const text = [head, ...lines].join("\n");
  const answer = failures === 0 ? ok(text) : fail(text);
  return { ...answer, record: { edits } };
}

/** The files of `patch`, with what the editor cannot do; undefined when git cannot read it. */
async function readPatch(patch: string): Promise<PatchFile[] | undefined> {
  const out = await runGit("/", PATCH_FILES_ARGS, {
    stdin: new TextEncoder().encode(patch),
  }).catch(() => undefined);
  if (!out?.ok) return undefined;
  const files: PatchFile[] = [];
  const byPath = new Map<string, PatchFile>();
  const summary: string[] = [];
  for (const line of out.out.split("\n")) {
    if (line.startsWith(" ")) summary.push(line.trim());
    else if (line.includes("\t")) {
      const [added, _removed, ...rest] = line.split("\t");
      const file = { path: rest.join("\t"), binary: added === "-", created: false } as PatchFile;
      files.push(file);
      byPath.set(file.path, file);
    }
  }
  for (const line of summary) {
    const create = /^create mode (\d+) (.*)$/.exec(line);
    const mode = /^mode change (\d+) => (\d+) (.*)$/.exec(line);
    const deleted = /^delete mode \d+ (.*)$/.exec(line);
    if (create) {
      const file = byPath.get(create[2]);
      if (!file) continue;
      file.created = true;
      if (create[1] === "120000") file.refusal ??= "create a symbolic link";
      else if (create[1] !== "100644") file.refusal ??= `create a file with mode ${create[1]}`;
    } else if (mode) {
      const file = byPath.get(mode[3]);
      if (file) file.refusal ??= `change a file's mode (${mode[1]} => ${mode[2]})`;
    } else if (deleted) {
      const file = byPath.get(deleted[1]);
      if (file) file.refusal ??= "delete a file";
    } else if (/^(rename|copy) /.test(line)) {
      // git names a rename by both paths, shortened ("a/{x => y}"): every file is held back.
      for (const file of files) file.refusal ??= `${line.split(" ")[0]} files (${line})`;
    }
  }
  for (const file of files) {
    if (file.binary) file.refusal ??= "write a binary file";
    // Quoted by git (core.quotepath=false leaves UTF-8 names as they are): a control character.
    if (file.path.startsWith('"')) {
      file.refusal ??=
        "write a file whose name holds a newline, a tab, a quote, a backslash or another control character";
    }
    if (!plainPath(file.path)) {
      file.refusal ??= "write a path that is absolute, climbs with '..' or names '.git'";
    }
  }
  return files;
}

/**
 * Whether `path` names a file below the patch's base and nowhere else: relative, no empty, `.`
 * or `..` part (git's numstat passes such names on as written, and the scratch copy and the
 * parent's file would be found at different places), no `.git` part in any case.
 */
function plainPath(path: string): boolean {
  return path !== "" && !path.startsWith("/") &&
    path.split("/").every((part) =>
      part !== "" && part !== "." && part !== ".." && part.toLowerCase() !== ".git"
    );
}

/** A file ready to be written: its text now (null: none) and after the patch. */
interface Planned {
  path: string;
  absolute: string;
  before: string | null;
  after: string;
}

/**
 * Reads each chosen file from the parent's tree and applies the patch to copies of them in a
 * scratch folder: the files' texts before and after, or what is wrong, naming the file.
 */
async function plan(
  kept: KeptPatch,
  all: readonly PatchFile[],
  chosen: readonly PatchFile[],
  place: ApplyPlace,
): Promise<Planned[] | string> {
  const limit = place.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const scratch = await Deno.makeTempDir({ dir: tempRoot(), prefix: "deft-apply-" });
  try {
    const tree = join(scratch, "tree");
    await Deno.mkdir(tree);
    const befores = new Map<string, string | null>();
    for (const file of chosen) {
      if (befores.has(file.path)) continue; // a patch may change one file in two parts
      const bytes = readWorkspaceFile(place.workspace, join(kept.base, file.path), limit);
      if (bytes === undefined) {
        return `task: patch ${kept.id} was not applied: ${file.path} in your tree cannot be ` +
          `read (a link out of the workspace, not a regular file, or over ${limit} bytes). ` +
          "Nothing was changed.";
      }
      if (bytes === null) {
        if (!file.created) {
          return `task: patch ${kept.id} was not applied: it changes ${file.path}, which is ` +
            "no longer in your tree. Nothing was changed; run the task again on your tree as " +
            "it is now, or make the change yourself.";
        }
        befores.set(file.path, null);
        continue;
      }
      if (file.created) {
        return `task: patch ${kept.id} was not applied: it creates ${file.path}, which your ` +
          "tree now has. Nothing was changed; compare them and merge by hand, or run the " +
          "task again.";
      }
      let text: string;
      try {
        text = decoder.decode(bytes);
      } catch {
        return `task: patch ${kept.id} was not applied: ${file.path} is not UTF-8 text, which ` +
          "apply writes only. Nothing was changed; make the change yourself.";
      }
      befores.set(file.path, text);
      const copy = join(tree, file.path);
      await Deno.mkdir(dirname(copy), { recursive: true });
      // A fresh file of Deft's own: never through a link or onto a file already there.
      await Deno.writeFile(copy, bytes, { createNew: true, mode: 0o600 });
    }
    // Only the chosen files (all of them need no filter: a name may hold glob characters).
    const include = chosen.length === all.length
      ? []
      : chosen.flatMap((f) => ["--include", f.path]);
    const applied = await runGit(
      tree,
      ["apply", "--whitespace=nowarn", ...include, "-"],
      { stdin: new TextEncoder().encode(kept.patch), env: { GIT_CEILING_DIRECTORIES: scratch } },
    );
    if (!applied.ok) {
      const reverse = await runGit(
        tree,
        ["apply", "--check", "--reverse", ...include, "-"],
        { stdin: new TextEncoder().encode(kept.patch), env: { GIT_CEILING_DIRECTORIES: scratch } },
      );
      if (reverse.ok) {
        return `task: patch ${kept.id} is already in your tree: nothing was changed.`;
      }
      return `task: patch ${kept.id} was not applied: its base no longer matches your tree ` +
        `(${applied.err.trim().split("\n").join("; ")}). Nothing was changed. Your files moved ` +
        "on since the child started: run the task again on your tree as it is now, or make the " +
        `change yourself from ${kept.file}.`;
    }
    const planned: Planned[] = [];
    for (const file of chosen) {
      if (planned.some((p) => p.path === file.path)) continue;
      let after: string;
      try {
        after = decoder.decode(await Deno.readFile(join(tree, file.path)));
      } catch {
        return `task: patch ${kept.id} was not applied: ${file.path} would not be UTF-8 text. ` +
          "Nothing was changed; make the change yourself.";
      }
      planned.push({
        path: file.path,
        absolute: join(kept.base, file.path),
        before: befores.get(file.path) ?? null,
        after,
      });
    }
    return planned;
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
}
