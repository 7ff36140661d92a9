/**
 * Promises of the start line for a workspace that holds $HOME (src/policy/home_places.ts):
 * - said when the workspace is, or holds, the home folder, and never for a folder inside it:
 *   "the start line names a workspace holding the home folder"
 */
import assert from "node:assert/strict";
import { homeWorkspaceNote } from "../../src/policy/home_places.ts";

Deno.test("the start line names a workspace holding the home folder", () => {
  assert.match(
    homeWorkspaceNote("/home/ann", "workspace-write", "/home/ann") ?? "",
    /holds your home folder \/home\/ann: .*start-up files, ~\/\.ssh/,
  );
  assert.match(homeWorkspaceNote("/home", "workspace-write", "/home/ann") ?? "", /home folder/);
  assert.match(homeWorkspaceNote("/", "none", "/home/ann") ?? "", /--sandbox none/);
  assert.equal(homeWorkspaceNote("/home/ann/src", "workspace-write", "/home/ann"), undefined);
  assert.equal(homeWorkspaceNote("/home/annex", "workspace-write", "/home/ann"), undefined);
  assert.equal(homeWorkspaceNote("/home/ann", "read-only", "/home/ann"), undefined);
});
