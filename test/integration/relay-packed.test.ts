/**
 * The perl relay is a file of the package: `npm pack` ships it, beside the
 * `dist/cli/bin.js` it finds from its own path (`<relay>/../dist/cli/bin.js`) when it has to
 * start the daemon.
 */
import { spawnSync } from "node:child_process";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RELAY_FILE } from "../../src/cli/hosts/pipe-entry.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

describe("the packed relay", () => {
  it("npm pack ships relay/mcpool-pipe.pl and the bin it execs, at the path it computes", () => {
    // --ignore-scripts: the checkout is built already; prepack would rebuild it.
    const pack = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(pack.status, pack.stderr).toBe(0);
    const [packed] = JSON.parse(pack.stdout) as { files: { path: string }[] }[];
    const files = packed!.files.map((file) => file.path);
    expect(relative(ROOT, RELAY_FILE)).toBe("relay/mcpool-pipe.pl");
    expect(files).toContain("relay/mcpool-pipe.pl");
    expect(files).toContain("dist/cli/bin.js");
  });
});
