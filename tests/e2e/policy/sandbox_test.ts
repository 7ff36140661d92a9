/** The bubblewrap command line: what it binds, in which order, and what happens without bwrap. */
import assert from "node:assert/strict";
import {
  bwrapArgs,
  findBwrap,
  mountArgs,
  type MountView,
  sandboxCommand,
  SandboxUnavailableError,
} from "../../../src/policy/sandbox.ts";
import { tempDir } from "../../helpers/temp.ts";

const WS = "/work/some ws";

/** Index of `flag` followed by `values` in `args`, or -1. */
function indexOfOption(args: string[], flag: string, ...values: string[]): number {
  return args.findIndex((a, i) => a === flag && values.every((v, j) => args[i + 1 + j] === v));
}

Deno.test("sandbox policy: `none` runs the command as it is, in a PID namespace when it can", () => {
  const plain = sandboxCommand(["bash", "--norc"], {
    mode: "none",
    workspace: WS,
    cwd: WS,
    bwrapPath: "/no/such/bwrap",
    unsharePath: "/no/such/unshare",
  });
  assert.deepEqual(plain, { program: "bash", args: ["--norc"] });
  const unshared = sandboxCommand(["bash", "--norc"], {
    mode: "none",
    workspace: WS,
    cwd: WS,
    bwrapPath: "/no/such/bwrap",
  });
  const line = [unshared.program, ...unshared.args];
  assert.ok(line.some((a) => a.endsWith("/unshare")), "unshare is installed here");
  for (const flag of ["--fork", "--pid", "--kill-child", "--mount-proc"]) {
    assert.ok(line.includes(flag), flag);
  }
  assert.ok(line[0].endsWith("/setpriv"), "setpriv makes unshare die with Deft");
  assert.deepEqual(line.slice(1, 4), ["--pdeathsig", "KILL", "--"]);
  assert.deepEqual(line.slice(-2), ["bash", "--norc"]);
  const held = sandboxCommand(["bash", "--norc"], { mode: "none", workspace: WS, cwd: WS });
  assert.ok(held.program.endsWith("/bwrap"), "bwrap is installed here");
  assert.deepEqual(held.args.slice(held.args.indexOf("--")), ["--", "bash", "--norc"]);
  for (const flag of ["--die-with-parent", "--unshare-pid"]) assert.ok(held.args.includes(flag));
  assert.ok(indexOfOption(held.args, "--dev-bind", "/", "/") >= 0, "the files are not confined");
  assert.ok(!held.args.includes("--unshare-net"), "nor the network");
});

Deno.test("sandbox policy: workspace-write confines filesystem, network and lifetime", () => {
  const options = { mode: "workspace-write", workspace: WS, cwd: `${WS}/sub` } as const;
  const args = bwrapArgs(options);
  for (const flag of ["--die-with-parent", "--new-session", "--unshare-all"]) {
    assert.ok(args.includes(flag), flag);
  }
  assert.ok(!args.includes("--share-net"), "no network by default");
  assert.deepEqual(
    args.slice(indexOfOption(args, "--cap-drop"), indexOfOption(args, "--cap-drop") + 2),
    [
      "--cap-drop",
      "ALL",
    ],
  );
  assert.ok(indexOfOption(args, "--bind", WS, WS) >= 0, "the workspace is writable");
  assert.ok(indexOfOption(args, "--dev", "/dev") >= 0);
  assert.ok(indexOfOption(args, "--proc", "/proc") >= 0);
  assert.deepEqual(args.slice(-2), ["--chdir", `${WS}/sub`]);
  // The layout, on a host that has the workspace's top-level folder (whatever this one has).
  const mounts = mountArgs(options, WITH_WS_PARENT);
  // The root's entries are bound one by one (never /tmp), then the root made read-only.
  assert.equal(indexOfOption(mounts, "--ro-bind", "/", "/"), -1, "the root is not bound whole");
  assert.ok(indexOfOption(mounts, "--ro-bind", "/usr", "/usr") >= 0, "its entries are, read-only");
  assert.equal(indexOfOption(mounts, "--ro-bind", "/tmp", "/tmp"), -1, "/tmp is never bound");
  const above = indexOfOption(mounts, "--ro-bind", WS_PARENT, WS_PARENT);
  const tmp = indexOfOption(mounts, "--tmpfs", "/tmp");
  const ws = indexOfOption(mounts, "--bind", WS, WS);
  assert.ok(above >= 0 && tmp >= 0 && ws > above, "the workspace on top of its read-only parent");
  assert.ok(indexOfOption(mounts, "--remount-ro", "/") > ws, "the root read-only at the end");
});

Deno.test("sandbox policy: allowNetwork keeps the network; read-only paths come after /tmp", () => {
  const args = bwrapArgs({
    mode: "workspace-write",
    workspace: WS,
    cwd: WS,
    allowNetwork: true,
    readOnlyPaths: ["/tmp/deft-bash-x"],
  });
  assert.ok(args.includes("--share-net"));
  const tmp = indexOfOption(args, "--tmpfs", "/tmp");
  const out = indexOfOption(args, "--ro-bind", "/tmp/deft-bash-x", "/tmp/deft-bash-x");
  assert.ok(out > tmp);
});

/** A host with /tmp, /run, /var/tmp, Docker's storage, a symlink /bin, as the sandbox sees it. */
const HOST: MountView = {
  hidden: ["/run", "/var/tmp", "/var/lib/docker"],
  listings: new Map([
    ["/", [
      { name: "bin", kind: "symlink", target: "usr/bin" },
      { name: "dev", kind: "dir" },
      { name: "etc", kind: "dir" },
      { name: "proc", kind: "dir" },
      { name: "run", kind: "dir" },
      { name: "tmp", kind: "dir" },
      { name: "usr", kind: "dir" },
      { name: "var", kind: "dir" },
    ]],
    ["/var", [
      { name: "lib", kind: "dir" },
      { name: "log", kind: "dir" },
      { name: "tmp", kind: "dir" },
    ]],
    ["/var/lib", [{ name: "apt", kind: "dir" }, { name: "docker", kind: "dir" }]],
  ]),
};

/** The workspace's top-level folder, and HOST with it among the root's entries. */
const WS_PARENT = `/${WS.split("/")[1]}`;
const WITH_WS_PARENT: MountView = {
  hidden: HOST.hidden,
  listings: new Map([
    ...HOST.listings,
    ["/", [...HOST.listings.get("/")!, { name: WS_PARENT.slice(1), kind: "dir" }]],
  ]),
};

/** The mount options as `[flag, path]` pairs (symlinks as `[--symlink, link]`), in order. */
function mounts(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--ro-bind" || a === "--bind" || a === "--symlink") out.push(`${a} ${args[i + 2]}`);
    if (a === "--tmpfs" || a === "--dev" || a === "--proc" || a === "--remount-ro") {
      out.push(`${a} ${args[i + 1]}`);
    }
  }
  return out;
}

Deno.test("sandbox mounts: the root is shown entry by entry, never binding what it replaces", () => {
  const args = mountArgs({ mode: "workspace-write", workspace: "/etc", cwd: "/etc" }, HOST);
  assert.deepEqual(mounts(args), [
    "--dev /dev",
    "--proc /proc",
    "--tmpfs /tmp",
    "--tmpfs /run",
    "--symlink /bin",
    "--ro-bind /usr",
    "--bind /etc",
    "--tmpfs /var/tmp",
    "--ro-bind /var/log",
    "--tmpfs /var/lib/docker",
    "--ro-bind /var/lib/apt",
    "--remount-ro /",
  ]);
  // Without a container runtime's storage, /var holds nothing that comes and goes: bound whole.
  const quiet = { ...HOST, hidden: ["/run", "/var/tmp"] };
  const plain = mounts(
    mountArgs({ mode: "workspace-write", workspace: "/etc", cwd: "/etc" }, quiet),
  );
  assert.ok(plain.indexOf("--ro-bind /var") < plain.indexOf("--tmpfs /var/tmp"), `${plain}`);
  assert.equal(args[args.indexOf("--symlink") + 1], "usr/bin", "the link is made again as it is");
});

Deno.test("sandbox mounts: a workspace at / is writable and still gets its own /dev, /proc, /tmp", () => {
  const args = mountArgs({ mode: "workspace-write", workspace: "/", cwd: "/" }, HOST);
  assert.deepEqual(mounts(args), [
    "--bind /",
    "--dev /dev",
    "--proc /proc",
    "--tmpfs /tmp",
    "--tmpfs /run",
    "--tmpfs /var/tmp",
    "--tmpfs /var/lib/docker",
  ]);
  const readOnly = mountArgs({ mode: "read-only", workspace: "/", cwd: "/" }, HOST);
  assert.ok(!mounts(readOnly).includes("--bind /"), "read-only: nothing writable");
  assert.equal(mounts(readOnly).at(-1), "--remount-ro /");
});

Deno.test("sandbox mounts: a workspace inside /tmp or a socket folder sits on top of it", () => {
  for (const ws of ["/tmp", "/tmp/x", "/var/tmp", "/run/user/1/p"]) {
    const order = mounts(mountArgs({ mode: "workspace-write", workspace: ws, cwd: ws }, HOST));
    const holder = ws.startsWith("/tmp")
      ? "--tmpfs /tmp"
      : ws.startsWith("/run")
      ? "--tmpfs /run"
      : "--tmpfs /var/tmp";
    assert.ok(order.indexOf(`--bind ${ws}`) > order.indexOf(holder), `${ws}: ${order}`);
  }
});

Deno.test("sandbox policy: the command follows `--` after the bwrap options", () => {
  const cmd = sandboxCommand(["bash", "-c", "true"], {
    mode: "workspace-write",
    workspace: WS,
    cwd: WS,
  });
  assert.equal(cmd.program, findBwrap());
  assert.deepEqual(cmd.args.slice(-4), ["--", "bash", "-c", "true"]);
});

Deno.test("sandbox policy: bwrap is found on PATH or at a given path", () => {
  const found = findBwrap();
  assert.ok(found.startsWith("/") && found.endsWith("/bwrap"));
  assert.equal(findBwrap(found), found);
});

Deno.test("sandbox policy: a missing bwrap fails with install instructions", async () => {
  await using dir = await tempDir("deft-fake-bwrap-");
  const notExecutable = `${dir.path}/bwrap`;
  Deno.writeFileSync(notExecutable, new Uint8Array());
  Deno.chmodSync(notExecutable, 0o644);
  for (const path of ["/nonexistent/bwrap", "deft-no-such-bwrap", notExecutable]) {
    assert.throws(
      () =>
        sandboxCommand(["bash"], {
          mode: "workspace-write",
          workspace: WS,
          cwd: WS,
          bwrapPath: path,
        }),
      (e: unknown) =>
        e instanceof SandboxUnavailableError &&
        /needs bubblewrap/.test(e.message) &&
        /apt-get install -y bubblewrap/.test(e.message) &&
        /sandbox: none/.test(e.message),
      path,
    );
  }
  Deno.removeSync(notExecutable);
});

Deno.test("sandbox policy: the argv really confines a process", async () => {
  await using workspaceDir = await tempDir("deft policy ");
  const workspace = workspaceDir.path;
  const { program, args } = sandboxCommand(
    [
      "bash",
      "-c",
      "touch inside && echo wrote-inside; touch /usr/deft_probe 2>&1; touch /tmp/p && echo tmp-ok",
    ],
    { mode: "workspace-write", workspace, cwd: workspace },
  );
  const out = await new Deno.Command(program, { args, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder().decode(out.stdout);
  assert.match(text, /wrote-inside/);
  assert.match(text, /touch: cannot touch '\/usr\/deft_probe': Read-only file system/);
  assert.match(text, /tmp-ok/);
  assert.ok((await Deno.stat(`${workspace}/inside`)).isFile);
});

Deno.test("sandbox mounts: a folder already shown read-only by its parent's bind is not bound again, and the sandbox sees the same", async () => {
  await using topDir = await tempDir("deft binds ");
  await using elsewhere = await tempDir("deft binds elsewhere ");
  const top = await Deno.realPath(topDir.path);
  // A typical layout: Deft's code and Deno's cache read-only inside a folder shown read-only
  // whole, the workspace beside them, one read-only path reached through a symlink.
  for (const dir of ["ws", "code/src", "cache"]) {
    await Deno.mkdir(`${top}/${dir}`, { recursive: true });
  }
  await Deno.writeTextFile(`${top}/code/src/main.ts`, "code\n");
  await Deno.mkdir(`${elsewhere.path}/sub`);
  await Deno.symlink(elsewhere.path, `${top}/link`);
  const options = {
    mode: "workspace-write",
    workspace: `${top}/ws`,
    cwd: `${top}/ws`,
    readOnlyPaths: [
      top,
      `${top}/code`,
      `${top}/cache`,
      elsewhere.path,
      elsewhere.path,
    ],
  } as const;
  const args = bwrapArgs(options);
  const bound = (path: string) =>
    args.filter((a, i) => (a === "--ro-bind" || a === "--bind") && args[i + 1] === path).length;
  assert.equal(bound(top), 1, "the folder holding them is bound read-only");
  assert.equal(bound(`${top}/code`), 0, "Deft's code is shown by that bind, not bound again");
  assert.equal(bound(`${top}/cache`), 0, "so is the cache");
  // A path through a symlink may lead elsewhere inside: it keeps its own bind.
  const linked = bwrapArgs({ ...options, readOnlyPaths: [top, `${top}/link/sub`] });
  assert.ok(indexOfOption(linked, "--ro-bind", `${top}/link/sub`, `${top}/link/sub`) >= 0);
  assert.equal(bound(elsewhere.path), 1, "a path named twice is bound once");
  assert.equal(bound(`${top}/ws`), 1, "the workspace is bound, writable");
  // What the sandbox sees is what it saw: the code readable and read-only, the workspace writable.
  const script = [
    `cat '${top}/code/src/main.ts'`,
    `touch '${top}/code/new' 2>/dev/null && echo code-writable || echo code-read-only`,
    `touch '${top}/cache/new' 2>/dev/null && echo cache-writable || echo cache-read-only`,
    `touch '${top}/ws/new' && echo ws-writable`,
  ].join("; ");
  const { program, args: argv } = sandboxCommand(["bash", "-c", script], options);
  const out = await new Deno.Command(program, { args: argv, stdout: "piped", stderr: "piped" })
    .output();
  assert.equal(
    new TextDecoder().decode(out.stdout),
    "code\ncode-read-only\ncache-read-only\nws-writable\n",
    new TextDecoder().decode(out.stderr),
  );
});
