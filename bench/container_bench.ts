/**
 * What running the tools in a container costs, against the runtime's own floor, measured in the
 * same run on a private Docker daemon (scripts/containers/dockerd.sh, via the container tests'
 * setup) and the cached test image (scripts/containers/build-test-image.sh):
 *
 * - start to first answer: Deft starting a container (`openContainer`: the runtime's checks, the
 *   container, the glibc and workspace probes) and answering a first bash call through its tool
 *   host inside, vs its floor: `docker run --rm IMAGE` running a Deno hello-world with the tool
 *   host's Deno, flags and variables (`docker run --rm IMAGE true` plus Deno's start inside; both
 *   printed), interleaved;
 * - per call: a trivial bash call (`true`) through the tool host already running inside, vs a
 *   fresh `docker exec CONTAINER true` (the target is at most a tenth).
 *
 * Needs root and dockerd (apt-get install docker.io); the image is built once per machine.
 */
import { openContainer } from "../src/container/container.ts";
import {
  containerLinkStarter,
  createHostedTools,
  TOOL_HOST_COMMAND,
  workerEntry,
} from "../src/tools/host/mod.ts";
import { ToolExecutor } from "../src/tools/executor.ts";
import { deftInside, INSIDE_ROOT } from "../src/container/inside.ts";
import { BUDGETS } from "./budgets.ts";
import { testRuntime } from "../tests/helpers/containers.ts";
import { median, ms } from "./timing.ts";

const STARTS = 5;
const CALLS = 30;
const EXECS = 15;

export default async function containerBench(): Promise<void> {
  await using rt = await testRuntime("docker");
  // Deft's runtime client finds the private daemon the way a user's would.
  const saved = Deno.env.get("DOCKER_HOST");
  Deno.env.set("DOCKER_HOST", rt.env.DOCKER_HOST);
  try {
    await measure(rt.image, rt.cli);
  } finally {
    if (saved === undefined) Deno.env.delete("DOCKER_HOST");
    else Deno.env.set("DOCKER_HOST", saved);
  }
}

async function measure(image: string, cli: (...args: string[]) => Promise<string>) {
  const time = async (f: () => Promise<unknown>) => {
    const start = performance.now();
    await f();
    return performance.now() - start;
  };
  const dockerRun = () => cli("run", "--rm", "--network", "none", image, "true");
  /** A session's container and its bash, as `deft run --docker-image IMAGE -w /testbed` has. */
  const open = async () => {
    const container = await openContainer(
      { runtime: "docker", image, workingDir: "/testbed" },
      workerEntry(),
      TOOL_HOST_COMMAND,
    );
    const tools = await createHostedTools(
      { provider: "openai", workspace: container.workspace, settings: { sandbox: "none" } },
      ["bash"],
      {},
      await containerLinkStarter(container),
    );
    const executor = new ToolExecutor(tools);
    const call = async (command: string) => {
      const result = await executor.executeToolCall({
        name: "bash",
        call_id: "c",
        arguments: { command },
      });
      if (!result.success) throw new Error(`bash ${command} failed: ${result.error}`);
      return result;
    };
    const close = async () => {
      await executor.closeTools();
      await container.close();
    };
    return { container, call, close };
  };

  const helloRun = await denoHelloRun(image, cli);

  // Warm the runtime's and Deno's caches.
  await dockerRun();
  await helloRun.run();
  const warm = await open();
  await warm.call("true");
  await warm.close();

  const runs: number[] = [];
  const hellos: number[] = [];
  const starts: number[] = [];
  try {
    for (let i = 0; i < STARTS; i++) {
      runs.push(await time(dockerRun));
      hellos.push(await time(helloRun.run));
      let session: Awaited<ReturnType<typeof open>> | undefined;
      starts.push(
        await time(async () => {
          session = await open();
          await session.call("true");
        }),
      );
      await session!.close();
    }
  } finally {
    await helloRun.close();
  }
  const [run, hello, start] = [median(runs), median(hellos), median(starts)];
  const { budget, target } = BUDGETS.container_first_answer;
  console.log(`container: docker run --rm IMAGE true ${ms(run)} (median of ${STARTS})`);
  console.log(
    `container: the same with Deno's hello-world inside (Deft's Deno, flags and binds) ` +
      `${ms(hello)}: Deno's start inside ${ms(hello - run)}; this is the floor`,
  );
  console.log(
    `container: Deft's container start to first tool answer ${ms(start)}; ratio to the floor ` +
      `${(start / hello).toFixed(2)} (budget ${budget}, target ${target}); to docker run alone ` +
      `${(start / run).toFixed(2)}; load ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")}`,
  );

  const session = await open();
  try {
    await session.call("true");
    const calls: number[] = [];
    for (let i = 0; i < CALLS; i++) calls.push(await time(() => session.call("true")));
    const execs: number[] = [];
    for (let i = 0; i < EXECS; i++) {
      execs.push(await time(() => cli("exec", session.container.id, "true")));
    }
    const call = median(calls);
    const exec = median(execs);
    console.log(
      `container: bash call through the tool host inside ${ms(call)} (median of ${CALLS}); ` +
        `fresh docker exec CONTAINER true ${ms(exec)} (median of ${EXECS}); ratio ` +
        `${(call / exec).toFixed(3)} (target ≤ 0.1)`,
    );
  } finally {
    await session.close();
  }
}

/**
 * `docker run --rm IMAGE` running a Deno hello-world inside, as Deft starts its tool host there:
 * the host's Deno bound at the same place, the same flags and variables (`deftInside`), no
 * network. Its time is `docker run --rm IMAGE true` plus Deno's start inside: the floor of a
 * container's first answer.
 */
async function denoHelloRun(image: string, cli: (...args: string[]) => Promise<string>) {
  const dir = await Deno.makeTempDir({ prefix: "deft-bench-hello-" });
  const hello = `${dir}/hello.ts`;
  await Deno.writeTextFile(hello, 'console.log("hello");\n');
  const inside = deftInside(workerEntry(), TOOL_HOST_COMMAND);
  // `deno run …flags ENTRY __tool-host`: the same Deno and flags, the hello-world as the entry.
  const [deno, run, ...rest] = inside.argv;
  const flags = rest.slice(0, -2);
  const binds = [
    ...inside.binds.filter((b) => b.container === deno),
    { host: hello, container: `${INSIDE_ROOT}/hello.ts`, readOnly: true },
  ];
  const args = ["run", "--rm", "--network", "none"];
  for (const b of binds) args.push("-v", `${b.host}:${b.container}:${b.readOnly ? "ro" : "rw"}`);
  for (const [k, v] of Object.entries(inside.env)) args.push("-e", `${k}=${v}`);
  args.push(image, deno, run, ...flags, `${INSIDE_ROOT}/hello.ts`);
  return {
    run: async () => {
      const said = await cli(...args);
      if (said !== "hello") {
        throw new Error(`Deno's hello-world inside said ${JSON.stringify(said)}`);
      }
    },
    close: () => Deno.remove(dir, { recursive: true }),
  };
}

if (import.meta.main) await containerBench();
