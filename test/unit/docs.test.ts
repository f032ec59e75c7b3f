import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The documentation stays true to the tree: every setting the engine reads is documented once in
 * docs/configuration.md, every relative link and anchor of the markdown leads somewhere, and the
 * README stays a front door (at most 150 lines).
 */

const root = resolve(import.meta.dirname, "../..");
const README_MAX_LINES = 150;

/** Bindings of `Env` that are not settings: nobody sets them, the runtime provides them. */
const NOT_SETTINGS = new Set(["ASSETS"]);

// ---------------------------------------------------------------------------------------------------
// Settings

/** The property names of `type <name> = { … }` in a TypeScript source. */
function typeLiteralKeys(source: string, typeName: string): string[] {
  const file = ts.createSourceFile("env.ts", source, ts.ScriptTarget.Latest, true);
  for (const statement of file.statements) {
    if (!ts.isTypeAliasDeclaration(statement) || statement.name.text !== typeName) continue;
    if (!ts.isTypeLiteralNode(statement.type)) break;
    return statement.type.members.flatMap((m) =>
      ts.isPropertySignature(m) && m.name && ts.isIdentifier(m.name) ? [m.name.text] : [],
    );
  }
  throw new Error(`no type ${typeName} = { … } found`);
}

/** The keys of the object literal passed to `z.object({ … })` in `const <name> = z.object(…)`. */
function zodObjectKeys(source: string, constName: string): string[] {
  const file = ts.createSourceFile("settings.ts", source, ts.ScriptTarget.Latest, true);
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const d of statement.declarationList.declarations) {
      if (!ts.isIdentifier(d.name) || d.name.text !== constName || !d.initializer) continue;
      const call = d.initializer;
      const arg = ts.isCallExpression(call) ? call.arguments[0] : undefined;
      if (!arg || !ts.isObjectLiteralExpression(arg)) break;
      return arg.properties.flatMap((p) =>
        ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) ? [p.name.text] : [],
      );
    }
  }
  throw new Error(`no const ${constName} = z.object({ … }) found`);
}

/** The settings a markdown table documents: rows whose first cell is a code span in capitals. */
function documentedSettings(markdown: string): Map<string, number> {
  const rows = new Map<string, number>();
  for (const match of withoutCodeBlocks(markdown).matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/gm)) {
    const name = match[1] as string;
    rows.set(name, (rows.get(name) ?? 0) + 1);
  }
  return rows;
}

/** What is wrong with the settings' documentation: a setting without its row, with two, or a row of no setting. */
function settingProblems(settings: string[], markdown: string): string[] {
  const rows = documentedSettings(markdown);
  const problems: string[] = [];
  for (const name of settings) {
    const n = rows.get(name) ?? 0;
    if (n === 0) problems.push(`${name} is not documented`);
    if (n > 1) problems.push(`${name} is documented ${n} times`);
  }
  const known = new Set(settings);
  for (const name of rows.keys())
    if (!known.has(name)) problems.push(`${name} is documented but not a setting`);
  return problems;
}

/** Every setting the engine reads: `Env` in src/env.ts and the server runtimes' own settings. */
function engineSettings(): string[] {
  const env = typeLiteralKeys(readFileSync(join(root, "src/env.ts"), "utf8"), "Env");
  const serverFile = sourceFiles(join(root, "src")).find((f) =>
    readFileSync(f, "utf8").includes("export function readServerSettings"),
  );
  if (!serverFile)
    throw new Error("the server runtimes' settings (readServerSettings) were not found in src/");
  const server = zodObjectKeys(readFileSync(serverFile, "utf8"), "schema");
  return [...new Set([...env, ...server])].filter((k) => !NOT_SETTINGS.has(k));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

// ---------------------------------------------------------------------------------------------------
// Links and anchors

/** The text with fenced code blocks blanked (line count kept) and inline code spans removed. */
function withoutCodeBlocks(markdown: string): string {
  let fence: string | null = null;
  return markdown
    .split("\n")
    .map((line) => {
      const opener = /^\s*(```+|~~~+)/.exec(line)?.[1];
      if (fence) {
        if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = null;
        return "";
      }
      if (opener) {
        fence = opener;
        return "";
      }
      return line;
    })
    .join("\n");
}

/** GitHub's anchor for a heading: rendered text, lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors a markdown file offers: one per heading, repeats numbered as GitHub does (`-1`, `-2`). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutCodeBlocks(markdown).split("\n")) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The link targets of a markdown text, code left out: inline links and images, and reference definitions. */
function linkTargets(markdown: string): string[] {
  const text = withoutCodeBlocks(markdown).replace(/(`+)[^`]*?\1/g, "");
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string);
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map(
    (m) => m[1] as string,
  );
  return [...inline, ...references];
}

/** How the link check sees the tree: which paths exist, and a markdown file's text. */
type Tree = { exists: (path: string) => boolean; read: (path: string) => string };

/** Folders no link in the checked files may point into (code moves; name a module in a code span instead). */
const NO_LINKS_INTO = ["src/", "test/"];

/**
 * Dead relative links and anchors of one markdown file (its path relative to the root): a target that does
 * not exist, an `#anchor` no heading of the target makes, and (when `noLinksInto`) a link into code folders.
 */
function linkProblems(file: string, tree: Tree, noLinksInto: string[] = []): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(tree.read(file))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue;
    const hash = target.indexOf("#");
    const pathPart = decodeURIComponent(hash >= 0 ? target.slice(0, hash) : target);
    const anchor = hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : null;
    const path = pathPart === "" ? file : normalize(join(dirname(file), pathPart)).replace(/\\/g, "/");
    if (path.startsWith("..")) {
      problems.push(`${file}: ${target} leaves the repository`);
      continue;
    }
    if (!tree.exists(path)) {
      problems.push(`${file}: ${target} points to ${path}, which does not exist`);
      continue;
    }
    if (noLinksInto.some((folder) => `${path}/`.startsWith(folder))) {
      problems.push(`${file}: ${target} links into ${path} (name the module in a code span instead)`);
    }
    if (anchor === null || anchor === "") continue;
    if (!path.endsWith(".md")) {
      problems.push(`${file}: ${target} has an anchor, but ${path} is not markdown`);
    } else if (!anchors(tree.read(path)).has(anchor)) {
      problems.push(`${file}: ${target}: no heading of ${path} makes #${anchor}`);
    }
  }
  return problems;
}

/** The markdown files whose links are checked, relative to the root. */
function checkedFiles(): string[] {
  const inDir = (dir: string, deep: boolean): string[] =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir)).flatMap((name) => {
          const path = `${dir}/${name}`;
          if (statSync(join(root, path)).isDirectory()) return deep ? inDir(path, true) : [];
          return name.endsWith(".md") ? [path] : [];
        })
      : [];
  return [
    "README.md",
    "ARCHITECTURE.md",
    ...inDir("docs", true),
    ...inDir("bench", false),
    ...inDir("chaos", false),
    "client/README.md",
  ].filter((f) => existsSync(join(root, f)));
}

const disk: Tree = {
  exists: (path) => existsSync(join(root, path)),
  read: (path) => readFileSync(join(root, path), "utf8"),
};

/** A tree held in memory, for the checks' own tests. */
function memoryTree(files: Record<string, string>): Tree {
  return {
    exists: (path) => path in files || Object.keys(files).some((f) => f.startsWith(`${path}/`)),
    read: (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`${path} is not in the tree`);
      return text;
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The README's length

function readmeProblems(text: string, max = README_MAX_LINES): string[] {
  const lines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
  return lines > max ? [`README.md has ${lines} lines, more than ${max}`] : [];
}

// ---------------------------------------------------------------------------------------------------

describe("docs/configuration.md", () => {
  it("documents every setting the engine reads, once each, and nothing else", () => {
    const settings = engineSettings();
    expect(settings).toContain("JWT_SECRET");
    expect(settings).toContain("PG_POOL_MAX");
    expect(settings.length).toBeGreaterThan(50);
    expect(settingProblems(settings, disk.read("docs/configuration.md"))).toEqual([]);
  });

  it("finds a setting missing, documented twice, or documented but unknown", () => {
    const md = ["| setting | default |", "|---|---|", "| `A_B` | 1 |", "| `C` | 2 |", "| `C` | 3 |"].join(
      "\n",
    );
    expect(settingProblems(["A_B", "C", "D"], md)).toEqual([
      "C is documented 2 times",
      "D is not documented",
    ]);
    expect(settingProblems(["A_B"], "| `A_B` | 1 |\n| `GONE` | 2 |")).toEqual([
      "GONE is documented but not a setting",
    ]);
    expect(settingProblems(["A_B"], "```\n| `A_B` | 1 |\n```\nA_B in prose")).toEqual([
      "A_B is not documented",
    ]);
  });

  it("reads the keys of a type and of a zod object", () => {
    expect(typeLiteralKeys("export type Env = { A?: string; B: string };", "Env")).toEqual(["A", "B"]);
    expect(
      zodObjectKeys("const schema = z.object({ PORT: z.number(), HOST: z.string() });", "schema"),
    ).toEqual(["PORT", "HOST"]);
    expect(() => typeLiteralKeys("type Other = {};", "Env")).toThrow();
  });
});

describe("links and anchors in the markdown", () => {
  it("lead to files and headings that exist", () => {
    const files = checkedFiles();
    expect(files).toContain("docs/README.md");
    const problems = files.flatMap((f) =>
      linkProblems(f, disk, f === "ARCHITECTURE.md" ? [] : NO_LINKS_INTO),
    );
    expect(problems).toEqual([]);
  });

  it("makes GitHub's anchors", () => {
    expect(slug("What can still go wrong, and how far")).toBe("what-can-still-go-wrong-and-how-far");
    expect(slug("The `Admission` header (queue_draw)")).toBe("the-admission-header-queue_draw");
    expect(slug("Deploy: a Bun (or Deno) server")).toBe("deploy-a-bun-or-deno-server");
    expect([...anchors("# A\n## A\n```\n# not a heading\n```\n## B.c")]).toEqual(["a", "a-1", "bc"]);
  });

  it("finds a dead link, a dead anchor in the same file or another, and a link into src/", () => {
    const tree = memoryTree({
      "README.md": [
        "# Top",
        "[ok](docs/a.md) [ok](docs/a.md#part-one) [ok](#top) [web](https://example.com) `[code](gone.md)`",
        "[dead](docs/gone.md) [dead anchor](docs/a.md#part-two) [dead here](#nowhere) [code](src/x.ts)",
        "```",
        "[in a block](nowhere.md)",
        "```",
      ].join("\n"),
      "docs/a.md": "# A\n## Part one\n[back](../README.md#top) [up](../../outside.md)",
      "src/x.ts": "",
    });
    expect(linkProblems("README.md", tree, NO_LINKS_INTO)).toEqual([
      "README.md: docs/gone.md points to docs/gone.md, which does not exist",
      "README.md: docs/a.md#part-two: no heading of docs/a.md makes #part-two",
      "README.md: #nowhere: no heading of README.md makes #nowhere",
      "README.md: src/x.ts links into src/x.ts (name the module in a code span instead)",
    ]);
    expect(linkProblems("docs/a.md", tree)).toEqual(["docs/a.md: ../../outside.md leaves the repository"]);
  });
});

describe("README.md", () => {
  it(`is a front door: at most ${README_MAX_LINES} lines`, () => {
    expect(readmeProblems(disk.read("README.md"))).toEqual([]);
  });

  it("finds a README that is too long", () => {
    expect(readmeProblems("line\n".repeat(151))).toEqual(["README.md has 151 lines, more than 150"]);
    expect(readmeProblems("line\n".repeat(150))).toEqual([]);
  });
});
