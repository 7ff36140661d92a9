/**
 * `/compact` in a resumed session before its first turn: such a session has no file of its own
 * yet, so the compaction goes into the file of the session it goes on from.
 */
import type { LLMMessage } from "../../llm/types.ts";
import { outputMasker } from "../../policy/secrets.ts";
import type { Resumed } from "../resume.ts";

/**
 * Records in the resumed session's own file that /compact replaced its conversation by
 * `messages`: a resumed session has no file of its own before its first turn, and the compaction
 * must outlive leaving now (`deft -c`, `-r` and `deft sessions` go on from the summary). The
 * file is written whole at once (atomically, masked as the recorder masks), its mtime making it
 * the workspace's latest session.
 */
export function recordResumedCompaction(resumed: Resumed, messages: readonly LLMMessage[]): void {
  const trajectory = resumed.trajectory;
  (trajectory.compactions ??= []).push({
    time: new Date().toISOString(),
    at_interactions: trajectory.llm_interactions.length,
    at_rewinds: trajectory.rewinds?.length ?? 0,
    messages: [...messages],
  });
  const text = JSON.stringify(outputMasker().maskDeep(trajectory), null, 2);
  const temp = `${resumed.path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  Deno.writeTextFileSync(temp, text + "\n", { mode: 0o600 });
  try {
    Deno.renameSync(temp, resumed.path);
  } catch (e) {
    Deno.removeSync(temp);
    throw e;
  }
}
