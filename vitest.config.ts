import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "protocol/test/**/*.test.ts", "client/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests spawn real children; two cores are shared between files.
    fileParallelism: true,
    maxWorkers: 2,
    globalSetup: ["test/global-setup.ts"],
  },
});
