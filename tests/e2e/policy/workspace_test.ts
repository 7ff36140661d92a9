import assert from "node:assert/strict";
import { join } from "node:path";
import {
  confine,
  isInside,
  OutsideWorkspaceError,
  realWorkspace,
  UnresolvablePathError,
} from "../../../src/policy/workspace.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";

async function withDirs(fn: (ws: string, outside: string) => Promise<void>): Promise<void> {
  await using wsDir = await tempDir("deft-ws-");
  const ws = wsDir.path;
  await using outsideDir = await tempDir("deft-out-");
  const outside = outsideDir.path;
  await fn(ws, outside);
}

Deno.test("isInside: the root and paths below it only", () => {
  assert.equal(isInside("/ws", "/ws"), true);
  assert.equal(isInside("/ws", "/ws/a/b"), true);
  assert.equal(isInside("/ws", "/ws2/a"), false);
  assert.equal(isInside("/ws", "/"), false);
  assert.equal(isInside("/ws", "/ws/../etc"), false);
  assert.equal(isInside("/ws", "/ws/..foo"), true);
});

Deno.test("realWorkspace: resolves links, refuses missing dirs and files", async () => {
  await withDirs(async (ws) => {
    await Deno.symlink(ws, join(ws, "self"));
    assert.equal(await realWorkspace(join(ws, "self")), ws);
    await assert.rejects(realWorkspace(join(ws, "missing")), /does not exist/);
    await Deno.writeTextFile(join(ws, "f"), "");
    await assert.rejects(realWorkspace(join(ws, "f")), /is not a directory/);
  });
});

Deno.test("confine: existing and not-yet-existing paths inside are allowed", async () => {
  await withDirs(async (ws) => {
    await Deno.mkdir(join(ws, "src"));
    await Deno.writeTextFile(join(ws, "src", "a.ts"), "");
    assert.equal(await confine(ws, join(ws, "src", "a.ts")), join(ws, "src", "a.ts"));
    assert.equal(await confine(ws, join(ws, "new", "deep", "b.ts")), join(ws, "new/deep/b.ts"));
    assert.equal(await confine(ws, ws), ws);
    assert.equal(await confine(ws, `${ws}/src/./../src/a.ts`), join(ws, "src", "a.ts"));
  });
});

Deno.test("confine: `..` out of the workspace is refused", async () => {
  await withDirs(async (ws, outside) => {
    await Deno.writeTextFile(join(outside, "secret"), "x");
    for (const path of [`${ws}/../${outside.split("/").pop()}/secret`, "/etc/passwd", `${ws}/..`]) {
      await assert.rejects(confine(ws, path), (e: Error) => {
        assert.ok(e instanceof OutsideWorkspaceError);
        assert.match(e.message, /leaves the workspace/);
        return true;
      });
    }
    // `..` inside a part that does not exist yet still counts.
    await assert.rejects(confine(ws, `${ws}/missing/../../etc/passwd`), OutsideWorkspaceError);
  });
});

Deno.test("confine: symlinks pointing out are refused, naming the link", async () => {
  await withDirs(async (ws, outside) => {
    await Deno.writeTextFile(join(outside, "secret"), "x");
    await Deno.symlink(outside, join(ws, "dirlink"));
    await Deno.symlink(join(outside, "secret"), join(ws, "filelink"));
    await Deno.symlink("../" + outside.split("/").pop(), join(ws, "relative"));
    for (const p of ["dirlink/secret", "filelink", "dirlink/new.txt", "relative/secret"]) {
      await assert.rejects(confine(ws, join(ws, p)), (e: Error) => {
        assert.ok(e instanceof OutsideWorkspaceError, p);
        assert.match(e.message, /leaves the workspace .*through a symbolic link/);
        return true;
      });
    }
  });
});

Deno.test("confine: `..` after a symlink climbs from the link's target, like the kernel", async () => {
  await withDirs(async (ws, outside) => {
    await Deno.mkdir(join(outside, "sub"));
    await Deno.writeTextFile(join(outside, "x"), "");
    await Deno.symlink(join(outside, "sub"), join(ws, "link"));
    await Deno.writeTextFile(join(ws, "x"), "");
    // Lexically this is ws/x, but the kernel opens outside/x.
    await assert.rejects(confine(ws, `${ws}/link/../x`), OutsideWorkspaceError);
    await assert.rejects(confine(ws, `${ws}/link/../new`), OutsideWorkspaceError);
    // A missing part followed by `..` back onto the link is judged by the link.
    await assert.rejects(confine(ws, `${ws}/missing/../link/y`), OutsideWorkspaceError);
  });
});

Deno.test("confine: dangling symlinks are judged by where the target would be", async () => {
  await withDirs(async (ws, outside) => {
    await Deno.symlink(join(outside, "not-yet"), join(ws, "out"));
    await Deno.symlink(join(ws, "later.txt"), join(ws, "in"));
    await Deno.symlink("sub/rel.txt", join(ws, "rel"));
    await assert.rejects(confine(ws, join(ws, "out")), /leaves the workspace/);
    assert.equal(await confine(ws, join(ws, "in")), join(ws, "later.txt"));
    assert.equal(await confine(ws, join(ws, "rel")), join(ws, "sub", "rel.txt"));
  });
});

Deno.test("confine: symlinks inside that stay inside resolve to their target", async () => {
  await withDirs(async (ws) => {
    await Deno.mkdir(join(ws, "real"));
    await Deno.writeTextFile(join(ws, "real", "f"), "");
    await Deno.symlink(join(ws, "real"), join(ws, "alias"));
    assert.equal(await confine(ws, join(ws, "alias", "f")), join(ws, "real", "f"));
    assert.equal(await confine(ws, join(ws, "alias", "g")), join(ws, "real", "g"));
  });
});

Deno.test("confine: symlink loops are reported, not followed forever", async () => {
  await withDirs(async (ws) => {
    await Deno.symlink(join(ws, "b"), join(ws, "a"));
    await Deno.symlink(join(ws, "a"), join(ws, "b"));
    await assert.rejects(confine(ws, join(ws, "a")), UnresolvablePathError);
    await assert.rejects(confine(ws, join(ws, "a", "x")), /too many levels of symbolic links/);
  });
});

Deno.test("confine: a path through a regular file is not an escape", async () => {
  await withDirs(async (ws) => {
    await Deno.writeTextFile(join(ws, "file"), "");
    assert.equal(await confine(ws, join(ws, "file", "x")), join(ws, "file", "x"));
  });
});

// Made before the test so it can be given permissions scoped to it (symlinks need full access).
const scoped = await tempDirUntilExit("deft-ws-scoped-");
await Deno.symlink("/etc", join(scoped, "etc-link"));
await Deno.writeTextFile(join(scoped, "inside.txt"), "");

Deno.test({
  name: "confine: under permissions scoped to the workspace, outside paths are refused too",
  permissions: { read: [scoped], write: [scoped] },
  fn: async () => {
    assert.equal(await confine(scoped, join(scoped, "inside.txt")), join(scoped, "inside.txt"));
    for (const path of ["/etc/passwd", `${scoped}/../x`, join(scoped, "etc-link", "passwd")]) {
      await assert.rejects(confine(scoped, path), OutsideWorkspaceError, path);
    }
  },
});

Deno.test("confine: permissions on the workspace alone suffice; escapes and missing grants differ", async () => {
  const home = Deno.env.get("HOME")!;
  const placeTemp = await tempDir(".deft-confine-", { dir: home });
  const place = placeTemp.path;
  try {
    const ws = `${place}/my wörk space`;
    await Deno.mkdir(`${ws}/src`, { recursive: true });
    await Deno.mkdir(`${place}/ungranted`);
    await Deno.writeTextFile(`${ws}/src/a.py`, "x\n");
    await Deno.symlink(`${place}/ungranted`, `${ws}/out`);
    const probe = new URL("../../fixtures/policy/confine_probe.ts", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        `--allow-read=${ws},${probe},${new URL("../../../src", import.meta.url).pathname}`,
        probe,
        ws,
        `${ws}/new.py`,
        `${ws}/missing/dir/new.py`,
        `${ws}/src/../src/a.py`,
        `${ws}/nope/../src/b.py`,
        `${ws}/../evil.py`,
        `${ws}/out/x.py`,
        `${ws}/src`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n").map((l) => JSON.parse(l));
    const byPath = Object.fromEntries(lines.map((l) => [l.path, l]));
    assert.equal(byPath[`${ws}/new.py`].real, `${ws}/new.py`);
    assert.equal(byPath[`${ws}/missing/dir/new.py`].real, `${ws}/missing/dir/new.py`);
    assert.equal(byPath[`${ws}/src/../src/a.py`].real, `${ws}/src/a.py`);
    assert.equal(byPath[`${ws}/nope/../src/b.py`].real, `${ws}/src/b.py`);
    assert.equal(byPath[`${ws}/src`].real, `${ws}/src`);
    assert.equal(byPath[`${ws}/../evil.py`].error, "OutsideWorkspaceError");
    assert.equal(byPath[`${ws}/out/x.py`].error, "OutsideWorkspaceError");
    assert.match(byPath[`${ws}/out/x.py`].message, /leaves the workspace/);
  } finally {
    await placeTemp.remove();
  }
});

Deno.test("confine: a folder inside the workspace that Deno may not read is a missing grant", async () => {
  const home = Deno.env.get("HOME")!;
  const placeTemp = await tempDir(".deft-confine-", { dir: home });
  const place = placeTemp.path;
  try {
    const ws = `${place}/ws`;
    await Deno.mkdir(`${ws}/secret`, { recursive: true });
    const probe = new URL("../../fixtures/policy/confine_probe.ts", import.meta.url).pathname;
    // Granted a file in the workspace but not the workspace: looking at a folder in it is denied.
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        `--allow-read=${ws}/granted.txt,${probe},${
          new URL("../../../src", import.meta.url).pathname
        }`,
        probe,
        ws,
        `${ws}/secret/x.py`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const line = JSON.parse(new TextDecoder().decode(out.stdout).trim());
    assert.equal(line.error, "PermissionMissingError");
    assert.match(line.message, new RegExp(`start Deft with --allow-read=${ws}/secret`));
    assert.doesNotMatch(line.message, /leaves the workspace/);
  } finally {
    await placeTemp.remove();
  }
});
