import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const src = join(root, "src");

/**
 * ARCHITECTURE.md's floor plan, top floor first: each floor a list of src/ folders and top-level files.
 * A file imports from its own folder and from the floors below, never from a floor above, nor from
 * another folder of its own floor. The HTTP floors hold what speaks Hono (routes/ and what only the
 * routes use); every folder of the floors below them is free of HTTP.
 */
const HTTP_FLOORS = [
  ["runtime"],
  ["app.ts"],
  ["routes"],
  ["api", "responses"],
  ["middleware"],
  ["context.ts", "http"],
];
const DOMAIN_FLOORS = [
  ["buy", "realtime", "sales"],
  ["recovery"],
  ["payments"],
  ["orders"],
  ["webhooks", "room"],
  ["catalog", "limits", "identity"],
  ["stock"],
  ["services.ts"],
  ["stores"],
  ["memory", "db"],
  ["env.ts", "crypto", "ids.ts", "job-paths.ts"],
  ["errors.ts", "stream-defaults.ts", "ip-address.ts", "tracing.ts"],
];
const FLOORS = [...HTTP_FLOORS, ...DOMAIN_FLOORS];

const MEMORY_TYPES =
  "Memory holds finished values of the domain, typed by the modules that make them (type only: no code runs up)";

/** Imports that run up a floor or across one, each with its reason. Only type-only imports may be listed. */
const ALLOWED: Allowance[] = [
  { from: "memory/memory.ts", to: "catalog/sale-record.ts", why: MEMORY_TYPES },
  { from: "memory/memory.ts", to: "identity/key-set.ts", why: MEMORY_TYPES },
  { from: "memory/memory.ts", to: "orders/order-view.ts", why: MEMORY_TYPES },
  { from: "memory/memory.ts", to: "stock/room-step.ts", why: MEMORY_TYPES },
  { from: "memory/memory.ts", to: "stock/queued-order.ts", why: MEMORY_TYPES },
  {
    from: "services.ts",
    to: "payments/payment-provider.ts",
    why: "Services carries the payment provider the settings chose; the port is the payment corridor's own (type only)",
  },
];

/** One import of one file by another, both relative to src/; `typeOnly` when nothing of it is left at run time. */
type Edge = { from: string; to: string; typeOnly: boolean };
type Allowance = { from: string; to: string; why: string };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** A specifier whose names are all `type` (`import { type A }`): erased by TypeScript's reading, see below. */
function allNamesTyped(elements: ts.NodeArray<ts.ImportSpecifier | ts.ExportSpecifier>): boolean {
  return elements.length > 0 && elements.every((e) => e.isTypeOnly);
}

/**
 * The module specifiers a file imports or re-exports, read from its syntax tree: `import type`,
 * `export type … from` and imports whose every name is `type` are type-only; `import()` calls are
 * value imports, `typeof import()` types are type-only.
 */
function importsOf(text: string): { spec: string; typeOnly: boolean; allNamesTyped: boolean }[] {
  const file = ts.createSourceFile("file.ts", text, ts.ScriptTarget.Latest, true);
  const found: { spec: string; typeOnly: boolean; allNamesTyped: boolean }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const inline =
        !!clause &&
        !clause.name &&
        !!bindings &&
        ts.isNamedImports(bindings) &&
        allNamesTyped(bindings.elements);
      found.push({
        spec: node.moduleSpecifier.text,
        typeOnly: !!clause && (clause.isTypeOnly || inline),
        allNamesTyped: inline,
      });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const clause = node.exportClause;
      const inline = !!clause && ts.isNamedExports(clause) && allNamesTyped(clause.elements);
      found.push({
        spec: node.moduleSpecifier.text,
        typeOnly: node.isTypeOnly || inline,
        allNamesTyped: inline,
      });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push({ spec: node.arguments[0].text, typeOnly: false, allNamesTyped: false });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push({ spec: node.argument.literal.text, typeOnly: true, allNamesTyped: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Each file's imports of other files of src/ (paths relative to src/). */
function importEdges(): Edge[] {
  const files = sourceFiles(src);
  const known = new Set(files);
  return files.flatMap((file) =>
    importsOf(readFileSync(file, "utf8"))
      .filter((i) => i.spec.startsWith("."))
      .flatMap(({ spec, typeOnly }) => {
        const path = resolve(dirname(file), spec);
        const target = [path, `${path}.ts`, join(path, "index.ts")].find((p) => known.has(p));
        return target ? [{ from: relative(src, file), to: relative(src, target), typeOnly }] : [];
      }),
  );
}

/** The folder of src/ a file is in, or the file itself at the top of src/. */
function unitOf(path: string): string {
  return path.split("/")[0] ?? path;
}

/**
 * What breaks the floor plan: a file on no floor, a value import from a lower floor to a higher one,
 * a type-only import up that is not listed, an import between two folders of one floor that is not
 * listed (type-only ones only: a value import across is refused like one up).
 */
function floorBreaks(edges: Edge[], floors: string[][], allowed: Allowance[]): string[] {
  const floorOf = (unit: string) => floors.findIndex((floor) => floor.includes(unit));
  const listed = (e: Edge) => allowed.some((a) => a.from === e.from && a.to === e.to);
  const breaks = new Set<string>();
  for (const e of edges) {
    const [from, to] = [unitOf(e.from), unitOf(e.to)];
    if (from === to) continue;
    const [a, b] = [floorOf(from), floorOf(to)];
    if (a < 0 || b < 0) {
      breaks.add(`on no floor: ${a < 0 ? from : to}`);
      continue;
    }
    const way = b < a ? "up a floor" : b === a ? "across a floor" : null;
    if (!way) continue;
    if (!e.typeOnly) breaks.add(`value import ${way}: ${e.from} -> ${e.to}`);
    else if (!listed(e)) breaks.add(`type import ${way}, not listed: ${e.from} -> ${e.to}`);
  }
  return [...breaks].sort();
}

/** Listed imports that are no longer there, or are not type-only (the list may only grow stale by hand). */
function staleAllowances(edges: Edge[], allowed: Allowance[]): string[] {
  return allowed
    .filter((a) => !edges.some((e) => e.from === a.from && e.to === a.to && e.typeOnly))
    .map((a) => `${a.from} -> ${a.to}`);
}

/** Files of the domain floors that speak HTTP: import hono (or @hono/*) or throw the API's error. */
function httpBelowTheEdge(files: { path: string; text: string }[], domain: string[][]): string[] {
  const below = new Set(domain.flat());
  return files
    .filter((f) => below.has(unitOf(f.path)))
    .filter(
      (f) =>
        importsOf(f.text).some(({ spec }) => /^(hono(\/|$)|@hono\/)/.test(spec)) ||
        /new ApiError\(/.test(f.text),
    )
    .map((f) => f.path);
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
  return found;
}

/** Each file's imports (type-only imports included: they tie files too). */
function graphOf(edges: Edge[]): Map<string, string[]> {
  const graph = new Map<string, string[]>(sourceFiles(src).map((f) => [relative(src, f), []]));
  for (const e of edges) graph.get(e.from)?.push(e.to);
  return graph;
}

describe("the import graph of src/ (ARCHITECTURE.md)", () => {
  const edges = importEdges();

  it("has no cycle", () => {
    const graph = graphOf(edges);
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

  it("puts every folder and top-level file of src/ on one floor, and no floor names one that is not there", () => {
    const units = [...new Set(sourceFiles(src).map((f) => unitOf(relative(src, f))))].sort();
    expect([...FLOORS.flat()].sort()).toEqual(units);
  });

  it("runs downward only: no import up a floor or across one but the listed type-only ones", () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(floorBreaks(edges, FLOORS, ALLOWED)).toEqual([]);
    expect(staleAllowances(edges, ALLOWED)).toEqual([]);
  });

  it("writes a type-only import as `import type` (an `import { type A }` still loads its module here)", () => {
    // verbatimModuleSyntax (tsconfig.json) keeps it as `import {} from "…"`, which esbuild and wrangler
    // bundle and run: only `import type` / `export type … from` leave nothing behind
    const inline = sourceFiles(src).filter((f) =>
      importsOf(readFileSync(f, "utf8")).some((i) => i.allNamesTyped),
    );
    expect(inline.map((f) => relative(root, f))).toEqual([]);
  });

  it("is ARCHITECTURE.md's folder table, floor by floor, top floor first", () => {
    const doc = readFileSync(join(root, "ARCHITECTURE.md"), "utf8");
    const section = doc.split("## Folders, top floor first")[1]?.split("\n## ")[0] ?? "";
    const rows = [...section.matchAll(/^\| (\d+) \| `([^`]+?)\/?` \|/gm)].map(
      (m) => [Number(m[1]), m[2] ?? ""] as const,
    );
    const byFloor = new Map<number, string[]>();
    for (const [floor, unit] of rows) byFloor.set(floor, [...(byFloor.get(floor) ?? []), unit]);
    const documented = [...byFloor].map(([floor, units]) => [floor, units.sort()]);
    expect(documented).toEqual(FLOORS.map((units, i) => [FLOORS.length - i, [...units].sort()]));
  });

  it("declares every `*Deps` type in services.ts", () => {
    const elsewhere = sourceFiles(src)
      .filter((f) => relative(src, f) !== "services.ts")
      .flatMap((f) =>
        ts
          .createSourceFile(f, readFileSync(f, "utf8"), ts.ScriptTarget.Latest, false)
          .statements.filter(
            (s) =>
              (ts.isTypeAliasDeclaration(s) || ts.isInterfaceDeclaration(s)) && /Deps$/.test(s.name.text),
          )
          .map((s) => `${relative(src, f)}: ${(s as ts.TypeAliasDeclaration).name.text}`),
      );
    expect(elsewhere).toEqual([]);
  });

  it("keeps every floor below the HTTP floors free of HTTP: no hono import, no ApiError thrown", () => {
    const files = sourceFiles(src).map((f) => ({ path: relative(src, f), text: readFileSync(f, "utf8") }));
    expect(httpBelowTheEdge(files, DOMAIN_FLOORS)).toEqual([]);
  });
});

describe("the floor checks, on a small house", () => {
  const floors = [["top"], ["mid", "side"], ["low"]];
  const edge = (from: string, to: string, typeOnly = false): Edge => ({ from, to, typeOnly });

  it("let imports run down, and within a folder", () => {
    const edges = [edge("top/a.ts", "mid/b.ts"), edge("mid/b.ts", "low/c.ts"), edge("low/c.ts", "low/d.ts")];
    expect(floorBreaks(edges, floors, [])).toEqual([]);
  });

  it("refuse a value import up a floor, listed or not", () => {
    const up = edge("low/c.ts", "top/a.ts");
    expect(floorBreaks([up], floors, [])).toEqual(["value import up a floor: low/c.ts -> top/a.ts"]);
    expect(floorBreaks([up], floors, [{ from: "low/c.ts", to: "top/a.ts", why: "no" }])).toEqual([
      "value import up a floor: low/c.ts -> top/a.ts",
    ]);
  });

  it("refuse a type-only import up a floor unless it is listed", () => {
    const up = edge("low/c.ts", "mid/b.ts", true);
    expect(floorBreaks([up], floors, [])).toEqual([
      "type import up a floor, not listed: low/c.ts -> mid/b.ts",
    ]);
    expect(floorBreaks([up], floors, [{ from: "low/c.ts", to: "mid/b.ts", why: "a type" }])).toEqual([]);
  });

  it("refuse an import between two folders of one floor unless it is a listed type-only one", () => {
    expect(floorBreaks([edge("mid/b.ts", "side/e.ts")], floors, [])).toEqual([
      "value import across a floor: mid/b.ts -> side/e.ts",
    ]);
    const typed = edge("side/e.ts", "mid/b.ts", true);
    expect(floorBreaks([typed], floors, [])).toEqual([
      "type import across a floor, not listed: side/e.ts -> mid/b.ts",
    ]);
    expect(floorBreaks([typed], floors, [{ from: "side/e.ts", to: "mid/b.ts", why: "a type" }])).toEqual([]);
  });

  it("refuse a folder on no floor", () => {
    expect(floorBreaks([edge("top/a.ts", "attic/x.ts")], floors, [])).toEqual(["on no floor: attic"]);
  });

  it("report a listed import that is gone or not type-only", () => {
    const allowed = [
      { from: "low/c.ts", to: "mid/b.ts", why: "a type" },
      { from: "low/c.ts", to: "top/a.ts", why: "a value" },
    ];
    expect(staleAllowances([edge("low/c.ts", "top/a.ts")], allowed)).toEqual([
      "low/c.ts -> mid/b.ts",
      "low/c.ts -> top/a.ts",
    ]);
  });

  it("tell type-only imports from value imports by their syntax", () => {
    const read = (text: string) => importsOf(text).map((i) => [i.spec, i.typeOnly]);
    expect(read('import type { A } from "./a";')).toEqual([["./a", true]]);
    expect(read('import { type A } from "./a";')).toEqual([["./a", true]]);
    expect(read('import { type A, b } from "./a";')).toEqual([["./a", false]]);
    expect(read('import a from "./a";')).toEqual([["./a", false]]);
    expect(read('import * as a from "./a";')).toEqual([["./a", false]]);
    expect(read('import "./a";')).toEqual([["./a", false]]);
    expect(read('export type { A } from "./a";')).toEqual([["./a", true]]);
    expect(read('export { a } from "./a";')).toEqual([["./a", false]]);
    expect(read('export * from "./a";')).toEqual([["./a", false]]);
    expect(read('const a = await import("./a");')).toEqual([["./a", false]]);
    expect(read('type A = typeof import("./a");')).toEqual([["./a", true]]);
  });

  it("find HTTP below the HTTP floors: a hono import or an ApiError thrown, in any domain folder", () => {
    const files = [
      { path: "top/a.ts", text: 'import { Hono } from "hono";\nthrow new ApiError("X", "y");' },
      { path: "mid/b.ts", text: 'import type { Context } from "hono";' },
      { path: "side/e.ts", text: 'import { z } from "@hono/zod-openapi";' },
      { path: "low/c.ts", text: 'throw new ApiError("X", "y");' },
      { path: "low/d.ts", text: 'import { honest } from "./honest";' },
    ];
    expect(httpBelowTheEdge(files, [["mid", "side"], ["low"]])).toEqual([
      "mid/b.ts",
      "side/e.ts",
      "low/c.ts",
    ]);
  });
});
