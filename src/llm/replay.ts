/** A client that answers with the responses recorded in a trajectory, in order. */
import type { Trajectory } from "../trajectory/recorder.ts";
import type { LLMClient, LLMResponse } from "./types.ts";

/** Replays a recorded run's model responses; no network, no API key. */
export class ReplayClient implements LLMClient {
  readonly provider: string;
  readonly model: string;
  #next = 0;

  constructor(private readonly trajectory: Trajectory) {
    this.provider = trajectory.provider;
    this.model = trajectory.model;
  }

  /** How many recorded responses have been used. */
  get used(): number {
    return this.#next;
  }

  chat(): Promise<LLMResponse> {
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
    return Promise.resolve(structuredClone(interaction.response));
  }
}
