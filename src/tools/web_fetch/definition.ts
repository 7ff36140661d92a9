/** The model-facing definition of `web_fetch` (its implementation, tool.ts, loads on first call). */
import type { ToolDefinitionSource } from "../catalog_types.ts";

/** The model-facing definition of "web_fetch". */
export const WEB_FETCH: ToolDefinitionSource = {
  name: "web_fetch",
  description:
    "Fetch one http(s) page and read it as text (HTML is turned into readable text with links " +
    "kept). Only the hosts the user's network list allows can be fetched; redirects are checked " +
    "the same way. Large pages are cut; binary content (images, archives) is refused.",
  parameters: [
    {
      name: "url",
      type: "string",
      description: "The page's full URL, http:// or https://.",
      required: true,
    },
  ],
};
