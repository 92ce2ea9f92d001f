import js from "@eslint/js";
import tseslint from "typescript-eslint";

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
  {
    files: ["src/pool/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: ["../daemon/*", "../cli/*", "../bridge/*", "../testing/*"] },
      ],
    },
  },
  {
    // The daemon (SPEC §1) serves the pool: config and pool below it, mcpool-client beside it;
    // never the CLI above it, the bridge (a client of the daemon) or the test helpers.
    files: ["src/daemon/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["../cli/*"], message: "nothing imports src/cli" },
            { group: ["../bridge/*"], message: "the bridge is a client of the daemon" },
            {
              group: ["../testing/*"],
              message: "src/testing is for tests; production code uses src/demo",
            },
          ],
        },
      ],
    },
  },
  {
    // mcpool-client is the wire contract and its client (SPEC §1): json-rpc-2.0 and Node only,
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
    // The bridge is a client of the daemon (SPEC §1): mcpool-client, never the pool itself.
    files: ["src/bridge/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: ["../pool/*", "../daemon/*", "../cli/*", "../config/*", "../testing/*"] },
      ],
    },
  },
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
      },
    },
  },
);
