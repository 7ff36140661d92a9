/**
 * References, callers and subclasses in every language, on small sources whose expected answers
 * are written here by hand.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../../src/ckg/graph.ts";
import type { EdgeResult } from "../../../src/ckg/edge_search.ts";
import { tempDir, writeTree } from "../../helpers/ckg.ts";
import { pythonStdlib } from "../../helpers/inputs.ts";

const SOURCES: Record<string, string> = {
  "py/shapes.py": `import math
from os.path import join

class Shape:
    def area(self):
        return 0

class Square(Shape):
    def area(self):
        return math.pow(self.side, 2)

class Cube(Square, metaclass=type):
    pass

def total(shapes):
    return sum(s.area() for s in shapes)

def report(shapes):
    print(total(shapes))
    return join("a", "b")
`,
  "java/Zoo.java": `import java.util.List;

interface Animal { String sound(); }
class Dog implements Animal {
  public String sound() { return bark(); }
  String bark() { return "woof"; }
}
class Puppy extends Dog {
  void play() { this.bark(); new Dog(); }
}
`,
  "ts/app.ts": `import { Base } from "../../ckg/base";
interface Named { name: string }
export class Widget extends Base implements Named {
  name = "w";
  render(): string { return this.paint(1); }
  paint(n: number): string { return String(n); }
}
class Button extends Widget {
  click() { helper(); this.render(); }
}
function helper() { return new Widget(); }
`,
  "js/app.js": `class Base {}
class Child extends Base {
  run() { return compute(2); }
}
function compute(x) { return x * 2; }
const top = compute(3);
`,
  "c/list.c": `struct node { int value; struct node *next; };
static int length(struct node *n) {
  int k = 0;
  while (n) { k++; n = n->next; }
  return k;
}
int sum(struct node *n) {
  int t = 0;
  for (int i = 0; i < length(n); i++) { t += n->value; n = n->next; }
  return t;
}
`,
  "cpp/shapes.cpp": `class Shape { public: virtual double area() const = 0; };
class Circle : public Shape {
 public:
  double area() const override { return scale(3.14); }
  double scale(double x) const { return x * r; }
  double r;
};
template <typename T> class Holder : public Circle, private std::vector<T> {};
double measure(const Shape& s) { return s.area(); }
`,
  "go/zoo.go": `package zoo

type Animal interface { Sound() string }
type Named interface {
	Animal
	Name() string
}
type Base struct{ id int }
type Dog struct {
	Base
	name string
}
func (d *Dog) Sound() string { return bark(d) }
func bark(d *Dog) string { return d.name }
`,
  "rust/zoo.rs": `use std::fmt::Display;
trait Animal { fn sound(&self) -> String; }
trait Pet: Animal + Clone {}
struct Dog { name: String }
impl Animal for Dog {
    fn sound(&self) -> String { bark(&self.name) }
}
fn bark(name: &str) -> String { format!("{} woofs", name) }
`,
};

async function withGraph(fn: (graph: CodeGraph, root: string) => Promise<void>): Promise<void> {
  await using dir = await tempDir();
  const cache = await tempDir("deft-ckg-cache-");
  try {
    await writeTree(dir.path, SOURCES);
    const graph = CodeGraph.open(dir.path, { ckgDir: cache.path, workers: 0 });
    try {
      await fn(graph, dir.path);
    } finally {
      graph.close();
    }
  } finally {
    await cache.remove();
  }
}

function subclasses(r: EdgeResult): string[] {
  return r.subclasses.map((m) => `${m.path}:${m.name}${m.depth > 1 ? ` via ${m.base}` : ""}`);
}

function callers(r: EdgeResult): string[] {
  return r.callers.map((m) =>
    `${m.symbol.path}:${m.symbol.className ? `${m.symbol.className}.` : ""}${m.symbol.name}@${
      m.lines.join(",")
    }`
  );
}

function references(r: EdgeResult): string[] {
  return r.references.map((m) =>
    `${m.ref.path}:${m.ref.line} ${m.ref.kind}${m.enclosing ? ` in ${m.enclosing.name}` : ""}`
  );
}

const opts = { body: false };

Deno.test("edges: subclasses in every language (bases, extends/implements, base lists, embedding, impl)", async () => {
  await withGraph(async (graph) => {
    const sub = async (name: string, indirect = false) =>
      subclasses(
        await graph.searchEdges("search_subclasses", name, undefined, {
          ...opts,
          indirect,
        }),
      );
    assert.deepEqual(await sub("Shape"), [
      "cpp/shapes.cpp:Circle",
      "py/shapes.py:Square",
    ]);
    assert.deepEqual(await sub("Shape", true), [
      "cpp/shapes.cpp:Circle",
      "py/shapes.py:Square",
      "cpp/shapes.cpp:Holder via Circle",
      "py/shapes.py:Cube via Square",
    ]);
    // `metaclass=type` is not a base.
    assert.deepEqual(await sub("type"), []);
    assert.deepEqual(await sub("Animal"), [
      "go/zoo.go:Named",
      "java/Zoo.java:Dog",
      "rust/zoo.rs:Pet",
      "rust/zoo.rs:Dog",
    ]);
    assert.deepEqual(await sub("Dog"), ["java/Zoo.java:Puppy"]);
    assert.deepEqual(await sub("Base"), ["go/zoo.go:Dog", "js/app.js:Child", "ts/app.ts:Widget"]);
    assert.deepEqual(await sub("Named"), ["ts/app.ts:Widget"]);
    assert.deepEqual(await sub("Widget"), ["ts/app.ts:Button"]);
    assert.deepEqual(await sub("vector"), ["cpp/shapes.cpp:Holder"]);
    assert.deepEqual(await sub("Clone"), ["rust/zoo.rs:Pet"]);
  });
});

Deno.test("edges: callers are the functions whose bodies call the name", async () => {
  await withGraph(async (graph) => {
    const call = async (name: string) =>
      callers(await graph.searchEdges("search_callers", name, undefined, opts));
    assert.deepEqual(await call("total"), ["py/shapes.py:report@19"]);
    assert.deepEqual(await call("area"), [
      "cpp/shapes.cpp:measure@9",
      "py/shapes.py:total@16",
    ]);
    assert.deepEqual(await call("bark"), [
      "go/zoo.go:Dog.Sound@13",
      "java/Zoo.java:Dog.sound@5",
      "java/Zoo.java:Puppy.play@9",
      "rust/zoo.rs:Dog.sound@6",
    ]);
    assert.deepEqual(await call("paint"), ["ts/app.ts:Widget.render@5"]);
    assert.deepEqual(await call("helper"), ["ts/app.ts:Button.click@9"]);
    // `new Widget()` constructs: a call of the class.
    assert.deepEqual(await call("Widget"), ["ts/app.ts:helper@11"]);
    assert.deepEqual(await call("Dog"), ["java/Zoo.java:Puppy.play@9"]);
    // The call at the top level of app.js has no enclosing function.
    assert.deepEqual(await call("compute"), ["js/app.js:Child.run@3"]);
    assert.deepEqual(await call("length"), ["c/list.c:sum@9"]);
    assert.deepEqual(await call("scale"), ["cpp/shapes.cpp:Circle.area@4"]);
    assert.deepEqual(await call("nobody"), []);
  });
});

Deno.test("edges: references list calls, attributes, imports and bases with what encloses them", async () => {
  await withGraph(async (graph) => {
    const refs = async (name: string) =>
      references(await graph.searchEdges("search_references", name, undefined, opts));
    assert.deepEqual(await refs("join"), [
      "py/shapes.py:2 import",
      "py/shapes.py:20 call in report",
    ]);
    assert.deepEqual(await refs("side"), ["py/shapes.py:10 attr in area"]);
    assert.deepEqual(await refs("next"), ["c/list.c:4 attr in length", "c/list.c:9 attr in sum"]);
    assert.deepEqual(await refs("compute"), ["js/app.js:3 call in run", "js/app.js:6 call"]);
    assert.deepEqual(await refs("Base"), [
      "go/zoo.go:10 base in Dog",
      "js/app.js:2 base in Child",
      "ts/app.ts:1 import",
      "ts/app.ts:3 base in Widget",
    ]);
    assert.deepEqual(await refs("name"), [
      "go/zoo.go:14 attr in bark",
      "rust/zoo.rs:6 attr in sound",
    ]);
    assert.deepEqual(await refs("Display"), ["rust/zoo.rs:1 import"]);
    assert.deepEqual(await refs("List"), ["java/Zoo.java:1 import"]);
  });
});

Deno.test("edges: over 512 KB, the first indirect subclass search follows the chain into a third file", async () => {
  await using dir = await tempDir();
  const cache = await tempDir("deft-ckg-cache-");
  // Enough source for the prefilter (over 512 KB), none of it naming the classes.
  const filler: Record<string, string> = {};
  for (let i = 0; i < 12; i++) {
    filler[`pad/m${i}.py`] = Array.from(
      { length: 1500 },
      (_, j) => `def f${i}_${j}(x):\n    return x + ${j}\n`,
    ).join("");
  }
  await writeTree(dir.path, {
    ...filler,
    "base.py": "class Base:\n    pass\n",
    "mid.py": "from base import Base\n\nclass Mid(Base):\n    pass\n",
    // Names Mid only: the files holding "Base" do not include it.
    "leaf.py": "from mid import Mid\n\nclass Leaf(Mid):\n    pass\n",
  });
  const graph = CodeGraph.open(dir.path, { ckgDir: cache.path, workers: 0 });
  try {
    const first = await graph.searchEdges("search_subclasses", "Base", undefined, {
      ...opts,
      indirect: true,
    });
    assert.deepEqual(subclasses(first), ["mid.py:Mid", "leaf.py:Leaf via Mid"]);
    assert.ok(graph.totals().indexed < 12, `${graph.totals().indexed} files indexed: no prefilter`);
  } finally {
    graph.close();
    await cache.remove();
  }
});

Deno.test("edges: on the Python standard library, answered first from the files holding the name", async () => {
  const STDLIB = pythonStdlib();
  const cache = await tempDir("deft-ckg-cache-");
  const graph = CodeGraph.open(STDLIB, { ckgDir: cache.path });
  try {
    const callers = await graph.searchEdges("search_callers", "urlparse", undefined, opts);
    const names = callers.callers.map((m) => `${m.symbol.path}:${m.symbol.name}`);
    assert.ok(names.includes("urllib/parse.py:urljoin"), names.join(", "));

    const direct = await graph.searchEdges("search_subclasses", "HTTPException", undefined, opts);
    const inClient = direct.subclasses.filter((m) => m.path === "http/client.py").map((m) =>
      m.name
    );
    assert.deepEqual(inClient, [
      "NotConnected",
      "InvalidURL",
      "UnknownProtocol",
      "UnknownTransferEncoding",
      "UnimplementedFileMode",
      "IncompleteRead",
      "ImproperConnectionState",
      "BadStatusLine",
      "LineTooLong",
    ]);
    // RemoteDisconnected(ConnectionResetError, BadStatusLine) derives through BadStatusLine.
    assert.ok(!direct.subclasses.some((m) => m.name === "RemoteDisconnected"));
    const all = await graph.searchEdges("search_subclasses", "HTTPException", undefined, {
      ...opts,
      indirect: true,
    });
    const remote = all.subclasses.find((m) => m.name === "RemoteDisconnected");
    assert.equal(remote?.base, "BadStatusLine");
    assert.equal(remote?.depth, 2);
    // Only the files holding the names were parsed: the rest waits.
    assert.ok(graph.totals().indexed < 100, `${graph.totals().indexed} files indexed`);
  } finally {
    graph.close();
    await cache.remove();
  }
});
