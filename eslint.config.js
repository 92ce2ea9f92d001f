import js from "@eslint/js";
import tseslint from "typescript-eslint";

import { ROOMS } from "./layers.js";

/**
 * What a file of `part` may not import, as no-restricted-imports patterns: `base`, what the
 * whole part may not reach (any depth, so a room's `../../daemon/` is caught as the root's
 * `../daemon/` is), and for a file in a room, the rooms above it and the part's facade.
 */
function layerConfigs(part, base) {
  const rooms = ROOMS[part] ?? [];
  const configs = [
    {
      files: [`${part}/*.ts`],
      rules: { "no-restricted-imports": ["error", { patterns: base }] },
    },
  ];
  rooms.forEach((room, rank) => {
    const above = rooms.slice(rank + 1);
    const patterns = [
      ...base,
      {
        regex: String.raw`^\.\./[^/]+\.js$`,
        message: `${part}/${room} is a room: it never imports ${part}'s facade`,
      },
    ];
    if (above.length > 0) {
      patterns.push({
        regex: `^\\.\\./(${above.join("|")})/`,
        message: `rooms import downwards (layers.js): ${room} sits below ${above.join(", ")}`,
      });
    }
    configs.push({
      files: [`${part}/${room}/**/*.ts`],
      rules: { "no-restricted-imports": ["error", { patterns }] },
    });
  });
  return configs;
}

const TESTING = {
  group: ["../testing/*", "../../testing/*"],
  message: "src/testing is for tests; production code uses src/demo",
};

export default tseslint.config(
  { ignores: ["**/dist/**", "node_modules/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
    },
  },
  {
    files: ["src/**/*.ts", "protocol/src/**/*.ts", "client/src/**/*.ts"],
    ignores: ["src/cli/**"],
    rules: { "no-console": "error" },
  },
  {
    // src/config is browser-safe (the `mcpool/servers` and `mcpool/hooks` entries): no Node,
    // no SDK, no layer above it; from mcpool-protocol only types, which compile away.
    files: ["src/config/**/*.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "mcpool-protocol",
              allowTypeImports: true,
              message: "src/config takes only types from mcpool-protocol (import type)",
            },
          ],
          patterns: ["node:*", "@modelcontextprotocol/*", "../pool/*", "../daemon/*", "../cli/*"],
        },
      ],
    },
  },
  // src/pool is usable on its own: never the daemon, the CLI, the bridge or the
  // test helpers.
  ...layerConfigs("src/pool", [
    {
      regex: String.raw`^(\.\./)+(daemon|cli|bridge)/`,
      message: "src/pool never imports the daemon, the CLI or the bridge",
    },
    TESTING,
  ]),
  // The daemon serves the pool: config and pool below it, mcpool-client beside it;
  // never the CLI above it, the bridge (a client of the daemon) or the test helpers.
  ...layerConfigs("src/daemon", [
    { regex: String.raw`^(\.\./)+cli/`, message: "nothing imports src/cli" },
    { regex: String.raw`^(\.\./)+bridge/`, message: "the bridge is a client of the daemon" },
    TESTING,
  ]),
  // The command line: above everything; its rooms stack like the others.
  ...layerConfigs("src/cli", [TESTING]),
  {
    // mcpool-client is the wire contract and its client: mcpool-protocol and Node only,
    // never src/ (the daemon's side) or the MCP SDK.
    files: ["client/src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["../../src/*", "mcpool", "mcpool/*"], message: "client/ never imports src/" },
            { group: ["@modelcontextprotocol/*"], message: "client/ never imports the MCP SDK" },
          ],
        },
      ],
    },
  },
  {
    // The SDK v2 loads with the first modern host, never at start: only the bridge's modern
    // room imports it; the rest of src/ takes its types alone, which compile away.
    files: ["src/**/*.ts"],
    ignores: ["src/bridge/modern/**", "src/config/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@modelcontextprotocol/server", "@modelcontextprotocol/server/*"],
              allowTypeImports: true,
              message: "the SDK v2 is src/bridge/modern's, loaded lazily: import type only",
            },
          ],
        },
      ],
    },
  },
  // The bridge is a client of the daemon: mcpool-client, never the pool itself.
  ...layerConfigs("src/bridge", [
    {
      regex: String.raw`^(\.\./)+(pool|daemon|cli|config)/`,
      message: "the bridge is a client of the daemon: mcpool-client, never src/",
    },
    TESTING,
  ]),
  {
    // The wire contract (mcpool-protocol) is runtime-free: no package, no Node built-in.
    files: ["protocol/src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "^(?!\\./)", message: "protocol/src imports only its own files." }] },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        setTimeout: "readonly",
        setInterval: "readonly",
        clearTimeout: "readonly",
        Buffer: "readonly",
        AbortController: "readonly",
      },
    },
  },
);
