import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const src = join(root, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Each file's imports of other files of src/ (type-only imports included: they tie files too). */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles(src);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = info.importedFiles
      .map((i) => i.fileName)
      .filter((spec) => spec.startsWith("."))
      .map((spec) => resolve(dirname(file), spec))
      .flatMap((path) =>
        [path, `${path}.ts`, join(path, "index.ts")].filter((p) => known.has(p)).slice(0, 1),
      );
    graph.set(file, targets);
  }
  return graph;
}

/** Every cycle's files, as one path each (depth-first search, white / grey / black). */
function cycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, "open" | "done">();
  const found: string[][] = [];
  const visit = (file: string, path: string[]) => {
    state.set(file, "open");
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next, [...path, next]);
    }
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file, [file]);
  return found.map((c) => c.map((f) => relative(root, f)));
}

describe("the import graph of src/ (ARCHITECTURE.md)", () => {
  it("has no cycle", () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(50);
    expect(cycles(graph)).toEqual([]);
  });

  it("finds a cycle where there is one", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(cycles(graph)).toEqual([["a", "b", "c", "a"]]);
  });

  it("keeps domain folders free of HTTP: nothing below routes/ imports hono or throws ApiError", () => {
    const domain = [
      "buy",
      "sales",
      "recovery",
      "orders",
      "limits",
      "catalog",
      "stock",
      "memory",
      "realtime",
      "stores",
      "db",
      "identity",
    ];
    const offenders = [...importGraph().keys()]
      .filter((f) => domain.includes(relative(src, f).split("/")[0] ?? ""))
      .filter((f) => /from "hono|new ApiError\(/.test(readFileSync(f, "utf8")))
      .map((f) => relative(root, f));
    expect(offenders).toEqual([]);
  });
});
