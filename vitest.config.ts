import { configDefaults, defineConfig } from "vitest/config";
import { LongestFirst } from "./test/sequencer.js";

/** Files that import the product's modules and start no process: they share a worker's modules. */
const inProcess = ["test/unit/**/*.test.ts", "protocol/test/**/*.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests spawn real children and wait on them; three files at once kept the two
    // cores busy where two left a fifth of their time idle (1,033 s against 1,166 s a run), and
    // four use the most of what three still left (a whole quiet run 724 s against 761 s).
    fileParallelism: true,
    maxWorkers: 4,
    globalSetup: ["test/global-setup.ts"],
    // The longest files first, from the last whole run when vitest has no cache of its own.
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: inProcess,
          // Each file in a fresh worker spent three times as long importing the modules
          // (zod schemas, the SDKs) as running its tests; every file restores what it changes
          // (timers, environment variables, spies), so one worker runs many files.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/**/*.test.ts", "client/test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...inProcess],
          // A fresh worker per file spent 0.6 CPU-s loading the helpers and both SDKs again; the
          // files restore what they change (listeners, environment) and start their own
          // processes, so a worker runs many.
          isolate: false,
        },
      },
    ],
  },
});
