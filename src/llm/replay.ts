/**
 * A client that answers with the responses recorded in a trajectory, in order. When the replay
 * runs in another directory than the recording, the recorded workspace path in the responses is
 * mapped to the new one, so a recording can be replayed in any checkout.
 */
import type { LLMClient, LLMMessage, LLMResponse, TextListener } from "./types.ts";
import type { ToolDefinition } from "../tools/schema.ts";

/** What a replay reads of a recorded run (a trajectory, trajectory/recorder.ts, has this shape). */
export interface Recording {
  provider: string;
  model: string;
  /** The workspace the recording ran in. */
  working_dir?: string | null;
  llm_interactions: readonly { response: LLMResponse }[];
}

/** Replays a recorded run's model responses; no network, no API key. */
export class ReplayClient implements LLMClient {
  readonly provider: string;
  readonly model: string;
  #next = 0;

  constructor(private readonly trajectory: Recording, private readonly workspace?: string) {
    this.provider = trajectory.provider;
    this.model = trajectory.model;
  }

  /** How many recorded responses have been used. */
  get used(): number {
    return this.#next;
  }

  chat(
    _messages: readonly LLMMessage[],
    _tools: readonly ToolDefinition[],
    _signal?: AbortSignal,
    onText?: TextListener,
  ): Promise<LLMResponse> {
    const interaction = this.trajectory.llm_interactions[this.#next];
    if (!interaction) {
      return Promise.reject(
        new Error(
          `the recording has no more model responses (it holds ${this.#next}); ` +
            `the replayed run went further than the recorded one`,
        ),
      );
    }
    this.#next++;
    const response = structuredClone(interaction.response);
    const from = this.trajectory.working_dir;
    const to = this.workspace;
    const replayed = from && to && from !== to ? replacePath(response, from, to) : response;
    // The recorded answer arrives whole; a console that shows text still gets to show it.
    if (onText && replayed.content) onText(replayed.content);
    return Promise.resolve(replayed);
  }
}

/** `value` with every occurrence of path `from` in its strings replaced by `to`. */
export function replacePath<T>(value: T, from: string, to: string): T {
  if (typeof value === "string") return value.replaceAll(from, to) as T;
  if (Array.isArray(value)) return value.map((v) => replacePath(v, from, to)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, replacePath(v, from, to)]),
    ) as T;
  }
  return value;
}
