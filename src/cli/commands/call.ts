/**
 * The arguments of `mcpool call QUALIFIED [JSON | - | @FILE]`: written inline, read
 * from stdin (`-`) or from a file (`@FILE`), so an argument of any size gets past the
 * system's limit on a command line. Whatever is wrong is one line naming where the JSON came
 * from: a file that cannot be read, text that is not JSON (with its line and column), a
 * value that is not an object.
 */
import { readFile } from "node:fs/promises";
import { strictJsonError } from "../../config/json-text.js";
import { UsageError } from "../output/usage-error.js";
import { EXIT } from "../output/exit-codes.js";
import { withProgress } from "../output/progress.js";
import type { CommandContext } from "./context.js";

/**
 * The most the arguments may hold: what one frame to the daemon carries (16 MiB, the
 * protocol's cap); past it the call could not be sent anyway.
 */
const MAX_ARGUMENT_BYTES = 16 * 1024 * 1024;

/** Everything `stream` holds, up to the cap. */
async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    total += buffer.length;
    if (total > MAX_ARGUMENT_BYTES) {
      throw new UsageError(
        "the arguments on stdin are larger than 16 MiB, the most a call carries",
      );
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A failed read of the arguments file, said without a stack or an errno number. */
function unreadable(path: string, error: NodeJS.ErrnoException): UsageError {
  const why =
    error.code === "ENOENT"
      ? "no such file"
      : error.code === "EACCES" || error.code === "EPERM"
        ? "permission denied"
        : error.code === "EISDIR"
          ? "it is a directory"
          : error.message;
  return new UsageError(`cannot read the arguments file ${path}: ${why}`);
}

/** The arguments for `spec` (the positional after the tool name); `{}` when there is none. */
export async function callArguments(
  spec: string | undefined,
  stdin: NodeJS.ReadableStream,
): Promise<Record<string, unknown>> {
  if (spec === undefined) return {};
  let text: string;
  let source: string;
  if (spec === "-") {
    text = await readAll(stdin);
    source = "the arguments on stdin";
  } else if (spec.startsWith("@")) {
    const path = spec.slice(1);
    if (path === "") throw new UsageError("call @FILE needs a file name after the @");
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      throw unreadable(path, error as NodeJS.ErrnoException);
    }
    if (Buffer.byteLength(text) > MAX_ARGUMENT_BYTES) {
      throw new UsageError(`${path} is larger than 16 MiB, the most a call carries`);
    }
    source = `the arguments in ${path}`;
  } else {
    text = spec;
    source = "the arguments of call";
  }
  return parseArguments(text.replace(/^\uFEFF/, ""), source);
}

/** `text` as the arguments object, or a UsageError saying what `source` holds instead. */
export function parseArguments(text: string, source: string): Record<string, unknown> {
  if (text.trim() === "") {
    throw new UsageError(`${source} are empty; give a JSON object ({} for no arguments)`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const where = strictJsonError(text);
    throw new UsageError(
      where
        ? `${source} are not JSON: ${where.reason} at line ${where.line}, column ${where.column}`
        : `${source} are not JSON: ${(error as Error).message}`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const kind = Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`;
    throw new UsageError(`${source} must be a JSON object, not ${kind}`);
  }
  return value as Record<string, unknown>;
}

/**
 * More than a tool and its arguments: said before anything is read or called, and when the
 * first two read as a server and its tool, the one name they make.
 */
function tooManyArguments(args: readonly string[]): UsageError {
  const [server, tool] = args;
  const hint =
    !server!.includes("__") && /^[\w.-]+$/.test(tool!)
      ? ` (a tool is named <server>__<tool>: \`mcpool call ${server}__${tool} …\`)`
      : "";
  return new UsageError(
    `call takes a tool's qualified name and one JSON object of arguments, not ${args.length} arguments${hint}`,
  );
}

/** `mcpool call QUALIFIED [JSON | - | @FILE]`: `--json` prints the raw CallToolResult. */
export async function callCommand(context: CommandContext): Promise<number> {
  const name = context.arg(0, "QUALIFIED tool name");
  if (context.args.length > 2) throw tooManyArguments(context.args);
  const input = await callArguments(context.args[1], process.stdin);
  return context.withClient(async (client) => {
    if (context.json) {
      const raw = await withProgress(`calling ${name}`, () =>
        client.call(name, input, { raw: true }),
      );
      context.out(JSON.stringify(raw, null, 2));
    } else {
      context.out(await withProgress(`calling ${name}`, () => client.call(name, input)));
    }
    return EXIT.ok;
  });
}
