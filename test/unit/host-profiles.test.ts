/**
 * Host profiles: the profile of a host's declared
 * capabilities and the key children are shared by, and the pool's choice of child, over
 * the SDK's in-memory pair: a server whose tools depend on its client's capabilities gets
 * a child per capability set; one whose tools do not is served by its own connection once
 * that is known; one that asks for roots gets a child per roots set.
 */
import { describe, expect, it } from "vitest";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  capabilityKey,
  hostProfile,
  isHostProfile,
  profileKey,
  rootsKey,
} from "../../protocol/src/host-profile.js";
import { profileCapabilities } from "../../src/pool/server/profile-entry.js";
import type { PoolLog } from "../../src/pool/core/types.js";
import { makePool } from "../../src/testing/make-pool.js";
import { memoryRow } from "../../src/testing/memory-transport.js";

describe("the profile of a host's initialize", () => {
  it("reads sampling, the elicitation modes (an empty object is form) and roots", () => {
    expect(hostProfile({})).toEqual({});
    expect(hostProfile({ sampling: {}, elicitation: {} })).toEqual({
      sampling: true,
      elicitation: ["form"],
    });
    expect(hostProfile({ elicitation: { url: {} } })).toEqual({ elicitation: ["url"] });
    expect(hostProfile({ roots: { listChanged: true } }, [{ uri: "file:///a" }])).toEqual({
      roots: [{ uri: "file:///a" }],
    });
    // Roots listed by a host that does not declare them are not its profile's.
    expect(hostProfile({}, [{ uri: "file:///a" }])).toEqual({});
  });

  it("reads the extensions a host declares, each whose settings are an object, up to 4096 characters", () => {
    const ui = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
    expect(hostProfile({ extensions: ui })).toEqual({ extensions: ui });
    expect(hostProfile({ extensions: { ...ui, broken: "yes", list: [] } })).toEqual({
      extensions: ui,
    });
    expect(hostProfile({ extensions: {} })).toEqual({});
    expect(hostProfile({ extensions: "ui" })).toEqual({});
    const heavy = { "vendor/big": { blob: "x".repeat(5000) } };
    expect(hostProfile({ extensions: heavy, sampling: {} })).toEqual({ sampling: true });
    // One key for one declaration, whatever the order of its keys; another for other settings.
    const a = { "x/a": { one: 1, two: [2] }, "x/b": {} };
    const b = { "x/b": {}, "x/a": { two: [2], one: 1 } };
    expect(capabilityKey({ extensions: a })).toBe(capabilityKey({ extensions: b }));
    expect(capabilityKey({ extensions: a })).toBe(
      'extensions:{"x/a":{"one":1,"two":[2]},"x/b":{}}',
    );
    expect(capabilityKey({ extensions: { "x/a": { one: 2 } } })).not.toBe(
      capabilityKey({ extensions: { "x/a": { one: 1 } } }),
    );
    expect(capabilityKey({ sampling: true, extensions: { "x/b": {} }, roots: [] })).toBe(
      'sampling,extensions:{"x/b":{}},roots',
    );
    expect(isHostProfile({ extensions: ui })).toBe(true);
    expect(isHostProfile({ extensions: { "x/a": 1 } })).toBe(false);
    expect(isHostProfile({ extensions: heavy })).toBe(false);
    expect(profileCapabilities({ extensions: ui })).toEqual({ extensions: ui });
  });

  it("keys two hosts alike when they declare alike, whatever their order", () => {
    const one = hostProfile({ roots: {} }, [{ uri: "file:///b" }, { uri: "file:///a", name: "a" }]);
    const two = hostProfile({ roots: {} }, [{ uri: "file:///a", name: "a" }, { uri: "file:///b" }]);
    expect(profileKey(one)).toBe(profileKey(two));
    expect(capabilityKey(one)).toBe("roots");
    expect(profileKey(one)).not.toBe(
      profileKey(hostProfile({ roots: {} }, [{ uri: "file:///b" }])),
    );
    expect(capabilityKey({ elicitation: ["url", "form"], sampling: true })).toBe(
      "sampling,elicitation:form+url",
    );
    expect(capabilityKey({})).toBe("none");
    expect(rootsKey({})).toBeUndefined();
    // Declaring roots with none listed is not declaring none.
    expect(profileKey({ roots: [] })).not.toBe(profileKey({}));
  });

  it("checks a wire profile's shape", () => {
    expect(isHostProfile({ sampling: true, elicitation: ["form"], roots: [{ uri: "x" }] })).toBe(
      true,
    );
    expect(isHostProfile({ sampling: "yes" })).toBe(false);
    expect(isHostProfile({ elicitation: ["voice"] })).toBe(false);
    expect(isHostProfile({ roots: [{ name: "no uri" }] })).toBe(false);
    expect(isHostProfile([])).toBe(false);
  });

  it("declares to a child only what the host declared", () => {
    expect(profileCapabilities({})).toEqual({});
    expect(
      profileCapabilities({ sampling: true, elicitation: ["form", "url"], roots: [] }),
    ).toEqual({ sampling: {}, elicitation: { form: {}, url: {} }, roots: {} });
  });
});

/** A server listing `base`, plus `asks` for a client that declares elicitation; asks for roots when told to. */
function gatedServer(options: { asksRoots?: boolean; opened: string[] }): () => Server {
  return () => {
    const server = new Server({ name: "gated", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.oninitialized = () => {
      const caps = server.getClientCapabilities() ?? {};
      options.opened.push(capabilityKey(hostProfile(caps)));
      if (options.asksRoots && caps.roots) void server.listRoots().catch(() => undefined);
    };
    server.setRequestHandler(ListToolsRequestSchema, () => {
      const caps = server.getClientCapabilities() ?? {};
      const tools = [{ name: "base", inputSchema: { type: "object" as const } }];
      if (caps.elicitation) tools.push({ name: "asks", inputSchema: { type: "object" as const } });
      return { tools };
    });
    server.setRequestHandler(CallToolRequestSchema, async () => {
      if (!options.asksRoots) return { content: [{ type: "text", text: "no roots" }] };
      const { roots } = await server.listRoots();
      return { content: [{ type: "text", text: roots.map((root) => root.uri).join(" ") }] };
    });
    return server;
  };
}

describe("which child serves a host profile", () => {
  const names = (tools: { function: { name: string } }[]): string[] =>
    tools.map((tool) => tool.function.name);

  it("gives a host without elicitation a child of its own when the tools depend on it", async () => {
    const opened: string[] = [];
    const pool = makePool({
      servers: { gated: gatedServer({ opened }) },
      onElicit: () => ({ action: "decline" }),
    });
    try {
      await pool.sync([memoryRow("gated")]);
      expect(names(pool.tools())).toEqual(["gated__base", "gated__asks"]);
      expect(names(await pool.hostTools({}))).toEqual(["gated__base"]);
      expect(names(await pool.hostTools({ elicitation: ["form"] }))).toEqual([
        "gated__base",
        "gated__asks",
      ]);
      // The pool's own profile is the row's own connection: no third child.
      expect(opened).toEqual(["elicitation:form", "none"]);
      expect(pool.state()[0]?.profiles?.map((child) => child.capabilities)).toEqual(["none"]);
    } finally {
      await pool.close();
    }
  });

  it("serves a profile from the row's own connection once its list is found the same", async () => {
    const opened: string[] = [];
    const pool = makePool({
      servers: { gated: gatedServer({ opened }) },
      onSample: () => ({ model: "m", role: "assistant", content: { type: "text", text: "" } }),
    });
    try {
      await pool.sync([memoryRow("gated")]);
      expect(names(await pool.hostTools({}))).toEqual(["gated__base"]);
      expect(names(await pool.hostTools({}))).toEqual(["gated__base"]);
      expect(await pool.call("gated__base", {}, { profile: {} })).toBe("no roots");
      // Opened once for the pool, once to find out: never again.
      expect(opened).toEqual(["sampling", "none"]);
      expect(pool.state()[0]?.profiles).toBeUndefined();
    } finally {
      await pool.close();
    }
  });

  it("gives a server that asks for roots a child per roots set, answering with that set", async () => {
    const opened: string[] = [];
    const pool = makePool({ servers: { gated: gatedServer({ opened, asksRoots: true }) } });
    const a = { roots: [{ uri: "file:///a" }] };
    const b = { roots: [{ uri: "file:///b" }] };
    try {
      await pool.sync([memoryRow("gated")]);
      expect(await pool.call("gated__base", {}, { profile: a })).toBe("file:///a");
      expect(await pool.call("gated__base", {}, { profile: b })).toBe("file:///b");
      expect(await pool.call("gated__base", {}, { profile: a })).toBe("file:///a");
      expect(opened).toEqual(["none", "roots", "roots"]);
      const roots = pool.state()[0]?.profiles?.map((child) => child.roots);
      expect(roots).toEqual([["file:///a"], ["file:///b"]]);
    } finally {
      await pool.close();
    }
  });
});

describe("the cap on a row's children for host profiles", () => {
  let release: () => void = () => undefined;
  /** A pool of one row (at most one child for host profiles) whose `hold` answers once released. */
  const rootsPool = (log: PoolLog = {}) => {
    const held = new Promise<void>((resolve) => (release = resolve));
    return makePool({
      log,
      maxChildrenPerServer: 1,
      connectTimeoutMs: 2_000,
      servers: {
        roots: () => {
          const server = new Server(
            { name: "roots", version: "1.0.0" },
            { capabilities: { tools: {} } },
          );
          server.oninitialized = () => {
            if (server.getClientCapabilities()?.roots) {
              void server.listRoots().catch(() => undefined);
            }
          };
          server.setRequestHandler(ListToolsRequestSchema, () => ({
            tools: [
              { name: "where", inputSchema: { type: "object" as const } },
              { name: "hold", inputSchema: { type: "object" as const } },
            ],
          }));
          server.setRequestHandler(CallToolRequestSchema, async (request) => {
            if (request.params.name === "hold") await held;
            const { roots } = await server.listRoots();
            return { content: [{ type: "text", text: roots.map((root) => root.uri).join(" ") }] };
          });
          return server;
        },
      },
    });
  };
  const project = (name: string) => ({ roots: [{ uri: `file:///${name}` }] });

  it("ends the least recently used idle child for a new project, and names the cap when every child is busy", async () => {
    const pool = rootsPool();
    try {
      await pool.sync([memoryRow("roots")]);
      expect(await pool.call("roots__where", {}, { profile: project("a") })).toBe("file:///a");
      // Past the cap, the idle child of project a ends for project b's.
      expect(await pool.call("roots__where", {}, { profile: project("b") })).toBe("file:///b");
      expect(pool.state()[0]?.profiles?.map((child) => child.roots)).toEqual([["file:///b"]]);
      // Project b's child busy: project c waits, then is refused, naming the cap.
      const holding = pool.call("roots__hold", {}, { profile: project("b") });
      await expect(pool.call("roots__where", {}, { profile: project("c") })).rejects.toThrow(
        /mcpool\.maxChildrenPerServer is 1/,
      );
      release();
      expect(await holding).toBe("file:///b");
      expect(await pool.call("roots__where", {}, { profile: project("c") })).toBe("file:///c");
    } finally {
      release();
      await pool.close();
    }
  });

  it("serves a call that reaches a child as the cap ends it on the project's next child", async () => {
    // Project a's call comes in the moment the cap picks project a's idle child to end for
    // project b's (the pool says so, then closes it): it is served by a child of its own again,
    // never written to the one being closed.
    let again: Promise<unknown> | undefined;
    const pool = rootsPool({
      info: (message) => {
        if (message.includes("ends for a new one")) {
          again ??= pool.call("roots__where", {}, { profile: project("a") });
        }
      },
    });
    try {
      await pool.sync([memoryRow("roots")]);
      expect(await pool.call("roots__where", {}, { profile: project("a") })).toBe("file:///a");
      expect(await pool.call("roots__where", {}, { profile: project("b") })).toBe("file:///b");
      expect(again).toBeDefined();
      expect(await again).toBe("file:///a");
    } finally {
      await pool.close();
    }
  });
});
