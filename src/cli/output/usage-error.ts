/**
 * Bad input to the `mcpool` command: said in one line on stderr, exit 2 (exit-codes.ts).
 * `showUsage` for an unknown command, where the list of commands is the answer.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    message: string,
    readonly showUsage = false,
  ) {
    super(message);
  }
}
