/**
 * `mcpool/hooks` is what a browser bundle takes to edit hook rows: it must compile with no
 * Node types and import nothing, and the root must hand out the same functions, so a
 * server and a form agree on every rule.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import ts from "typescript";
import { describe, expect, it } from "vitest";

import * as root from "../../src/index.js";
import * as hooks from "../../src/config/hooks.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ENTRY = `${ROOT}src/config/hooks.ts`;

type ModuleStatement = ts.ImportDeclaration | ts.ExportDeclaration;

/** The statements that name another module: imports and `export … from`. */
function importsOf(source: ts.SourceFile): ModuleStatement[] {
  return source.statements.filter(
    (s): s is ModuleStatement =>
      ts.isImportDeclaration(s) || (ts.isExportDeclaration(s) && s.moduleSpecifier !== undefined),
  );
}

function specifierOf(statement: ModuleStatement): string | undefined {
  const specifier = statement.moduleSpecifier;
  return specifier !== undefined && ts.isStringLiteral(specifier) ? specifier.text : undefined;
}

function isTypeOnly(statement: ModuleStatement): boolean {
  return ts.isImportDeclaration(statement)
    ? statement.importClause?.isTypeOnly === true
    : statement.isTypeOnly;
}

describe("the mcpool/hooks entry", () => {
  it("is the file package.json exports as ./hooks, types first", () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as {
      exports: Record<string, Record<string, string>>;
    };
    expect(pkg.exports["./hooks"]).toEqual({
      types: "./dist/config/hooks.d.ts",
      default: "./dist/config/hooks.js",
    });
    expect(Object.keys(pkg.exports["./hooks"]!)[0]).toBe("types");
  });

  it("compiles with no Node types and no DOM", () => {
    const program = ts.createProgram([ENTRY], {
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2022.d.ts"],
      types: [],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: false,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(problems).toEqual([]);
  });

  // The hook types are the wire's, declared once in mcpool-protocol; the entry re-exports
  // them. Types compile away, so a bundle still loads nothing but this file.
  it("imports nothing at run time: only types, and only from mcpool-protocol", () => {
    const text = readFileSync(ENTRY, "utf8");
    const imports = importsOf(ts.createSourceFile(ENTRY, text, ts.ScriptTarget.ES2022, true));
    expect(imports.length).toBeGreaterThan(0);
    for (const statement of imports) {
      expect(specifierOf(statement)).toBe("mcpool-protocol");
      expect(isTypeOnly(statement), statement.getText()).toBe(true);
    }
    const emitted = ts.transpileModule(text, {
      compilerOptions: { module: ts.ModuleKind.NodeNext, verbatimModuleSyntax: true },
    }).outputText;
    expect(importsOf(ts.createSourceFile("hooks.js", emitted, ts.ScriptTarget.ES2022))).toEqual([]);
  });

  it("is also exported from the root, as the same functions", () => {
    for (const name of [
      "HOOK_EVENTS",
      "INJECT_EVENTS",
      "VETO_EVENTS",
      "hookVars",
      "validateHooks",
      "renderTemplate",
      "contextBlocks",
      "readVeto",
      "hookTimeoutMs",
    ] as const) {
      expect(root[name], name).toBe(hooks[name]);
    }
  });
});
