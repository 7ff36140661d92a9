/**
 * The fence of the worker the tool host really starts (built by createHostedTools, as every
 * command builds it): Deno refuses it everything but the workspace, Deft's cache, its private
 * temp folder, Deft's code and bash/bwrap/git. Started with full permissions, these tests fail.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createHostedTools, ToolHost } from "../../../src/tools/host/mod.ts";
import { StandInTool } from "../../../src/tools/stand_in.ts";
import { Place } from "../../helpers/places.ts";
import { tempDir } from "../../helpers/temp.ts";

const WORKER_LAYER = /\[refused by Deno's permissions of the tool worker\]/;

Deno.test({
  name:
    "worker fence: reads outside, writes to other /tmp folders, fetches and programs are refused",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const place = await Place.create({ bundle: false });
    await using otherTemp = await tempDir("deft-other-", { dir: "/tmp" });
    const other = otherTemp.path;
    await Deno.writeTextFile(join(other, "secret.txt"), "secret\n");
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("reached"),
    );
    const ws = await place.workspace("fenced repo");
    const tools = await createHostedTools(
      { provider: "openai", workspace: ws, settings: {} },
      undefined,
      { cache: place.cache, temp: place.tmp },
    );
    const hosted = tools.find((t) => t instanceof StandInTool && t.host instanceof ToolHost);
    const host = (hosted as StandInTool<ToolHost>).host;
    try {
      assert.equal(await host.probe({ action: "write", target: join(ws, "in.txt") }), "allowed");
      const temp = host.tempDir!;
      assert.ok(temp.startsWith(place.tmp + "/deft-session-"), temp);
      assert.equal(Deno.statSync(temp).mode! & 0o777, 0o700);
      assert.equal(await host.probe({ action: "write", target: join(temp, "t.txt") }), "allowed");
      assert.equal(await host.probe({ action: "run", target: "bash" }), "allowed");

      const read = await host.probe({ action: "read", target: join(other, "secret.txt") });
      assert.match(read, /is outside the workspace/);
      assert.match(read, WORKER_LAYER);

      const write = await host.probe({ action: "write", target: join(other, "dropped.txt") });
      assert.match(write, /is outside the workspace/);
      assert.match(write, WORKER_LAYER);
      await assert.rejects(Deno.stat(join(other, "dropped.txt")));

      // The real system temp folder's other files, and its top level, are not the worker's.
      const tmpTop = await host.probe({ action: "write", target: "/tmp/deft-fence-probe.txt" });
      assert.match(tmpTop, WORKER_LAYER);
      await assert.rejects(Deno.stat("/tmp/deft-fence-probe.txt"));

      const fetched = await host.probe({
        action: "fetch",
        target: `http://127.0.0.1:${server.addr.port}/`,
      });
      assert.match(fetched, /Network access .* is not allowed for tools/);
      assert.match(fetched, WORKER_LAYER);

      const ran = await host.probe({ action: "run", target: "python3" });
      assert.match(ran, /Starting the program \(python3\) is not allowed/);
      assert.match(ran, WORKER_LAYER);

      // Through a tool, the workspace check answers first, and says so in its own words.
      const edit = tools.find((t) => t.name === "str_replace_based_edit_tool")!;
      const escaped = await edit.execute({
        command: "create",
        path: join(other, "via-editor.txt"),
        file_text: "x",
      });
      assert.match(escaped.error!, /leaves the workspace/);
    } finally {
      const temp = host.tempDir;
      for (const tool of tools) await tool.close();
      if (temp) await assert.rejects(Deno.stat(temp), Deno.errors.NotFound);
      await server.shutdown();
      await place.remove();
    }
  },
});
