/**
 * `which`: the first executable `name` in a PATH string, as a shell would find it. The
 * daemon asks it for the starter file's `mcpool`, the CLI for systemctl, launchctl and the
 * stock pipes `wire` writes.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

export function onPath(name: string, pathVar: string = process.env.PATH ?? ""): string | undefined {
  for (const dir of pathVar.split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
