/**
 * Tracing from the one-file bundle (`deno task bundle`), where the OpenTelemetry API arrives as a
 * CommonJS module: the run still succeeds and its spans still reach the collector.
 */
import * as assert from "node:assert/strict";
import { mockRunArgs, REPO_ROOT } from "../../helpers/deft.ts";
import { chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { otlpReceiver } from "../../helpers/otlp.ts";
import { tempDir } from "../../helpers/temp.ts";
import { BUNDLE_FULL_FLAGS } from "../../helpers/deno_flags.ts";

Deno.test({
  name: "the bundle exports the run's spans with tracing on",
  sanitizeResources: false,
  fn: async () => {
    await using tmp = await tempDir("deft-trace-bundle-");
    const dir = tmp.path;
    const built = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "scripts/bundle.ts", `${dir}/deft.js`],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(built.success, new TextDecoder().decode(built.stderr));
    await Deno.mkdir(`${dir}/work`);

    const collector = otlpReceiver();
    const mock = MockLLM.start([chatText("Hello from the bundle.")]);
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", ...BUNDLE_FULL_FLAGS, "deft.js", ...mockRunArgs(mock, "say hello", "work")],
        cwd: dir,
        env: {
          NO_COLOR: "1",
          HOME: dir,
          DEFT_CACHE_DIR: `${dir}/.cache`,
          OTEL_DENO: "true",
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, stderr);
      assert.match(new TextDecoder().decode(out.stdout), /Hello from the bundle\./);
      const names = collector.spans().map((s) => s.name);
      for (const name of ["deft.run", "invoke_agent deft", "chat mock-model"]) {
        assert.ok(names.includes(name), `no ${name} span among ${JSON.stringify(names)}`);
      }
    } finally {
      await mock.close();
      await collector.close();
    }
  },
});
