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
    files: ["src/config/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: ["node:*", "@modelcontextprotocol/*", "../pool/*", "../daemon/*", "../cli/*"] },
      ],
    },
  },
  {
    files: ["src/pool/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: ["../daemon/*", "../cli/*", "../bridge/*"] }],
    },
  },
  {
    // The bridge is a client of the daemon (SPEC §1): mcpool-client, never the pool itself.
    files: ["src/bridge/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: ["../pool/*", "../daemon/*", "../cli/*", "../config/*"] },
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
