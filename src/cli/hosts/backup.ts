/**
 * Where `import` and `wire` keep a file's old text before they write over it: beside it, as
 * `<file>.mcpool-backup-<UTC time>` (`mcp.json.mcpool-backup-2026-01-31T12-00-00Z`,
 * `config.toml.mcpool-backup-…`). One scheme for both, named for who made it; the time sorts,
 * and holds no character a shell or Windows minds.
 */
export function backupPath(file: string, now: Date): string {
  const time = now
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");
  return `${file}.mcpool-backup-${time}`;
}
