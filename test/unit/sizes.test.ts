/**
 * Sizes the code is held to (docs/contributing.md): no source file over 500 lines and no
 * function over 150, so a file stays one concept and a function one thing a reader can hold.
 * Source is src/, client/src and protocol/src (tests and bench apart). A function is measured by its
 * body, from its opening line to its closing one, whatever its kind: a declaration, a
 * method, an accessor, a constructor, a function expression or an arrow (an arrow with an
 * expression body counts that expression), read with the TypeScript compiler's parser.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SOURCE_DIRS = ["src", "client/src", "protocol/src"];
const MAX_FILE_LINES = 500;
const MAX_FUNCTION_LINES = 150;

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (/\.(ts|mts|cts|js|mjs)$/.test(name) && !name.endsWith(".d.ts")) files.push(path);
  }
  return files;
}

/** A file's lines, as an editor counts them: a final newline ends the last line. */
function lineCount(text: string): number {
  return text.replace(/\n$/, "").split("\n").length;
}

/** A function's name where it has one, else where it stands (`arrow at line 12`). */
function nameOf(node: ts.Node, file: ts.SourceFile): string {
  const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  const named = node as { name?: ts.Node };
  if (named.name !== undefined) return `${named.name.getText(file)} (line ${line})`;
  if (ts.isConstructorDeclaration(node)) return `constructor (line ${line})`;
  const parent = node.parent;
  if (parent !== undefined && ts.isVariableDeclaration(parent)) {
    return `${parent.name.getText(file)} (line ${line})`;
  }
  if (parent !== undefined && ts.isPropertyAssignment(parent)) {
    return `${parent.name.getText(file)} (line ${line})`;
  }
  if (parent !== undefined && ts.isPropertyDeclaration(parent)) {
    return `${parent.name.getText(file)} (line ${line})`;
  }
  return `${ts.SyntaxKind[node.kind]} at line ${line}`;
}

/** Every function in `text` whose body runs over `max` lines, with its length. */
export function longFunctions(path: string, text: string, max: number): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) {
      const body = (node as { body?: ts.Node }).body;
      if (body !== undefined) {
        const start = file.getLineAndCharacterOfPosition(body.getStart(file)).line;
        const end = file.getLineAndCharacterOfPosition(body.getEnd()).line;
        const lines = end - start + 1;
        if (lines > max) found.push(`${nameOf(node, file)}: ${lines} lines`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** `lines` lines of a function body, for the checks of the measure itself. */
function functionOf(lines: number, kind: "function" | "method" | "arrow"): string {
  const inner = Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i};`).join("\n");
  if (kind === "function") return `export function f() {\n${inner}\n}\n`;
  if (kind === "method") return `class C {\n  m() {\n${inner}\n  }\n}\n`;
  return `const g = () => {\n${inner}\n};\n`;
}

describe("sizes", () => {
  it("measures a function, a method and an arrow by their bodies", () => {
    for (const kind of ["function", "method", "arrow"] as const) {
      expect(longFunctions("x.ts", functionOf(150, kind), 150)).toEqual([]);
      expect(longFunctions("x.ts", functionOf(151, kind), 150)).toHaveLength(1);
    }
    expect(longFunctions("x.ts", functionOf(151, "method"), 150)[0]).toMatch(/^m \(line 2\)/);
    expect(longFunctions("x.ts", functionOf(151, "arrow"), 150)[0]).toMatch(/^g \(line 1\)/);
  });

  const files = SOURCE_DIRS.flatMap((dir) => sourceFiles(join(ROOT, dir)));
  const named = (path: string): string => relative(ROOT, path).split(sep).join("/");

  it(`keeps every source file at ${MAX_FILE_LINES} lines or fewer`, () => {
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .map((path) => ({ path, lines: lineCount(readFileSync(path, "utf8")) }))
      .filter(({ lines }) => lines > MAX_FILE_LINES)
      .map(({ path, lines }) => `${named(path)}: ${lines} lines`);
    expect(over).toEqual([]);
  });

  it(`keeps every function at ${MAX_FUNCTION_LINES} lines or fewer`, () => {
    const over = files.flatMap((path) =>
      longFunctions(path, readFileSync(path, "utf8"), MAX_FUNCTION_LINES).map(
        (found) => `${named(path)}: ${found}`,
      ),
    );
    expect(over).toEqual([]);
  });
});
