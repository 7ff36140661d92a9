/**
 * A session's settings as the client shows them: the approval mode (ACP's session modes, and the
 * same as a config option of category `mode`) and the model (a config option of category
 * `model`, model.ts). Clients that read config options use those; older ones the modes.
 */
import type * as acp from "@agentclientprotocol/sdk";
import { APPROVAL_MODES, type ApprovalMode } from "../gate/modes.ts";
import type { ModelChoice } from "./model.ts";

const MODE_NAMES: Record<ApprovalMode, [string, string]> = {
  never: ["Never ask", "every tool call runs without asking"],
  commands: ["Ask before commands", "asks before bash commands, except read-only ones"],
  all: ["Ask before commands and edits", "also asks before every edit and unknown tool call"],
};

/** The session modes: the approval modes. */
export function modeState(mode: ApprovalMode): acp.SessionModeState {
  return {
    currentModeId: mode,
    availableModes: APPROVAL_MODES.map((id) => ({
      id,
      name: MODE_NAMES[id][0],
      description: MODE_NAMES[id][1],
    })),
  };
}

/** The config option ids Deft offers. */
export const MODE_OPTION = "mode";
export const MODEL_OPTION = "model";

/** The session's config options: its approval mode and its model. */
export function configOptions(
  mode: ApprovalMode,
  model: string,
  models: readonly ModelChoice[],
): acp.SessionConfigOption[] {
  return [
    {
      id: MODE_OPTION,
      name: "Approval",
      description: "when Deft asks before a tool call",
      category: "mode",
      type: "select",
      currentValue: mode,
      options: APPROVAL_MODES.map((id) => ({
        value: id,
        name: MODE_NAMES[id][0],
        description: MODE_NAMES[id][1],
      })),
    },
    {
      id: MODEL_OPTION,
      name: "Model",
      description: "the model of the next prompts",
      category: "model",
      type: "select",
      currentValue: model,
      options: models.map((m) => ({ value: m.value, name: m.name, description: m.description })),
    },
  ];
}
