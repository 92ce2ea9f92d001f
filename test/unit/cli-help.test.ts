/**
 * The `mcpool` command's help and exit codes come from two tables (src/cli/commands.ts and
 * src/cli/output/exit-codes.ts); these tests hold the help, the parsed options and the
 * command-line page of the docs (docs/cli.md) to them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

import {
  COMMANDS,
  GLOBAL_OPTIONS,
  commandNamed,
  parseFlag,
  parseOptions,
  type CommandHelp,
} from "../../src/cli/commands.js";
import { commandHelpText, usageText } from "../../src/cli/help-text.js";
import { EXIT, EXIT_CODES } from "../../src/cli/output/exit-codes.js";

/** The docs' command-line page, which holds the command and exit-code tables. */
function cliSection(): string {
  return readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");
}

/** The rows of the first markdown table after `header`, cells split on unescaped `|`. */
function tableAfter(text: string, header: string): string[][] {
  const lines = text.slice(text.indexOf(header)).split("\n");
  const rows: string[][] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replaceAll("\\|", "|")),
    );
  }
  return rows;
}

describe("the command table", () => {
  it("gives every command a help of its own with its usage line, summary and an example", () => {
    const table: readonly CommandHelp[] = COMMANDS;
    for (const command of table) {
      const help = commandHelpText(command);
      expect(help.startsWith(`usage: mcpool ${command.synopsis}\n`)).toBe(true);
      expect(help.replaceAll(/\s+/g, " ")).toContain(command.summary);
      expect(command.examples.length).toBeGreaterThan(0);
      for (const example of command.examples) {
        expect(example).toMatch(new RegExp(`\\bmcpool ${command.name}\\b`));
        expect(help).toContain(`  ${example}`);
      }
      for (const [flag] of command.options ?? []) expect(help).toContain(flag);
      for (const [argument] of command.arguments ?? []) expect(help).toContain(argument);
    }
  });

  it("names every command once, and finds each by its name", () => {
    const names = COMMANDS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(commandNamed(name)?.name).toBe(name);
    expect(commandNamed("frobnicate")).toBeUndefined();
    // The commands docs/cli.md lists and main.ts runs.
    expect(names).toEqual(
      expect.arrayContaining([
        "serve",
        "status",
        "tools",
        "search",
        "call",
        "describe",
        "probe",
        "stop",
        "restart",
        "reload",
        "validate",
        "approve",
        "logs",
        "bridge",
        "service",
        "shutdown",
        "top",
        "stats",
        "hide",
        "unhide",
        "login",
        "logout",
        "import",
        "wire",
        "demo",
        "help",
      ]),
    );
  });

  it("lists every command and every exit code in the global usage", () => {
    const usage = usageText();
    expect(usage.startsWith("usage: mcpool <command> [options]\n")).toBe(true);
    for (const command of COMMANDS) expect(usage).toContain(`\n  ${command.synopsis}`);
    for (const { code, meaning } of EXIT_CODES) {
      expect(usage.replaceAll(/\s+/g, " ")).toContain(`${code} ${meaning}`);
    }
    for (const [flag] of GLOBAL_OPTIONS) expect(usage).toContain(flag);
  });

  it("reads a flag's name, letter and type from how the help spells it", () => {
    expect(parseFlag("--json")).toEqual({ name: "json", type: "boolean" });
    expect(parseFlag("--limit N")).toEqual({ name: "limit", type: "string" });
    expect(parseFlag("-f, --follow")).toEqual({ name: "follow", short: "f", type: "boolean" });
    expect(parseFlag("-n N")).toEqual({ name: "n", type: "string" });
    expect(() => parseFlag("follow")).toThrow(/not a flag/);
  });

  it("parses exactly the options the help documents, each with one type", () => {
    const options = parseOptions();
    expect(Object.keys(options).sort()).toEqual(
      [
        "catalog",
        "catalog-tokens",
        "config",
        "dry-run",
        "follow",
        "force",
        "from",
        "handover",
        "help",
        "http",
        "json",
        "keeper",
        "limit",
        "n",
        "one-entry",
        "no-browser",
        "once",
        "server",
        "servers",
        "show",
        "since",
        "socket",
        "token",
        "unused",
        "version",
        "write",
      ].sort(),
    );
    expect(options.follow).toEqual({ type: "boolean", short: "f" });
    expect(options.help).toEqual({ type: "boolean", short: "h" });
    expect(options.n).toEqual({ type: "string" });
    expect(options.server).toEqual({ type: "string" });
  });
});

describe("the exit codes", () => {
  it("give each kind of failure one code, named for the code that returns it", () => {
    const codes = EXIT_CODES.map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(EXIT).toEqual({
      ok: 0,
      failed: 1,
      badInput: 2,
      notRunning: 3,
      interrupted: 130,
      brokenPipe: 141,
    });
  });
});

describe("the command-line page of the docs", () => {
  it("has the exit-code table the code has, row for row", () => {
    const rows = tableAfter(cliSection(), "| code | name | meaning |");
    expect(rows).toEqual(EXIT_CODES.map((e) => [String(e.code), `\`${e.name}\``, e.meaning]));
  });

  it("lists every command by the synopsis its help prints, and no other", () => {
    const rows = tableAfter(cliSection(), "| command | what it does |");
    const written = rows.flatMap(([cell = ""]) =>
      [...cell.matchAll(/`mcpool ([^`]+)`/g)].map((m) => m[1]),
    );
    expect(written.sort()).toEqual(COMMANDS.map((c) => c.synopsis).sort());
  });
});
