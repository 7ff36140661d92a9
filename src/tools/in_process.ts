/**
 * Tools run in this process. Each implementation is built from its catalog entry on the tool's
 * first call, so a process loads only the modules of the tools it uses (the editor's alone is
 * a few dozen files), then serves every call until the tool is closed. Deft's main process runs
 * the pure tools here; the tool host's worker runs its own tools here.
 */
import type { CallPlan, Tool, ToolContext, ToolExecResult } from "./base.ts";
import type { ToolClass } from "./catalog_types.ts";
import { loadTool } from "./loaders.ts";
import type { Host } from "./stand_in.ts";

/** A host that runs the tools named at its construction in the current process. */
export class InProcessHost implements Host {
  readonly #names: ReadonlySet<string>;
  readonly #built = new Map<string, Promise<Tool>>();

  /** `load` finds a tool's implementation (default: its loader, loaders.ts). */
  constructor(
    private readonly context: ToolContext,
    names: readonly string[],
    private readonly load: (name: string) => Promise<ToolClass> = loadTool,
  ) {
    this.#names = new Set(names);
  }

  /** Runs one call; a throw from the tool reaches the caller. */
  async call(
    name: string,
    args: Record<string, unknown>,
    plan?: CallPlan,
  ): Promise<ToolExecResult> {
    return await (await this.#tool(name)).execute(args, plan);
  }

  /** Closes the tool if it was built; a tool never called holds nothing. */
  async close(name: string): Promise<void> {
    const built = this.#built.get(name);
    this.#built.delete(name);
    const tool = await built?.catch(() => undefined);
    await tool?.close();
  }

  /** Closes every tool, even when some fail to close; returns what went wrong. */
  async closeAll(): Promise<string[]> {
    const names = [...this.#built.keys()];
    const outcomes = await Promise.allSettled(names.map((name) => this.close(name)));
    return outcomes.flatMap((o, i) =>
      o.status === "rejected" ? [`closing tool '${names[i]}' failed: ${String(o.reason)}`] : []
    );
  }

  #tool(name: string): Promise<Tool> {
    let built = this.#built.get(name);
    if (built) return built;
    if (!this.#names.has(name)) {
      return Promise.reject(new Error(`the tool '${name}' does not run here`));
    }
    const building = this.load(name).then((Implementation) => new Implementation(this.context));
    // A module that failed to load is tried again on the next call.
    building.catch(() => {
      if (this.#built.get(name) === building) this.#built.delete(name);
    });
    built = building;
    this.#built.set(name, built);
    return built;
  }
}
