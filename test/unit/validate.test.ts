import { describe, expect, it } from "vitest";

import { isLoopbackHost, validateServerConfig, validateServers } from "../../src/config/index.js";
import { parseMcpJson } from "../../src/config/mcp-json.js";

const stdio = { id: "git", transport: "stdio", command: "uvx", args: ["mcp-server-git"] };
const http = { id: "docs", transport: "http", url: "https://mcp.example.com/mcp" };

/** The problems of a valid base row with some fields replaced. */
function problemsOf(base: Record<string, unknown>, patch: Record<string, unknown>): string[] {
  return validateServerConfig({ ...base, ...patch });
}

describe("validateServerConfig", () => {
  it("accepts a minimal stdio row and a minimal http row", () => {
    expect(validateServerConfig(stdio)).toEqual([]);
    expect(validateServerConfig(http)).toEqual([]);
  });

  it("accepts a stdio row carrying every option", () => {
    const row = {
      ...stdio,
      slug: "git-tools",
      label: "Git",
      enabled: false,
      env: { TOKEN: "x" },
      cwd: "/srv/repo",
      connectTimeoutMs: 120_000,
      callTimeoutMs: 30_000,
      probeTimeoutMs: null,
      idleTimeoutMs: 300_000,
      maxResultChars: 16_000,
      hiddenTools: ["git_reset"],
      alwaysLoad: ["git_status"],
      trustAnnotations: true,
      coerceArguments: false,
      lazy: true,
    };
    expect(validateServerConfig(row)).toEqual([]);
  });

  it("accepts an http row with headers", () => {
    expect(problemsOf(http, { headers: { Authorization: "Bearer t" } })).toEqual([]);
  });

  it("refuses a row that is not an object, saying what it got", () => {
    expect(validateServerConfig(null)).toEqual(["a server row must be an object, got null"]);
    expect(validateServerConfig([stdio])[0]).toMatch(/must be an object, got an array/);
    expect(validateServerConfig("git")[0]).toMatch(/must be an object, got a string/);
    expect(validateServerConfig(undefined)[0]).toMatch(/must be an object, got undefined/);
  });

  it("reports every problem of a row at once", () => {
    const problems = validateServerConfig({ transport: "stdio", args: "x", lazy: "yes" });
    expect(problems).toHaveLength(4);
    expect(problems.join("\n")).toMatch(/`id` is missing/);
    expect(problems.join("\n")).toMatch(/needs a `command`/);
    expect(problems.join("\n")).toMatch(/`args` must be an array of strings/);
    expect(problems.join("\n")).toMatch(/`lazy` must be true or false/);
  });

  describe("id and slug", () => {
    it("refuses a missing, empty or non-string id", () => {
      const { id: _id, ...noId } = stdio;
      expect(validateServerConfig(noId)).toEqual(["`id` is missing; every row needs one"]);
      expect(problemsOf(stdio, { id: undefined })).toEqual([
        "`id` is missing; every row needs one",
      ]);
      expect(problemsOf(stdio, { id: "" })).toEqual(["`id` must not be empty"]);
      expect(problemsOf(stdio, { id: 7 })).toEqual(["`id` must be a string, got a number"]);
      expect(problemsOf(stdio, { id: null })).toEqual(["`id` must be a string, got null"]);
    });

    it("refuses an id with characters a tool name cannot hold", () => {
      for (const id of ["my.server", "a b", "git/hub", "é"]) {
        const problems = problemsOf(stdio, { id });
        expect(problems).toHaveLength(1);
        expect(problems[0]).toMatch(/^`id` .* may hold only letters, digits, `_` and `-`/);
      }
    });

    it("accepts letters, digits, underscores and hyphens in an id", () => {
      expect(problemsOf(stdio, { id: "My_server-2" })).toEqual([]);
    });

    it("accepts an id of 32 characters and refuses one of 33", () => {
      expect(problemsOf(stdio, { id: "a".repeat(32) })).toEqual([]);
      const problems = problemsOf(stdio, { id: "a".repeat(33) });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^`id` is 33 characters long; at most 32/);
    });

    it("holds a slug to the same rules and accepts an empty one as the id's", () => {
      expect(problemsOf(stdio, { slug: "git_2" })).toEqual([]);
      expect(problemsOf(stdio, { slug: "" })).toEqual([]);
      expect(problemsOf(stdio, { slug: "g.it" })[0]).toMatch(/^`slug` "g.it" may hold only/);
      expect(problemsOf(stdio, { slug: "s".repeat(33) })[0]).toMatch(/^`slug` is 33 characters/);
      expect(problemsOf(stdio, { slug: 3 })).toEqual(["`slug` must be a string, got a number"]);
    });
  });

  describe("transport", () => {
    it("refuses a missing transport, naming the allowed values", () => {
      const { transport: _t, ...row } = stdio;
      expect(validateServerConfig(row)).toEqual([
        '`transport` is missing; it must be "stdio" or "http"',
      ]);
    });

    it("refuses an unknown transport, naming the allowed values", () => {
      expect(problemsOf(stdio, { transport: "ws" })).toEqual([
        '`transport` must be "stdio" or "http", got "ws"',
      ]);
      expect(problemsOf(stdio, { transport: 1 })).toEqual([
        '`transport` must be "stdio" or "http", got 1',
      ]);
    });

    it("refuses sse with a message pointing at streamable HTTP", () => {
      const problems = problemsOf(http, { transport: "sse" });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/"sse" is not supported/);
      expect(problems[0]).toMatch(/streamable HTTP/);
    });
  });

  describe("stdio rows", () => {
    it("refuses a missing, empty or non-string command", () => {
      const { command: _c, ...row } = stdio;
      expect(validateServerConfig(row)).toEqual(["a stdio row needs a `command`"]);
      expect(problemsOf(stdio, { command: "" })).toEqual(["`command` must not be empty"]);
      expect(problemsOf(stdio, { command: "  " })).toEqual(["`command` must not be empty"]);
      expect(problemsOf(stdio, { command: ["uvx"] })).toEqual([
        "`command` must be a string, got an array",
      ]);
    });

    it("refuses args that are not an array of strings, naming the bad element", () => {
      expect(problemsOf(stdio, { args: "mcp-server-git" })).toEqual([
        "`args` must be an array of strings, got a string",
      ]);
      expect(problemsOf(stdio, { args: null })).toEqual([
        "`args` must be an array of strings, got null",
      ]);
      expect(problemsOf(stdio, { args: ["a", 2] })).toEqual([
        "`args[1]` must be a string, got a number",
      ]);
      expect(problemsOf(stdio, { args: [] })).toEqual([]);
    });

    it("refuses env that is not a string map, without quoting its values", () => {
      expect(problemsOf(stdio, { env: ["A=1"] })).toEqual([
        "`env` must be an object of string values, got an array",
      ]);
      const problems = problemsOf(stdio, { env: { OK: "1", API_KEY: 123456789 } });
      expect(problems).toEqual(["`env.API_KEY` must be a string, got a number"]);
      expect(problems[0]).not.toContain("123456789");
    });

    it("refuses a cwd that is not a string", () => {
      expect(problemsOf(stdio, { cwd: 1 })).toEqual(["`cwd` must be a string, got a number"]);
    });

    it("refuses the http arm's fields on a stdio row", () => {
      expect(problemsOf(stdio, { url: "https://x.example" })).toEqual([
        "a stdio row carries no `url`",
      ]);
      expect(problemsOf(stdio, { headers: {} })).toEqual(["a stdio row carries no `headers`"]);
    });

    it("treats a field set to undefined as absent", () => {
      expect(problemsOf(stdio, { url: undefined, args: undefined })).toEqual([]);
    });
  });

  describe("http rows", () => {
    it("refuses a missing, non-string or empty url", () => {
      const { url: _u, ...row } = http;
      expect(validateServerConfig(row)).toEqual(["an http row needs a `url`"]);
      expect(problemsOf(http, { url: 5 })).toEqual(["`url` must be a string, got a number"]);
      expect(problemsOf(http, { url: "" })).toEqual(["`url` must not be empty"]);
    });

    it("refuses a url that does not parse, without quoting it", () => {
      const problems = problemsOf(http, { url: "not a url?token=secret" });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/`url` is not a valid absolute URL/);
      expect(problems[0]).not.toContain("secret");
    });

    it("refuses a protocol other than http or https", () => {
      expect(problemsOf(http, { url: "ftp://example.com/mcp" })).toEqual([
        '`url` must use http or https, got "ftp"',
      ]);
      expect(problemsOf(http, { url: "ws://localhost:3000/mcp" })[0]).toMatch(/got "ws"/);
    });

    it("refuses plain http to a host that is not loopback", () => {
      const problems = problemsOf(http, { url: "http://mcp.example.com/mcp" });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toBe(
        "`url` uses plain http to mcp.example.com; http is allowed only to loopback (localhost, 127.0.0.0/8, ::1); use https",
      );
      expect(problemsOf(http, { url: "http://10.0.0.5:8080/mcp" })).toHaveLength(1);
      expect(problemsOf(http, { url: "http://128.0.0.1/mcp" })).toHaveLength(1);
    });

    it("accepts plain http to localhost, 127.0.0.0/8 and ::1", () => {
      for (const url of [
        "http://localhost:3000/mcp",
        "http://LOCALHOST/mcp",
        "http://127.0.0.1:8080/mcp",
        "http://127.255.1.9/mcp",
        "http://[::1]:9000/mcp",
      ]) {
        expect(problemsOf(http, { url })).toEqual([]);
      }
    });

    it("accepts https to any host", () => {
      expect(problemsOf(http, { url: "https://10.0.0.5/mcp" })).toEqual([]);
    });

    it("refuses headers that are not a string map, without quoting their values", () => {
      expect(problemsOf(http, { headers: "Authorization: x" })).toEqual([
        "`headers` must be an object of string values, got a string",
      ]);
      expect(problemsOf(http, { headers: { Authorization: true } })).toEqual([
        "`headers.Authorization` must be a string, got a boolean",
      ]);
    });

    it("refuses the stdio arm's fields on an http row, including the flat legacy nulls", () => {
      expect(problemsOf(http, { command: "", args: null, env: null, cwd: "/" })).toEqual([
        "an http row carries no `command`",
        "an http row carries no `args`",
        "an http row carries no `env`",
        "an http row carries no `cwd`",
      ]);
    });
  });

  describe("options", () => {
    const durations = ["connectTimeoutMs", "callTimeoutMs", "probeTimeoutMs", "idleTimeoutMs"];

    it("accepts null, absent and whole numbers of characters ≥ 0 for maxResultChars", () => {
      for (const value of [null, undefined, 0, 1, 120_000]) {
        expect(problemsOf(stdio, { maxResultChars: value })).toEqual([]);
      }
    });

    it("refuses negative, fractional, non-finite and non-number values for maxResultChars", () => {
      for (const value of [-1, 1.5, Number.NaN, Infinity, "5000", true]) {
        const problems = problemsOf(stdio, { maxResultChars: value });
        expect(problems).toHaveLength(1);
        expect(problems[0]).toMatch(/^`maxResultChars` must be a whole number/);
      }
    });

    it("accepts null, absent and 1 ms up to the longest a timer waits for every duration", () => {
      for (const field of durations) {
        for (const value of [null, undefined, 1, 120_000, 2 ** 31 - 1]) {
          expect(problemsOf(stdio, { [field]: value })).toEqual([]);
        }
      }
    });

    it("refuses a duration a timer cannot honour, saying the bounds: 3e9 ms would time out at once", () => {
      for (const field of durations) {
        for (const value of [-1, 1.5, Number.NaN, Infinity, "5000", true, 2 ** 31, 3e9]) {
          const problems = problemsOf(stdio, { [field]: value });
          expect(problems).toHaveLength(1);
          expect(problems[0]).toMatch(
            new RegExp(
              `^\`${field}\` must be a whole number of milliseconds from .* to 2147483647`,
            ),
          );
        }
      }
      expect(problemsOf(stdio, { callTimeoutMs: 3e9 })).toEqual([
        "`callTimeoutMs` must be a whole number of milliseconds from 1 to 2147483647 (about 24.8 days), the longest a timer can wait; got 3000000000",
      ]);
    });

    it("allows 0 only where it means off: idleTimeoutMs, not the timeouts", () => {
      expect(problemsOf(stdio, { idleTimeoutMs: 0 })).toEqual([]);
      for (const field of ["connectTimeoutMs", "callTimeoutMs", "probeTimeoutMs"]) {
        expect(problemsOf(stdio, { [field]: 0 })[0]).toMatch(/from 1 to/);
      }
    });

    it("names the unit of each numeric option", () => {
      expect(problemsOf(stdio, { callTimeoutMs: -1 })[0]).toMatch(/milliseconds/);
      expect(problemsOf(stdio, { maxResultChars: -1 })[0]).toMatch(/characters/);
    });

    it("refuses non-boolean flags", () => {
      for (const field of ["enabled", "trustAnnotations", "coerceArguments", "lazy"]) {
        expect(problemsOf(stdio, { [field]: true })).toEqual([]);
        expect(problemsOf(stdio, { [field]: false })).toEqual([]);
        expect(problemsOf(stdio, { [field]: "true" })).toEqual([
          `\`${field}\` must be true or false, got "true"`,
        ]);
        expect(problemsOf(stdio, { [field]: null })).toEqual([
          `\`${field}\` must be true or false, got null`,
        ]);
      }
    });

    it("refuses hiddenTools and alwaysLoad that are not arrays of strings", () => {
      for (const field of ["hiddenTools", "alwaysLoad"]) {
        expect(problemsOf(stdio, { [field]: ["a", "b"] })).toEqual([]);
        expect(problemsOf(stdio, { [field]: "a" })).toEqual([
          `\`${field}\` must be an array of strings, got a string`,
        ]);
        expect(problemsOf(stdio, { [field]: ["a", {}] })).toEqual([
          `\`${field}[1]\` must be a string, got an object`,
        ]);
      }
    });

    it("refuses a label that is not a string", () => {
      expect(problemsOf(stdio, { label: "Git" })).toEqual([]);
      expect(problemsOf(stdio, { label: 3 })).toEqual(["`label` must be a string, got a number"]);
    });

    it("lets unknown keys through for forward compatibility", () => {
      expect(problemsOf(stdio, { session: "conversation", futureOption: 1 })).toEqual([]);
      expect(problemsOf(http, { hooks: [], somethingNew: { a: 1 } })).toEqual([]);
    });
  });
});

describe("isLoopbackHost", () => {
  it("accepts localhost, 127.0.0.0/8 and ::1", () => {
    for (const host of [
      "localhost",
      "LocalHost",
      "localhost.",
      "127.0.0.1",
      "127.1.2.3",
      "::1",
      "[::1]",
    ]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
  });

  it("refuses every other host", () => {
    for (const host of [
      "example.com",
      "localhost.example.com",
      "mylocalhost",
      "126.0.0.1",
      "128.0.0.1",
      "127.0.0.256",
      "127.0.0",
      "0.0.0.0",
      "::",
      "[::2]",
      "",
    ]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe("validateServers", () => {
  it("accepts a list of distinct valid rows", () => {
    expect(validateServers([stdio, http])).toEqual([]);
    expect(validateServers([])).toEqual([]);
  });

  it("prefixes each row's problems with its id", () => {
    expect(validateServers([{ ...stdio, lazy: 1 }])).toEqual([
      "`git`: `lazy` must be true or false, got 1",
    ]);
  });

  it("prefixes the problems of a row without an id with its index", () => {
    const { id: _id, ...noId } = http;
    expect(validateServers([stdio, noId])).toEqual(["row 1: `id` is missing; every row needs one"]);
    expect(validateServers([stdio, 42])).toEqual([
      "row 1: a server row must be an object, got a number",
    ]);
  });

  it("reports a duplicate id once, naming the rows", () => {
    const problems = validateServers([stdio, http, { ...http, id: "git" }]);
    expect(problems).toEqual(["`git`: the id is used by more than one row (rows 0, 2)"]);
  });

  it("reports two rows sharing an effective slug, the lower id keeping it", () => {
    const problems = validateServers([
      { ...stdio, id: "zeta", slug: "tools" },
      { ...http, id: "alpha", slug: "tools" },
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^`zeta`: shares the slug `tools` with `alpha`/);
  });

  it("counts a row's id as its slug when it has none", () => {
    const problems = validateServers([stdio, { ...http, slug: "git" }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^`git`: shares the slug `git` with `docs`/);
    expect(validateServers([stdio, { ...http, slug: "" }])).toEqual([]);
  });

  it("does not report a duplicate id a second time as a shared slug", () => {
    expect(validateServers([stdio, stdio])).toHaveLength(1);
  });

  it("does not call slugs that differ only in case shared", () => {
    expect(validateServers([stdio, { ...http, slug: "GIT" }])).toEqual([]);
  });
});

describe("names no row can take", () => {
  it("refuses an id or slug holding `__` or ending in `_`, which would blur where the slug ends", () => {
    for (const patch of [{ id: "a__b" }, { slug: "x__y" }, { id: "a_" }, { slug: "s_" }]) {
      const [problem, ...rest] = problemsOf(stdio, patch);
      expect(rest).toEqual([]);
      expect(problem).toMatch(/may not hold `__` or end in `_`/);
    }
    expect(problemsOf(stdio, { id: "a_b-c" })).toEqual([]);
  });

  it("leaves out the later of two rows with one slug, naming the one that keeps it, with its line", () => {
    const text = [
      "{",
      '  "mcpServers": {',
      '    "one": { "command": "a", "slug": "tools" },',
      '    "two": { "command": "b", "slug": "tools" },',
      '    "tools": { "command": "c" }',
      "  }",
      "}",
    ].join("\n");
    const parsed = parseMcpJson(text, { env: {} });
    expect(parsed.rows.map((row) => row.id)).toEqual(["one"]);
    expect(parsed.problems).toEqual([
      {
        message: expect.stringMatching(
          /^`two`: shares the slug `tools` with `one`, which keeps it/,
        ),
        id: "two",
        line: 4,
        column: 5,
      },
      expect.objectContaining({ id: "tools", line: 5 }),
    ]);
  });

  it("lets the serving row keep its slug when a new row wants it, wherever the new row stands", () => {
    const text =
      '{ "mcpServers": { "new": { "command": "a", "slug": "s" }, "old": { "command": "b", "slug": "s" } } }';
    const parsed = parseMcpJson(text, { env: {}, serving: ["old"] });
    expect(parsed.rows.map((row) => row.id)).toEqual(["old"]);
    expect(parsed.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^`new`: shares the slug `s` with `old`, which keeps it/),
    ]);
  });
});

/** The messages and positions `mcpool validate` would print for a file. */
function fileProblems(
  text: string,
): { message: string; line?: number | undefined; column?: number | undefined }[] {
  return parseMcpJson(text, { env: {} }).problems.map(({ message, line, column }) => ({
    message,
    line,
    column,
  }));
}

describe("typos in mcp.json", () => {
  it("names a misspelt key of a row and the key it means", () => {
    const text = JSON.stringify({
      mcpServers: { a: { command: "node", evn: { X: "1" } }, ok: { command: "node" } },
    });
    const parsed = parseMcpJson(text, { env: {} });
    expect(parsed.problems.map((p) => p.message)).toEqual([
      "`a`: `evn` is not a setting; did you mean `env`?",
    ]);
    expect(parsed.rows.map((row) => row.id)).toEqual(["ok"]);
  });

  it("takes a key differing only in case for a typo", () => {
    const text = JSON.stringify({ mcpServers: { a: { command: "node", callTimeoutMS: 5 } } });
    expect(fileProblems(text).map((p) => p.message)).toEqual([
      "`a`: `callTimeoutMS` is not a setting; did you mean `callTimeoutMs`?",
    ]);
  });

  it("leaves a host's own keys, near no setting of ours, alone", () => {
    const text = JSON.stringify({
      mcpServers: { a: { command: "node", autoApprove: [], description: "mine" } },
    });
    expect(fileProblems(text)).toEqual([]);
  });

  it("reports a duration written as text", () => {
    const text = JSON.stringify({ mcpServers: { a: { command: "node", callTimeoutMs: "30s" } } });
    expect(fileProblems(text).map((p) => p.message)).toEqual([
      expect.stringMatching(
        /^`a`: `callTimeoutMs` must be a whole number of milliseconds.*got "30s"$/,
      ),
    ]);
  });

  it("reports a misspelt top-level section instead of taking it for a server", () => {
    const text = '{\n  "mcpServer": {\n    "a": { "command": "node" }\n  }\n}\n';
    expect(fileProblems(text)).toEqual([
      { message: "`mcpServer` is not a setting; did you mean `mcpServers`?", line: 2, column: 3 },
    ]);
  });

  it("keeps a server of a bare map whose name is near a section's", () => {
    const parsed = parseMcpJson(JSON.stringify({ server: { command: "node" } }), { env: {} });
    expect(parsed.problems).toEqual([]);
    expect(parsed.rows.map((row) => row.id)).toEqual(["server"]);
  });

  it("reports the pool section's typos, types and enum values at their key", () => {
    const text = [
      "{",
      '  "mcpServers": {},',
      '  "mcpool": {',
      '    "childEnv": "nope",',
      '    "callTimeoutMS": 5,',
      '    "lazy": "yes",',
      '    "maxConcurrentStarts": -1,',
      '    "elicitationModes": ["form", "mail"],',
      '    "resultCache": { "ttlMS": 5 }',
      "  }",
      "}",
    ].join("\n");
    expect(fileProblems(text)).toEqual([
      {
        message:
          '`mcpool.childEnv` must be "inherit", "minimal" or a list of variable names; got "nope"',
        line: 4,
        column: 5,
      },
      {
        message: "`mcpool.callTimeoutMS` is not a setting; did you mean `mcpool.callTimeoutMs`?",
        line: 5,
        column: 5,
      },
      { message: '`mcpool.lazy` must be true or false; got "yes"', line: 6, column: 5 },
      {
        message: "`mcpool.maxConcurrentStarts` must be a whole number ≥ 0; got -1",
        line: 7,
        column: 5,
      },
      {
        message: '`mcpool.elicitationModes` must be a list of "form" and "url"; got other values',
        line: 8,
        column: 5,
      },
      {
        message:
          "`mcpool.resultCache.ttlMS` is not a setting; did you mean `mcpool.resultCache.ttlMs`?",
        line: 9,
        column: 5,
      },
    ]);
  });

  it("accepts every pool option the README documents", () => {
    const text = JSON.stringify({
      mcpool: {
        callTimeoutMs: 30_000,
        idleTimeoutMs: 0,
        childEnv: ["PATH"],
        lazy: true,
        indexTools: false,
        sampling: false,
        resultCache: { ttlMs: 1000, maxEntries: 10 },
        elicitationModes: [],
        maxDescriptionChars: 200,
        pingTimeoutMs: 0,
      },
    });
    expect(fileProblems(text)).toEqual([]);
  });

  it("says a syntax error in words, its position once", () => {
    const text = '{\n  "mcpServers": {\n    "a" { "command": "node" }\n  }\n}\n';
    expect(() => parseMcpJson(text)).toThrow(
      expect.objectContaining({
        reason: "expected a `:` between the key and its value",
        message: "expected a `:` between the key and its value at line 3, column 9",
        line: 3,
        column: 9,
      }),
    );
  });
});
