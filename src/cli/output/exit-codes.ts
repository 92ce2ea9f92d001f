/**
 * The `mcpool` command's exit codes: one per kind of failure, the same for every command.
 * This table is the list; `EXIT` names its codes for the code that returns them, the usage
 * text prints it, and test/unit/cli-help.test.ts holds the README's exit-code table to it.
 */

export interface ExitCode {
  code: number;
  /** The key in {@link EXIT}. */
  name: string;
  /** What the code tells a script, as the README and `mcpool --help` say it. */
  meaning: string;
}

export const EXIT_CODES = [
  { code: 0, name: "ok", meaning: "done" },
  {
    code: 1,
    name: "failed",
    meaning:
      "the call or operation failed: a tool error, a server that cannot be reached, a failed probe",
  },
  {
    code: 2,
    name: "badInput",
    meaning:
      "bad input: an unknown command, option, server id or tool name, arguments that are not a JSON object, a config file with problems",
  },
  { code: 3, name: "notRunning", meaning: "the daemon is not running (`mcpool serve` starts it)" },
  // 128 + SIGINT, as a shell reports a command ended by Ctrl-C.
  { code: 130, name: "interrupted", meaning: "`top` ended by Ctrl-C or a signal" },
  // 128 + SIGPIPE, as a shell reports a command that wrote into a closed pipe.
  {
    code: 141,
    name: "brokenPipe",
    meaning: "the reader of stdout or stderr went away before everything was written",
  },
] as const satisfies readonly ExitCode[];

type Names = (typeof EXIT_CODES)[number]["name"];

/** The codes by name: `EXIT.badInput` is 2. */
export const EXIT = Object.fromEntries(EXIT_CODES.map((e) => [e.name, e.code])) as {
  readonly [N in Names]: Extract<(typeof EXIT_CODES)[number], { name: N }>["code"];
};
