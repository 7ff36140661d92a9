/**
 * npm:yaml for the config readers, loaded when a YAML file is first parsed instead of at start:
 * its CommonJS build, with the part of Node's layer that loads it, costs more than the rest of a
 * start without a config file (issue 51). Every reader awaits `loadYaml()` once it has a file's
 * text (or is about to write one), then parses synchronously through the same names npm:yaml
 * exports; using them before is a bug, reported as one.
 */
import type * as Yaml from "yaml";

let lib: typeof Yaml | undefined;

/** Loads npm:yaml (once); the names below work from then on. */
export async function loadYaml(): Promise<void> {
  if (lib) return;
  const module = await import("yaml");
  // In the one-file bundle a split-off CommonJS package exports only `module.exports`, as default.
  lib = "parseDocument" in module ? module : (module as { default: typeof Yaml }).default;
}

function yaml(): typeof Yaml {
  if (!lib) throw new Error("internal error: a config file was parsed before loadYaml()");
  return lib;
}

/** A class of npm:yaml, constructed from the loaded module (`new LineCounter()`). */
function lazyClass<C extends object>(get: () => C): C {
  return new Proxy(function () {} as unknown as C, {
    construct: (_, args) => Reflect.construct(get() as unknown as new () => object, args),
  });
}

export const parseDocument =
  ((...args: Parameters<typeof Yaml.parseDocument>) =>
    yaml().parseDocument(...args)) as typeof Yaml.parseDocument;
export const isMap = ((node: unknown) => yaml().isMap(node)) as typeof Yaml.isMap;
export const isScalar = ((node: unknown) => yaml().isScalar(node)) as typeof Yaml.isScalar;
export const visit = Object.defineProperties(
  (...args: Parameters<typeof Yaml.visit>) => yaml().visit(...args),
  {
    BREAK: { get: () => yaml().visit.BREAK },
    SKIP: { get: () => yaml().visit.SKIP },
    REMOVE: { get: () => yaml().visit.REMOVE },
  },
) as unknown as typeof Yaml.visit;
export type Document = Yaml.Document;
export const Document = lazyClass(() => yaml().Document);
export type LineCounter = Yaml.LineCounter;
export const LineCounter = lazyClass(() => yaml().LineCounter);
