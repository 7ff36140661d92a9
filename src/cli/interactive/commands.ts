/**
 * The slash commands of `deft interactive`. They act on the session and never reach the model; an
 * unknown one is an error, not a task.
 */
import { APPROVAL_MODES, isApprovalMode } from "../../gate/modes.ts";
import { createClient } from "../../llm/client.ts";
import type { ApprovalRule } from "../../config/approval_rules.ts";
import { ruleLine } from "../approvals.ts";
import type { LLMMessage } from "../../llm/types.ts";
import type { TrajectoryRecorder } from "../../trajectory/recorder.ts";
import { type Session, sessionPatch } from "../../agent/session.ts";
import { type Resumed, resumedContainerNote, resumeTarget, sessionPlace } from "../resume.ts";
import { recordResumedCompaction } from "./resumed_compaction.ts";
import { doc, helpText } from "./help_text.ts";
import {
  compactConversation,
  costReport,
  endTakenBackShells,
  initAgentsFile,
  undoLastTurn,
} from "./turn_commands.ts";

/** What a command may read and change. */
export interface CommandContext {
  session: Session;
  conversation: LLMMessage[];
  recorder?: TrajectoryRecorder;
  turns: number;
  tokens: number;
  /**
   * The earlier session this conversation goes on from, while it has no file of its own (no
   * turn yet): where /compact records the compacted conversation.
   */
  resumed?: Resumed;
  /** Starts a new conversation; `from` fills it with a resumed one (`resumed`: not gone on yet). */
  reset(
    from?: {
      conversation: LLMMessage[];
      link: { session_id: string | null; path: string };
      resumed?: Resumed;
    },
  ): void;
  write(text: string): void;
  /** Asks a question with choices to walk (on a terminal); the answer, or null. */
  choose?(question: string, options: string[]): Promise<string | null>;
  /** Asks about the rows just written above it, ↑/↓ marking one (on a terminal). */
  select?(question: string, rows: string[]): Promise<string | null>;
  /** Lets the user pick one of the workspace's sessions (on a terminal): its id, or undefined. */
  pick?(): Promise<string | undefined>;
}

/** What the loop does after a command. */
export type CommandOutcome = "continue" | "exit";

interface SlashCommand {
  name: string;
  usage: string;
  help: string;
  run(ctx: CommandContext, arg: string): Promise<CommandOutcome | void> | CommandOutcome | void;
}

const COMMANDS: SlashCommand[] = [
  {
    ...doc("help"),
    run: (ctx) => ctx.write(helpText()),
  },
  {
    ...doc("status"),
    run: async (ctx) => {
      const { config, workspace, approval, instructions, executor } = ctx.session;
      const background = await backgroundLines(ctx.session);
      ctx.write([
        `provider:     ${config.model.provider.provider}`,
        `model:        ${config.model.settings.model}`,
        `workspace:    ${workspace}`,
        `approval:     ${approval?.mode ?? "never"}`,
        `conversation: ${ctx.conversation.length} message(s), ${ctx.turns} turn(s)`,
        `tokens used:  ${ctx.tokens}`,
        `session:      ${ctx.recorder?.data.session_id ?? "(not started)"}`,
        `trajectory:   ${ctx.recorder?.path ?? "(written at the first turn)"}`,
        `instructions: ${instructions.files.map((f) => f.path).join(", ") || "(none)"}`,
        `tools:        ${executor.tools.map((t) => t.name).join(", ")}`,
        `config:       ${config.configPath ?? "(defaults)"}`,
        ...background,
        ...approvalRuleLines(ctx.session.approvalRules?.list() ?? []),
      ].join("\n"));
    },
  },
  {
    ...doc("clear"),
    run: (ctx) => {
      ctx.reset();
      // SessionStart hooks run again at the next prompt, told `source: "clear"`.
      ctx.session.hooksRestart = "clear";
      ctx.write("new conversation: the model no longer sees the earlier turns.");
    },
  },
  {
    ...doc("diff"),
    run: async (ctx) => {
      try {
        const patch = await sessionPatch(ctx.session);
        ctx.write(patch.trim() === "" ? "(no changes, or not a git repository)" : patch);
      } catch (e) {
        ctx.write(`cannot compute the diff: ${(e as Error).message}`);
      }
    },
  },
  {
    ...doc("undo"),
    run: (ctx) => undoLastTurn(ctx),
  },
  {
    ...doc("rewind"),
    run: async (ctx, arg) => {
      const { rewindInteractive } = await import("../rewind.ts");
      const rewinds = ctx.recorder?.data.rewinds?.length ?? 0;
      await rewindInteractive(ctx, arg);
      await endTakenBackShells(ctx, rewinds);
    },
  },
  {
    ...doc("compact"),
    run: async (ctx, arg) => {
      try {
        await compactConversation(ctx, (conversation) => {
          ctx.session.hooksRestart = "compact";
          // Recorded at once, so leaving now still resumes the compacted conversation; the next
          // turn records a new trajectory that goes on from this one.
          const recorder = ctx.recorder;
          if (!recorder) {
            // Resumed, before its first turn: into the file of the session it goes on from.
            if (ctx.resumed) recordResumedCompaction(ctx.resumed, conversation);
            ctx.conversation = conversation;
          } else {
            recorder.recordCompaction(conversation);
            const link = {
              session_id: recorder.data.session_id ?? null,
              path: recorder.path,
              by: "compact" as const,
            };
            ctx.reset({ conversation, link });
          }
        }, arg);
      } catch (e) {
        ctx.write(`cannot compact: ${(e as Error).message} (the conversation is unchanged)`);
      }
    },
  },
  {
    ...doc("init"),
    run: async (ctx) => {
      try {
        await initAgentsFile(ctx);
      } catch (e) {
        ctx.write(`/init failed: ${(e as Error).message}`);
      }
    },
  },
  {
    ...doc("cost"),
    run: (ctx) => ctx.write(costReport(ctx.session)),
  },
  {
    ...doc("model"),
    run: (ctx, arg) => {
      const { config } = ctx.session;
      if (arg === "") {
        ctx.write(`model: ${config.model.provider.provider}/${config.model.settings.model}`);
        return;
      }
      config.model = { ...config.model, settings: { ...config.model.settings, model: arg } };
      ctx.session.client = createClient(config.model);
      ctx.write(`model: ${config.model.provider.provider}/${arg} from the next turn on.`);
    },
  },
  {
    ...doc("approval"),
    run: (ctx, arg) => {
      const gate = ctx.session.approval;
      if (arg === "") {
        ctx.write(`approval: ${gate?.mode ?? "never"}`);
        return;
      }
      if (!isApprovalMode(arg)) {
        ctx.write(`unknown approval mode '${arg}'; use one of ${APPROVAL_MODES.join(", ")}.`);
        return;
      }
      if (!gate) {
        ctx.write(
          "there is no terminal to ask on, so this session runs every call unasked; start " +
            "Deft from a terminal to use approvals.",
        );
        return;
      }
      gate.mode = arg;
      ctx.write(`approval: ${arg}`);
    },
  },
  {
    ...doc("resume"),
    run: async (ctx, arg) => {
      try {
        let id: string | undefined = arg;
        if (arg === "") {
          if (!ctx.pick) {
            ctx.write("give the session's id: /resume ID (deft sessions lists them).");
            return;
          }
          id = await ctx.pick();
          if (id === undefined) return;
        }
        const place = sessionPlace(ctx.session);
        const resumed = await resumeTarget({ resume: id }, place);
        if (!resumed) return;
        const note = resumedContainerNote(resumed, place);
        if (note) ctx.write(note);
        ctx.reset({ conversation: resumed.conversation, link: resumed.link, resumed });
        ctx.session.hooksRestart = "resume";
        ctx.write(
          `resumed session ${resumed.link.session_id}: ${resumed.conversation.length} ` +
            `message(s); type the next prompt.`,
        );
      } catch (e) {
        ctx.write((e as Error).message);
      }
    },
  },
  {
    ...doc("exit"),
    run: () => "exit",
  },
  { ...doc("quit"), run: () => "exit" },
];

/** The commands with their usage and help (`deft acp` advertises some of them). */
export const slashCommands = (): readonly Omit<SlashCommand, "run">[] => COMMANDS;

export { helpText };

/** Whether `input` is a slash command: `/word` first (a path such as `/tmp/x` is a prompt). */
export function isSlashCommand(input: string): boolean {
  return /^\/[A-Za-z][\w-]*(\s|$)/.test(input.trim());
}

/** Runs the slash command in `input`; an unknown command is reported, never sent on. */
export async function runSlashCommand(
  input: string,
  ctx: CommandContext,
): Promise<CommandOutcome> {
  const [, name, arg] = /^\/(\S+)\s*([\s\S]*)$/.exec(input.trim()) ?? [];
  const command = COMMANDS.find((c) => c.name === name?.toLowerCase());
  if (!command) {
    ctx.write(
      `unknown command /${name}; commands: ${
        COMMANDS.map((c) => `/${c.name}`).join(" ")
      }. (Nothing was sent to the model.)`,
    );
    return "continue";
  }
  return (await command.run(ctx, arg.trim())) ?? "continue";
}

/** Whether `word` is a command's name without its slash (`clear` for /clear). */
export function isCommandName(word: string): boolean {
  const name = word.trim().toLowerCase();
  return COMMANDS.some((c) => c.name === name);
}

/**
 * The session's background shells for /status, one a line, as the executor's status look lists
 * them (it reads no output); nothing when no tool of the session holds background shells.
 */
async function backgroundLines(session: Session): Promise<string[]> {
  const [report] = await session.executor.status();
  if (!report) return [];
  const listed = report.result;
  const text = (listed.output ?? listed.error ?? "").trim();
  if (listed.error_code !== 0) return [`background:   (not known: ${text})`];
  if (text.startsWith("No background shells")) return ["background:   (none)"];
  return ["background:", ...text.split("\n").map((line) => `  ${line}`)];
}

/** The approval rules in force, strongest first, one a line, for /status. */
function approvalRuleLines(rules: readonly ApprovalRule[]): string[] {
  if (rules.length === 0) {
    return ["rules:        (none; deft approvals, or answer a → this project)"];
  }
  const order = ["deny", "ask", "allow"];
  const sorted = [...rules].sort((a, b) => order.indexOf(a.action) - order.indexOf(b.action));
  return ["rules:", ...sorted.map((r, i) => `  ${i + 1}. ${ruleLine(r)}`)];
}
