/**
 * The daemon's env file, parsed: KEY=VALUE lines, comments, `export`, quotes;
 * a bad line is named by its number, never by its value.
 */
import { describe, expect, it } from "vitest";
import { parseEnvFile } from "../../src/daemon/process/env-file.js";
import { daemonEnvironment } from "../../client/src/daemon-start.js";

describe("the env file", () => {
  it("reads KEY=VALUE lines, skipping comments and blank lines", () => {
    const file = parseEnvFile("# a comment\n\nGITHUB_TOKEN=ghp_1\nexport API_KEY = 'a b'\n");
    expect(file.vars).toEqual({ GITHUB_TOKEN: "ghp_1", API_KEY: "a b" });
    expect(file.problems).toEqual([]);
  });

  it("keeps a value as written after its first equals sign, with no expansion", () => {
    expect(parseEnvFile('URL=https://x/?a=b\nRAW="$HOME"\n').vars).toEqual({
      URL: "https://x/?a=b",
      RAW: "$HOME",
    });
  });

  it("names a line that is not NAME=VALUE by its number and never shows its text", () => {
    const file = parseEnvFile("OK=1\nsecret-without-a-name\n9BAD=x\n");
    expect(file.vars).toEqual({ OK: "1" });
    expect(file.problems).toEqual([
      "line 2: not NAME=VALUE (skipped)",
      "line 3: not NAME=VALUE (skipped)",
    ]);
    expect(file.problems.join(" ")).not.toContain("secret");
  });
});

describe("an auto-started daemon's environment", () => {
  it("keeps what a service would have and drops the rest of the agent's variables", () => {
    const env = daemonEnvironment(
      {
        PATH: "/usr/bin",
        HOME: "/home/a",
        XDG_CONFIG_HOME: "/home/a/.config",
        LANG: "C.UTF-8",
        LC_ALL: "C",
        USER: "a",
        MCPOOL_CONFIG: "/x/mcp.json",
        AGENT_A_SECRET: "canary",
        OPENAI_API_KEY: "sk-1",
        NODE_OPTIONS: "--require /tmp/evil.js",
      },
      "/run/mcpool.sock",
    );
    expect(Object.keys(env).sort()).toEqual(
      [
        "HOME",
        "LANG",
        "LC_ALL",
        "MCPOOL_CONFIG",
        "MCPOOL_SOCKET",
        "PATH",
        "USER",
        "XDG_CONFIG_HOME",
      ].sort(),
    );
    expect(env.MCPOOL_SOCKET).toBe("/run/mcpool.sock");
    expect(env.PATH?.split(":")).toContain("/usr/bin");
  });
});
