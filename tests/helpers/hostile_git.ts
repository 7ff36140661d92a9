/**
 * A repository that configures programs for git, as a hostile clone or the model's own shell
 * would: each planted program writes a marker file named after itself into a folder outside the
 * workspace, so a marker there means it ran on the host.
 */

/**
 * Shell commands, run in a git work tree, that plant a fsmonitor hook, filter, textconv and
 * external diff drivers, a pager, a hook and the `.gitattributes` that turns the drivers on.
 */
export function plantHostileConfig(markers: string): string {
  const touch = (name: string) => `sh -c 'touch ${markers}/${name}; cat'`;
  return [
    `git config core.fsmonitor "${touch("fsmonitor")}"`,
    `git config filter.evil.clean "${touch("clean")}"`,
    `git config filter.evil.smudge "${touch("smudge")}"`,
    `git config filter.evil.process "${touch("process")}"`,
    `git config diff.evil.textconv "${touch("textconv")}"`,
    `git config diff.evil.command "${touch("extdiff")}"`,
    `git config diff.external "${touch("external")}"`,
    `git config core.pager "${touch("pager")}"`,
    `printf '#!/bin/sh\\ntouch ${markers}/hook\\n' > .git/hooks/post-index-change`,
    "chmod +x .git/hooks/post-index-change",
    "printf '* filter=evil diff=evil\\n' > .gitattributes",
  ].join(" && ");
}

/** The markers in `dir`, sorted. */
export async function markersIn(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}
