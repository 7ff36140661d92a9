/**
 * The tool host inside a container (`--docker-image`, `--docker-container-id`). Deft's own code,
 * bound read-only into the container (src/container/inside.ts), runs `deft __tool-host` there
 * over `docker exec -i` / `podman exec -i`: the same relay and the same JSON lines as the
 * sandboxed host (sandboxed.ts), so every tool behaves as on the host. The container is the
 * boundary: the worker inside may use the whole container but no network, and the model sees
 * container paths only — the workspace and Deft's folders are named as they are inside, and
 * nothing is translated on the way in or out.
 */
import type { Container } from "../../container/container.ts";
import { INSIDE_BOOT, INSIDE_ROOT, INSIDE_TEMP } from "../../container/inside.ts";
import { containerExecLaunch } from "../../policy/container_cli.ts";
import { spawnChild } from "../../policy/process.ts";
import type { ToolDirs } from "../../policy/permissions.ts";
import type { HostRequest } from "./protocol.ts";
import type { LinkStarter } from "./link.ts";
import { describeStatus, linkProcess } from "./process_link.ts";
import type { BootMessage } from "./protocol.ts";

/** How long the exec client may take to end after its input closed. */
const CLIENT_GRACE_MS = 3000;

/** The places the tools inside use, as they are named inside. */
function insideDirs(container: Container, readOnly: boolean): ToolDirs {
  return {
    workspace: container.workspace,
    cache: INSIDE_TEMP,
    temp: INSIDE_TEMP,
    code: `${INSIDE_ROOT}`,
    readOnly,
  };
}

/** A starter that runs the tool host inside `container`. */
export function containerLinkStarter(container: Container): LinkStarter {
  return (boundary, _entry, events) => {
    // The host started with the container, if it is still there (its boot message sent): the
    // first link's Deno and worker have loaded meanwhile. Else a new one.
    const early = container.takeHost?.();
    const child = early ?? spawnChild(
      containerExecLaunch(container.cli, container.id, {
        argv: container.inside.argv,
        env: container.inside.env,
        workdir: container.workspace,
        interactive: true,
      }),
      { stdin: "piped", detached: true },
    );
    const link = linkProcess(child, events, "the container's tool host", (status, stderr) => {
      // The runtime's own banners and warnings are not why it ended.
      const said = stderr.split("\n").filter((l) => !/^\W*(Warning|│|╭|╰)/.test(l)).slice(-5)
        .join(" ");
      return `the tool host in container ${container.id.slice(0, 12)} exited (${
        describeStatus(status)
      })${said ? `: ${said}` : ""}; the container may have stopped`;
    });
    const write = link.send;
    // The worker's permissions inside: everything in the container but the network (Deno's
    // fence stays a second one; the runtime's `--network none` is the first).
    if (!early) write(INSIDE_BOOT satisfies BootMessage);
    const readOnly = boundary.dirs.readOnly ?? false;
    return {
      post: (message: HostRequest) => {
        if (message.type === "init") {
          // The tools inside are built on the container's paths, and the container is their
          // sandbox: no bubblewrap in there.
          const settings = {
            ...message.context.settings,
            sandbox: "none" as const,
            tempDir: INSIDE_TEMP,
            ckgDir: `${INSIDE_TEMP}/ckg`,
            bwrapPath: undefined,
            // Under a network list, the container's forwarder serves its shells (src/container).
            networkForwarded: container.proxied ?? false,
          };
          write({
            ...message,
            context: { ...message.context, workspace: container.workspace, settings },
            dirs: insideDirs(container, readOnly),
          });
          return;
        }
        write(message);
      },
      terminate: () => {
        link.quiet();
        // Closing its input ends the relay inside (and its worker), and then the client; a
        // client that does not follow soon is killed (the container's end removes the rest).
        link.closeInput();
        const timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch {
            // Already gone.
          }
        }, CLIENT_GRACE_MS);
        Deno.unrefTimer(timer);
        child.status.then(() => clearTimeout(timer));
      },
      reportsHostPids: false,
    };
  };
}
