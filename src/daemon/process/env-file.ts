/**
 * The daemon's env file: the variables the user wants every daemon to have,
 * however it was started — by a service manager, `mcpool serve`, or an agent's auto-start,
 * which hands it only the service's environment. This is where the secrets that `${VAR}`
 * placeholders in mcp.json read belong. `KEY=VALUE` lines; `#` comments and blank lines are
 * skipped, `export ` before a key is allowed, one pair of matching quotes around the value is
 * removed, nothing else is interpreted (no `$` expansion, no escapes). A value here wins
 * over the daemon's own environment. Read once, when the daemon starts.
 */
import { readFileSync, statSync } from "node:fs";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface EnvFile {
  /** The variables, in file order; a later line wins. */
  vars: Record<string, string>;
  /** Problems by line number, for the log: never a value, which may be a secret. */
  problems: string[];
}

/** `text` as an env file. Pure. */
export function parseEnvFile(text: string): EnvFile {
  const vars: Record<string, string> = {};
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const body = line.startsWith("export ") ? line.slice("export ".length).trimStart() : line;
    const eq = body.indexOf("=");
    const name = eq < 0 ? body : body.slice(0, eq).trim();
    if (eq < 0 || !NAME.test(name)) {
      problems.push(`line ${index + 1}: not NAME=VALUE (skipped)`);
      return;
    }
    let value = body.slice(eq + 1).trim();
    const quote = value[0];
    if (value.length >= 2 && (quote === '"' || quote === "'") && value.endsWith(quote)) {
      value = value.slice(1, -1);
    }
    vars[name] = value;
  });
  return { vars, problems };
}

/**
 * The env file at `path`, or undefined when there is none. Anything else that stops the
 * read (a directory, no permission) is a problem, not a crash: the daemon starts without it.
 */
export function readEnvFile(path: string): (EnvFile & { readable: boolean }) | undefined {
  let text: string;
  let open = false;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) {
      return { vars: {}, problems: ["not a regular file (not read)"], readable: false };
    }
    open = (stats.mode & 0o077) !== 0;
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    return { vars: {}, problems: [`cannot be read: ${code ?? String(error)}`], readable: false };
  }
  const parsed = parseEnvFile(text);
  // It holds secrets: said, not refused, so that a daemon still starts with them.
  if (open) parsed.problems.push("readable by other users: `chmod 600` it");
  return { ...parsed, readable: true };
}
