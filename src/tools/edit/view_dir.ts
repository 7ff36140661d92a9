/** `view` of a directory: its entries two levels deep, hidden ones left out and counted, sorted. */
import { join } from "node:path";
import { MAX_RESPONSE_CHARS } from "./numbering.ts";

// Entries listed at most; a huge tree gets a note instead of a flood.
const MAX_ENTRIES = 1000;

/** How a folder's entries are listed (the store's `tree.list`). */
export type ListDir = (dir: string) => AsyncIterable<Deno.DirEntry>;

/**
 * Lists `real` the way `find DIR -maxdepth 2 -not -path '*\/.*'` would, but sorted, with a `/`
 * after directories, and without following symlinks into other directories. Paths are shown under
 * `shown`, the path the model used.
 */
export async function viewDirectory(list: ListDir, real: string, shown: string): Promise<string> {
  const base = shown.length > 1 ? shown.replace(/\/+$/, "") : shown;
  const lines: string[] = [base === "/" ? base : `${base}/`];
  let omitted = 0;
  let unreadable = 0;
  const hidden = { count: 0 };
  const add = (line: string) => {
    if (lines.length > MAX_ENTRIES) omitted++;
    else lines.push(line);
  };
  for (const entry of await visibleEntries(list, real, hidden)) {
    const path = join(base, entry.name);
    add(entry.isDirectory ? `${path}/` : path);
    if (!entry.isDirectory) continue;
    try {
      for (const child of await visibleEntries(list, join(real, entry.name), hidden)) {
        const childPath = join(path, child.name);
        add(child.isDirectory ? `${childPath}/` : childPath);
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.PermissionDenied)) throw e;
      unreadable++;
    }
  }
  let listing = lines.join("\n");
  if (listing.length > MAX_RESPONSE_CHARS) {
    const cut = listing.lastIndexOf("\n", MAX_RESPONSE_CHARS);
    omitted += listing.slice(cut + 1).split("\n").length;
    listing = listing.slice(0, cut);
  }
  let out =
    `Here's the files and directories up to 2 levels deep in ${base}, excluding hidden items:\n` +
    `${listing}\n`;
  if (omitted > 0) {
    out += `<response clipped><NOTE>${omitted} more entries not shown. View a subdirectory to ` +
      `see its contents, or use \`find\` in bash.</NOTE>\n`;
  }
  if (hidden.count > 0) {
    out += `\n${hidden.count} hidden ${
      hidden.count === 1 ? "entry (a name starting with `.`) was" : "entries (names starting " +
        "with `.`) were"
    } left out; view one by its path, or use \`ls -la\` in bash, to see ${
      hidden.count === 1 ? "it" : "them"
    }.\n`;
  }
  if (unreadable > 0) {
    out += `(${unreadable} subdirectories could not be read: permission denied)\n`;
  }
  return out;
}

// The entries of `dir` whose names do not start with `.`; the others are counted in `hidden`.
async function visibleEntries(
  list: ListDir,
  dir: string,
  hidden: { count: number },
): Promise<Deno.DirEntry[]> {
  const entries: Deno.DirEntry[] = [];
  for await (const entry of list(dir)) {
    if (!entry.name.startsWith(".")) entries.push(entry);
    else hidden.count++;
  }
  return entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}
