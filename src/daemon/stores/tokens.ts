/**
 * The daemon's OAuth token store: one file per server url in `<data>/oauth/<sha256>.json`,
 * mode 0600 in a 0700 directory, written atomically (a temp file renamed over the old one),
 * so a crash mid-write leaves the previous sign-in, never half of one. The file holds the
 * url it belongs to, the tokens and the client registration; nothing else in the daemon
 * (status, events, logs, the tools cache) ever sees them.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { StoredCredentials, TokenStore } from "../../pool/auth/oauth.js";
import { writeAtomically } from "../config/source.js";
import { SAVE_EFFECTS, type SaveHealth } from "../process/save-health.js";

/** The file of one store key: a digest, so a url never has to be escaped into a name. */
export function tokenFileName(key: string): string {
  return `${createHash("sha256").update(key).digest("hex")}.json`;
}

export function createFileTokenStore(
  dataDir: string,
  health?: SaveHealth,
): TokenStore & { dir: string } {
  const dir = join(dataDir, "oauth");
  const fileOf = (key: string): string => join(dir, tokenFileName(key));
  return {
    dir,
    load(key) {
      try {
        const parsed = JSON.parse(readFileSync(fileOf(key), "utf8")) as {
          url?: unknown;
        } & StoredCredentials;
        // A file for another url (a digest collision, a file copied by hand) is not ours.
        if (parsed.url !== key) return undefined;
        const { url: _url, ...credentials } = parsed;
        return credentials;
      } catch {
        // Absent or unreadable: the server asks for a sign-in, which writes a good one.
        return undefined;
      }
    },
    async save(key, credentials) {
      const save = async (): Promise<void> => {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        await writeAtomically(
          fileOf(key),
          `${JSON.stringify({ url: key, ...credentials })}\n`,
          0o600,
        );
      };
      await (health ? health.track("tokens", dir, SAVE_EFFECTS.tokens, save) : save());
    },
    delete(key) {
      rmSync(fileOf(key), { force: true });
    },
  };
}
