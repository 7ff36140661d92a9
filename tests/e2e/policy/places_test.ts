/**
 * Deft where users run it: workspaces under $HOME (spaces, non-ASCII), under /srv, reached
 * through a symlink; TMPDIR pointing elsewhere; the bundle under the narrowed flags README
 * documents. Every test here failed before the boundary was rebuilt (see the findings).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Place, serveCalls, srvWorkspace, toolResult } from "../../helpers/places.ts";
import { mockRunArgs } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { graphDatabasePath } from "../../../src/ckg/location.ts";

const EDIT = "str_replace_based_edit_tool";

function call(name: string, args: unknown, workspace: string): string[] {
  return ["tool", name, JSON.stringify(args), "-w", workspace];
}

Deno.test({
  name: "places: create, view of a missing file and `..` paths work in workspaces under $HOME",
  sanitizeResources: false,
  async fn() {
    const place = await Place.create();
    try {
      for (const name of ["plain", "my repo", "dépôt ünïcode 仓库"]) {
        const ws = await place.workspace(name, { "src/a.py": "x = 1\n" });
        const [create, nested, missing, dotdot, escape] = await serveCalls(
          place,
          place.toolFlags(ws),
          ws,
          [
            [EDIT, { command: "create", path: `${ws}/new.py`, file_text: "print('hi')\n" }],
            [EDIT, { command: "create", path: `${ws}/src/../pkg/deep/mod.py`, file_text: "y\n" }],
            [EDIT, { command: "view", path: `${ws}/nope.py` }],
            [EDIT, { command: "view", path: `${ws}/pkg/../src/a.py` }],
            [EDIT, { command: "create", path: `${ws}/../evil.py`, file_text: "" }],
          ],
        );
        assert.equal(create.success, true, create.error);
        assert.equal(await Deno.readTextFile(`${ws}/new.py`), "print('hi')\n");
        assert.equal(nested.success, true, nested.error);
        assert.equal(await Deno.readTextFile(`${ws}/pkg/deep/mod.py`), "y\n");
        assert.equal(missing.success, false);
        assert.match(missing.error, /does not exist/);
        assert.doesNotMatch(missing.error, /leaves the workspace|--allow/);
        assert.equal(dotdot.success, true, dotdot.error);
        assert.match(dotdot.output, /x = 1/);
        // An escape is still an escape, named as one.
        assert.equal(escape.success, false);
        assert.match(escape.error, /leaves the workspace/);
        await assert.rejects(Deno.stat(join(place.home, "evil.py")));
      }
    } finally {
      await place.remove();
    }
  },
});

Deno.test({
  name: "places: a workspace under /srv and one reached through a symlink",
  sanitizeResources: false,
  async fn() {
    const place = await Place.create();
    const srv = await srvWorkspace();
    try {
      const real = await place.workspace("real repo");
      const link = join(place.home, "link to repo");
      await Deno.symlink(real, link);
      // Deno's grants are by path as written: the link (to resolve it) and the real folder.
      const flags = place.toolFlags(real).map((f) =>
        f.startsWith("--allow-read=") ? `${f},${link}` : f
      );
      const viaLink = await place.runBundle(
        flags,
        call(EDIT, { command: "create", path: `${real}/made.txt`, file_text: "ok\n" }, link),
      );
      assert.equal(toolResult(viaLink).success, true, viaLink.stderr);
      assert.equal(await Deno.readTextFile(`${real}/made.txt`), "ok\n");

      if (srv) {
        const ran = await place.runBundle(
          place.toolFlags(srv),
          call(EDIT, { command: "create", path: `${srv}/sub/new.py`, file_text: "z\n" }, srv),
        );
        assert.equal(toolResult(ran).success, true, ran.stderr);
        const bash = toolResult(
          await place.runBundle(
            place.toolFlags(srv),
            call("bash", { command: "cat sub/new.py" }, srv),
          ),
        );
        assert.equal(bash.output.trim(), "z");
      }
    } finally {
      await place.remove();
      if (srv) await Deno.remove(srv, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "places: the bundle's editor, bash and ckg work under the minimal flags; each missing flag is named",
  sanitizeResources: false,
  async fn() {
    const place = await Place.create();
    try {
      const ws = await place.workspace("proj", { "lib.py": "def answer():\n    return 42\n" });
      const flags = place.toolFlags(ws);
      const [bash, ckg] = await serveCalls(place, flags, ws, [
        ["bash", { command: "echo hi > out.txt; pwd" }],
        ["ckg", { command: "search_function", path: ws, identifier: "answer" }],
      ]);
      assert.equal(bash.success, true, bash.error);
      assert.equal(bash.output.trim(), ws);
      assert.equal(await Deno.readTextFile(`${ws}/out.txt`), "hi\n");
      assert.equal(ckg.success, true, ckg.error);
      assert.match(ckg.output, /return 42/);
      // The session's private folder is gone once the tools closed.
      assert.deepEqual([...Deno.readDirSync(place.tmp)], []);

      // The exact set README documents, without --allow-env: Deft's private temp folder and the
      // graph's cache fall back to /tmp, and every tool still works.
      const documented = [
        `--allow-read=${ws},${place.bundlePath},/tmp`,
        `--allow-write=${ws},/tmp`,
        "--allow-run=bash",
      ];
      const [docEdit, docBash, docCkg] = await serveCalls(place, documented, ws, [
        [EDIT, { command: "create", path: `${ws}/doc.py`, file_text: "def doc():\n    pass\n" }],
        ["bash", { command: "cat doc.py" }],
        ["ckg", { command: "search_function", path: ws, identifier: "doc" }],
      ]);
      assert.equal(docEdit.success, true, docEdit.error);
      assert.match(docBash.output, /def doc/);
      assert.equal(docCkg.success, true, docCkg.error);
      await Deno.remove(graphDatabasePath(ws, `/tmp/deft-cache-${Deno.uid()}/ckg`)).catch(() => {});

      const without = (flag: string) => flags.filter((f) => !f.startsWith(flag));

      const noRun = toolResult(
        await place.runBundle(without("--allow-run"), call("bash", { command: "true" }, ws)),
      );
      assert.equal(noRun.success, false);
      assert.match(noRun.error, /bash needs --allow-run=bash/);

      const readOnlyGrant = [
        ...without("--allow-write"),
        `--allow-write=${place.tmp},${place.cache}`,
      ];
      const noWrite = toolResult(
        await place.runBundle(
          readOnlyGrant,
          call(EDIT, { command: "create", path: `${ws}/x.py`, file_text: "" }, ws),
        ),
      );
      assert.equal(noWrite.success, false);
      assert.match(noWrite.error, new RegExp(`--allow-write=${ws}`));
      assert.doesNotMatch(noWrite.error, /leaves the workspace|outside the workspace/);

      const noTemp = toolResult(
        await place.runBundle(
          [...without("--allow-write"), `--allow-write=${ws}`],
          call("bash", { command: "true" }, ws),
        ),
      );
      assert.equal(noTemp.success, false);
      assert.match(noTemp.error, new RegExp(`--allow-write=${place.tmp}`));

      // No --allow-env at all: Deft starts and edits; nothing dies on an environment read.
      const noEnv = await place.runBundle(
        without("--allow-env"),
        call(EDIT, { command: "create", path: `${ws}/env.txt`, file_text: "e\n" }, ws),
      );
      assert.equal(toolResult(noEnv).success, true, noEnv.stderr);

      const noRead = await place.runBundle(
        [`--allow-read=${place.bundlePath}`],
        call(EDIT, { command: "view", path: ws }, ws),
      );
      assert.equal(noRead.code, 2);
      assert.match(noRead.stderr, /--allow-read/);
    } finally {
      await place.remove();
    }
  },
});

Deno.test({
  name:
    "places: deft run against the mock under narrowed flags creates a new file in the workspace",
  sanitizeResources: false,
  async fn() {
    const place = await Place.create();
    const ws = await place.workspace("agent repo");
    const mock = MockLLM.start([
      chatToolCalls([[EDIT, {
        command: "create",
        path: `${ws}/hello.py`,
        file_text: "print(1)\n",
      }]]),
      chatToolCalls([["bash", { command: "python3 hello.py" }]]),
      chatToolCalls([["task_done", {}]], "Added hello.py."),
    ]);
    try {
      const port = new URL(mock.url).port;
      const ran = await place.runBundle(
        [...place.toolFlags(ws), `--allow-net=127.0.0.1:${port}`],
        mockRunArgs(mock, "add hello.py", ws, {
          apiKey: "sk-test",
          extra: ["-t", join(place.tmp, "trajectory.json"), "--json"],
        }),
        { env: { DEFT_RETRY_BASE_MS: "5" } },
      );
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(await Deno.readTextFile(`${ws}/hello.py`), "print(1)\n");
      assert.match(JSON.stringify(mock.requests.at(-1)?.body), /\\n1\\n|"1\\n"|1\\n/);

      // Without --allow-env (the key on the command line) the run starts and works as well.
      const again = MockLLM.start([
        chatToolCalls([[EDIT, { command: "create", path: `${ws}/again.py`, file_text: "2\n" }]]),
        chatToolCalls([["task_done", {}]], "Added again.py."),
      ]);
      try {
        const noEnv = await place.runBundle(
          [
            ...place.toolFlags(ws).filter((f) => f !== "--allow-env"),
            `--allow-net=127.0.0.1:${new URL(again.url).port}`,
          ],
          mockRunArgs(again, "add again.py", ws, {
            apiKey: "sk-test",
            extra: ["-t", join(place.tmp, "trajectory2.json")],
          }),
        );
        assert.equal(noEnv.code, 0, noEnv.stderr);
        assert.equal(await Deno.readTextFile(`${ws}/again.py`), "2\n");
      } finally {
        await again.close();
      }
    } finally {
      await mock.close();
      await place.remove();
    }
  },
});
