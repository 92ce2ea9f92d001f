#!/usr/bin/env node
/** The `mcpool` command. The only module allowed to call process.exit. */
import { demo } from "./demo.js";

const USAGE = `usage: mcpool <command>

commands:
  demo    pool the built-in echo server in this process, list its tools and call one
`;

async function main(argv: readonly string[]): Promise<number> {
  const [command] = argv;
  switch (command) {
    case "demo":
      await demo((line) => process.stdout.write(`${line}\n`));
      return 0;
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`mcpool: unknown command "${command}"\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`mcpool: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
