/**
 * Per-language fixtures: every definition the graph must find, with kind, owner, parent and
 * lines, and nothing else (prototypes are listed because classes show them; search skips them).
 */
import assert from "node:assert/strict";
import { describeSymbol, LANGS_DIR, symbolsOf } from "../helpers/ckg.ts";

const EXPECTED: Record<string, string[]> = {
  "shapes.py": [
    "function area_of 8-13",
    "function helper in area_of 9-12",
    "function deeper in helper 10-11",
    "function cached 16-18",
    "function fetch 21-22",
    "class Shape 25-39",
    "field sides @Shape 26-26",
    "field name @Shape 27-27",
    "method __init__ @Shape 29-30",
    "method area @Shape 32-33",
    "method unit @Shape 35-39",
    "function make in unit 37-38",
    "class Circle 42-54",
    "method __init__ @Circle 43-45",
    "method area @Circle 47-48",
    "class Meta 50-54",
    "field ordering @Meta 51-51",
    "method describe @Meta 53-54",
    "function main 58-59",
  ],
  "Shapes.java": [
    "class Shapes 5-51",
    "field count @Shapes 6-6",
    "field NAME @Shapes 7-7",
    "method Shapes @Shapes 9-11",
    "method add @Shapes 13-15",
    "method add @Shapes 17-19",
    "class Inner 21-23",
    "method innerMethod @Inner 22-22",
    "class.interface Visitor 25-29",
    "method visit @Visitor 26-26",
    "method done @Visitor 28-28",
    "class.enum Color 31-35",
    "field RED @Color 32-32",
    "field GREEN @Color 32-32",
    "method next @Color 34-34",
    "class.record Point 37-43",
    "field x @Point 37-37",
    "field y @Point 37-37",
    "method Point @Point 38-40",
    "method sum @Point 42-42",
    "method run @Shapes 45-50",
    "method run @Runnable 47-47",
    "class.annotation Marker 53-55",
    "method value @Marker 54-54",
  ],
  "geometry.c": [
    "class.struct point 3-6",
    "field x @point 4-4",
    "field y @point 5-5",
    "class.struct rect 8-10",
    "field w @rect 9-9",
    "class.struct node_t 12-14",
    "class.struct node 12-14",
    "field next @node 13-13",
    "class.union value 16-16",
    "field i @value 16-16",
    "field f @value 16-16",
    "class.enum color 18-18",
    "field RED @color 18-18",
    "field GREEN @color 18-18",
    "function add 24-26",
    "function name_of 28-30",
    "function get_handler 32-34",
    "function main 36-38",
  ],
  "shapes.hpp": [
    "class Shape 5-14",
    "prototype Shape @Shape 7-7",
    "prototype ~Shape @Shape 8-8",
    "prototype area @Shape 9-9",
    "method name @Shape 10-10",
    "field sides @Shape 11-11",
    "field name_ @Shape 13-13",
    "class.struct Point 16-19",
    "field x @Point 17-17",
    "method operator+ @Point 18-18",
    "class Circle 21-28",
    "prototype Circle @Circle 23-23",
    "prototype area @Circle 24-24",
    "prototype area @Circle 25-25",
    "field r_ @Circle 27-27",
    "class Box 30-35",
    "method get @Box 33-33",
    "field value @Box 34-34",
    "function free_area 37-37",
  ],
  "shapes.cpp": [
    "method Shape @Shape 3-3",
    "method ~Shape @Shape 4-4",
    "method area @Circle 6-6",
    "method area @Circle 7-7",
    "method Circle @Circle 10-10",
    "function max_of 13-14",
    "function main 16-19",
    "class.enum Color 21-21",
    "field Red @Color 21-21",
    "field Green @Color 21-21",
    "class.union Data 22-22",
    "field i @Data 22-22",
    "field f @Data 22-22",
  ],
  "shapes.go": [
    "class.interface Shape 5-8",
    "method Area @Shape 6-6",
    "method Perimeter @Shape 7-7",
    "class.struct Circle 10-13",
    "field R @Circle 11-11",
    "field name @Circle 12-12",
    "class.type Celsius 15-15",
    "class.struct Point 18-18",
    "field X @Point 18-18",
    "class.type ID 19-19",
    "method Area @Circle 22-22",
    "method Perimeter @Circle 24-26",
    "method First @Pair 28-28",
    "class.struct Pair 30-33",
    "field k @Pair 31-31",
    "field v @Pair 32-32",
    "function New 35-40",
    "function helper in New 36-36",
    "function other in New 37-37",
    "method String @Celsius 42-42",
  ],
  "shapes.rs": [
    "class.struct Point 3-6",
    "field x @Point 4-4",
    "field y @Point 5-5",
    "class.enum Shape 8-11",
    "field Circle @Shape 9-9",
    "field Square @Shape 10-10",
    "class.trait Area 13-18",
    "method area @Area 14-14",
    "method describe @Area 15-17",
    "method new @Point 21-26",
    "function clamp in new 22-24",
    "method area @Shape 30-35",
    "method get @Wrapper 39-41",
    "class.struct Wrapper 44-44",
    "method fmt @Point 47-49",
    "class.union Bits 52-55",
    "field i @Bits 53-53",
    "field f @Bits 54-54",
    "class.type Pair 57-57",
    "function helper 60-62",
    "function main 65-68",
  ],
  "widgets.jsx": [
    "function greet 3-8",
    "function inner in greet 4-6",
    "function gen 10-12",
    "function arrow 14-14",
    "function expr 15-17",
    "function asyncArrow 18-21",
    "function nestedArrow in asyncArrow 19-19",
    "function exported 23-23",
    "function short 24-24",
    "function Widget 26-28",
    "method render @Widget 30-32",
    "function get 35-37",
    "function post 38-38",
    "function put 39-41",
    "class Counter 44-69",
    "field count @Counter 45-45",
    "field instances @Counter 46-46",
    "field #secret @Counter 47-47",
    "method handleClick @Counter 48-50",
    "method constructor @Counter 52-54",
    "method render @Counter 56-58",
    "method value @Counter 60-62",
    "method #privateMethod @Counter 64-64",
    "method create @Counter 66-68",
    "class Anon 71-73",
    "method method @Anon 72-72",
  ],
  "shapes.ts": [
    "class.interface Shape 1-5",
    "field name @Shape 2-2",
    "method area @Shape 3-3",
    "field sides @Shape 4-4",
    "class.type ShapeKind 7-7",
    "class.enum Color 9-12",
    "field Red @Color 10-10",
    "field Green @Color 11-11",
    "class Base 14-20",
    "field name @Base 15-15",
    "method compute @Base 16-16",
    "method area @Base 17-19",
    "class Circle 22-32",
    "field radius @Circle 23-23",
    "method constructor @Circle 24-27",
    "method compute @Circle 28-30",
    "method scale @Circle 31-31",
    "function overloaded 34-34",
    "function overloaded 35-35",
    "function overloaded 36-38",
    "function double 40-40",
    "function ambient 42-42",
    "function inside 45-47",
    "function outer 50-53",
    "function inner in outer 51-51",
  ],
  "app.tsx": [
    "class.type Props 3-3",
    "field label @Props 3-3",
    "function Button 5-5",
    "function App 7-10",
    "function handle in App 8-8",
    "class Legacy 12-16",
    "method render @Legacy 13-15",
  ],
};

for (const [file, expected] of Object.entries(EXPECTED)) {
  Deno.test(`extract: ${file} yields exactly the expected symbols`, async () => {
    const text = await Deno.readTextFile(LANGS_DIR + file);
    const actual = (await symbolsOf(file, text)).map(describeSymbol);
    assert.deepEqual(actual, expected);
  });
}

Deno.test("extract: bodies and signatures come from the source text", async () => {
  const text = await Deno.readTextFile(LANGS_DIR + "shapes.py");
  const symbols = await symbolsOf("shapes.py", text);
  const cached = symbols.find((s) => s.name === "cached")!;
  assert.equal(
    text.slice(cached.startOffset, cached.endOffset),
    "@functools.lru_cache(maxsize=None)\ndef cached(n):\n    return n",
  );
  assert.equal(cached.signature, "def cached(n)");
  const area = symbols.find((s) => s.name === "area" && s.className === "Shape")!;
  assert.equal(area.signature, "def area(self) -> float");
  const shape = symbols.find((s) => s.name === "Shape")!;
  assert.equal(symbols[area.parent], shape, "a method points at its class");
  const deeper = symbols.find((s) => s.name === "deeper")!;
  assert.equal(symbols[deeper.parent].name, "helper", "a nested function points at its parent");
});

Deno.test("extract: C++ out-of-class definitions belong to the class named by the qualifier", async () => {
  const text =
    "namespace a { namespace b {\ntemplate <typename T> struct Box { void put(T); };\n}}\n" +
    "template <typename T>\nvoid a::b::Box<T>::put(T value) {}\n" +
    "bool operator==(const P& l, const P& r) { return true; }\n" +
    "P& P::operator=(const P& o) { return *this; }\n";
  const lines = (await symbolsOf("box.hpp", text)).map(describeSymbol);
  assert.deepEqual(lines, [
    "class.struct Box 2-2",
    "prototype put @Box 2-2",
    "method put @Box 4-5",
    "function operator== 6-6",
    "method operator= @P 7-7",
  ]);
});

Deno.test("extract: offsets count UTF-16 code units, so non-ASCII text slices right", async () => {
  const text = "# café ☕ 𝄞\ndef naïve():\n    return '𝄞'\n\ndef after():\n    pass\n";
  const symbols = await symbolsOf("u.py", text);
  assert.deepEqual(symbols.map((s) => text.slice(s.startOffset, s.endOffset)), [
    "def naïve():\n    return '𝄞'",
    "def after():\n    pass",
  ]);
  assert.deepEqual(symbols.map((s) => s.name), ["naïve", "after"]);
});
