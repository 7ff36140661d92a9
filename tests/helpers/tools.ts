/** Test doubles for the tool core. */
import {
  ok,
  Tool,
  type ToolContext,
  type ToolExecResult,
  type ToolParameter,
} from "../../src/tools/base.ts";

/** A context rooted at `workspace` (default: the temp dir) for tests. */
export function testContext(workspace = "/tmp", provider = "anthropic"): ToolContext {
  return { provider, workspace, settings: {} };
}

/** A tool whose behaviour a test sets with a function. */
export class FakeTool extends Tool {
  readonly description = "A tool for tests.";
  closed = false;

  constructor(
    readonly name: string,
    readonly parameters: readonly ToolParameter[],
    readonly run: (args: Record<string, unknown>) => Promise<ToolExecResult> | ToolExecResult =
      () => ok("ran"),
    readonly onClose: () => Promise<void> = () => Promise.resolve(),
    context: ToolContext = testContext(),
  ) {
    super(context);
  }

  execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    return Promise.resolve(this.run(args));
  }

  override async close(): Promise<void> {
    this.closed = true;
    await this.onClose();
  }
}
