/**
 * The daemon's configuration file: read `mcp.json`, keep the last good rows
 * when a read fails, and say what is wrong with its position. A missing file at first start
 * is written as the embedded default; a file that disappears later keeps the pool running.
 */
import { randomUUID } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { ConfigStatus } from "mcpool-protocol";
import {
  ConfigSyntaxError,
  parseMcpJsonInTurns,
  type ConfigProblem,
} from "../../config/mcp-json.js";
import { nextTurn } from "../../pool/reconcile/batches.js";
import type { McpServerConfig } from "../../config/rows.js";
import { readConfigFile } from "./file.js";
import { starterConfig } from "./embedded-default.js";

export interface ConfigRead {
  rows: readonly McpServerConfig[];
  pool: Record<string, unknown>;
  status: ConfigStatus;
}

export class ConfigSource {
  readonly path: string;
  #rows: readonly McpServerConfig[] = [];
  #pool: Record<string, unknown> = {};
  #status: ConfigStatus;
  #everLoaded = false;

  constructor(path: string) {
    this.path = path;
    this.#status = { path, ok: false, problems: [], error: "not read yet" };
  }

  /** The last good rows. */
  get rows(): readonly McpServerConfig[] {
    return this.#rows;
  }

  get pool(): Record<string, unknown> {
    return this.#pool;
  }

  status(): ConfigStatus {
    return structuredClone(this.#status);
  }

  /**
   * Reads the file. On success its valid rows become the rows; on failure the last good
   * rows stay and the status says why. Never throws for the file's content.
   */
  async read(): Promise<ConfigRead> {
    let text: string;
    const file = await readConfigFile(this.path);
    if (file.ok) text = file.text;
    else if (!file.missing) return this.#failed(file.error);
    else if (this.#everLoaded) {
      return this.#failed("the file is missing");
    } else {
      text = starterConfig();
      await writeAtomically(this.path, text);
    }
    try {
      // A row that wants a serving row's slug is the one left out.
      const serving = this.#rows.map((row) => row.id);
      const parsed = await parseMcpJsonInTurns(text, nextTurn, { serving });
      this.#rows = parsed.rows;
      this.#pool = parsed.pool;
      this.#everLoaded = true;
      this.#status = {
        path: this.path,
        ok: true,
        loadedAt: Date.now(),
        problems: parsed.problems.map(located),
        warnings: parsed.warnings.map(located),
      };
    } catch (error) {
      if (error instanceof ConfigSyntaxError) {
        return this.#failed(error.message, error.line, error.column);
      }
      return this.#failed((error as Error).message);
    }
    return { rows: this.#rows, pool: this.#pool, status: this.status() };
  }

  #failed(error: string, line?: number, column?: number): ConfigRead {
    this.#status = {
      path: this.path,
      ok: false,
      error,
      ...(line !== undefined ? { line } : {}),
      ...(column !== undefined ? { column } : {}),
      ...(this.#status.loadedAt !== undefined ? { loadedAt: this.#status.loadedAt } : {}),
      problems: this.#status.problems,
      ...(this.#status.warnings !== undefined ? { warnings: this.#status.warnings } : {}),
    };
    return { rows: this.#rows, pool: this.#pool, status: this.status() };
  }
}

/** A problem or warning as status shows it: `line 7: …`. */
function located(p: ConfigProblem): string {
  return p.line !== undefined ? `line ${p.line}: ${p.message}` : p.message;
}

/** Where the daemon's log lines go; the shape of DaemonLog this module needs. */
interface ReadLog {
  info(line: string): void;
  error(line: string): void;
}

/**
 * A logger of each read of the file: one line per reload, saying what applied
 * or why nothing did, and each invalid row the first time it is seen — a row that stays
 * invalid through ten unrelated edits is not logged ten times. A row fixed and broken
 * again is logged again.
 */
export function createReadLog(path: string, log: ReadLog): (status: ConfigStatus) => void {
  let reads = 0;
  let logged = new Set<string>();
  return (status) => {
    const verb = reads++ === 0 ? "read" : "reloaded";
    if (!status.ok) {
      const kept =
        status.loadedAt !== undefined ? "; the last good configuration keeps running" : "";
      log.error(`mcpool: ${path}: ${status.error ?? "unreadable"}${kept}`);
      return;
    }
    const count = status.problems.length;
    log.info(
      `mcpool: ${verb} ${path}${count > 0 ? `: ${count} problem(s), those rows left out` : ""}`,
    );
    const now = new Set(status.problems);
    for (const problem of now) if (!logged.has(problem)) log.error(`mcpool: ${path}: ${problem}`);
    logged = now;
  };
}

/**
 * Write to a sibling temp file and rename over: a reader sees the old file or the new one.
 * The temp name is unique per write, never pid and milliseconds: two saves in one
 * millisecond shared one and the second rename failed with ENOENT. A write that
 * fails removes its temp file.
 */
export async function writeAtomically(path: string, text: string, mode = 0o600): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, text, { mode });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

/**
 * One writer per file: each save starts after the one before it ends, so saves of one file
 * land in the order they were asked for and the last one asked is the one kept.
 */
export function createSaveQueue(): (key: string, save: () => Promise<void>) => Promise<void> {
  const tails = new Map<string, Promise<void>>();
  return (key, save) => {
    const run = (tails.get(key) ?? Promise.resolve()).then(save, save);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}
