/**
 * Where a session's tools act: a folder on the host, or a container's workspace. One interface for
 * both, so the session and the commands ask "which settings do the tools get", "how does their
 * host start", "which instructions", "is it a repository", "record its state", "what is its
 * patch", "where do checkpoints go", "read the file the user named", "which sessions are this
 * place's", "close it" without asking which kind it is. The kind is chosen once, from the flags
 * (./workplace_open.ts); the two kinds are ./workplace_host.ts and ./workplace_container.ts. Both
 * run the same patch algorithm (./patch.ts) over a git place (the host's git, in the sandbox when
 * there is one, or git through the container's `exec`), so every filter applies in both.
 */
export type { HookPlace, PlaceRead, Workplace } from "./workplace_types.ts";
export { hostWorkplace } from "./workplace_host.ts";
export { containerWorkplace, movedContainerNote } from "./workplace_container.ts";
export { openWorkplace, wantsContainer, type WorkplaceOptions } from "./workplace_open.ts";
