/**
 * The environment a stdio child is started with. `inherit` hands it all of
 * ours, `minimal` only an allowlist, a list exactly those names; the row's own `env` is
 * added on top. The daemon's service variables never reach a child, whatever the policy.
 */

export type ChildEnvPolicy = "inherit" | "minimal" | readonly string[];

/** What a typical server needs to find its interpreter, home and locale, and nothing secret. */
export const MINIMAL_CHILD_ENV: readonly string[] = [
  "HOME",
  "LOGNAME",
  "USER",
  "PATH",
  "SHELL",
  "TERM",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  "XDG_RUNTIME_DIR",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_CACHE_HOME",
  "SYSTEMROOT",
  "APPDATA",
  "LOCALAPPDATA",
  "USERPROFILE",
  "TEMP",
  "TMP",
];

/**
 * Variables that belong to the daemon's own service manager. A child that saw
 * LISTEN_FDS would believe our listening socket is its own; NOTIFY_SOCKET would let it
 * report readiness for us.
 */
export const SERVICE_ENV = [
  "LISTEN_FDS",
  "LISTEN_PID",
  "LISTEN_FDNAMES",
  "NOTIFY_SOCKET",
  "WATCHDOG_PID",
  "WATCHDOG_USEC",
  "MCPOOL_SOCKET",
  "MCPOOL_CONFIG",
] as const;

export function childEnvironment(
  policy: ChildEnvPolicy,
  rowEnv: Readonly<Record<string, string>> | undefined,
  base: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const names =
    policy === "inherit" ? Object.keys(base) : policy === "minimal" ? MINIMAL_CHILD_ENV : policy;
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  for (const name of SERVICE_ENV) delete env[name];
  return { ...env, ...rowEnv };
}
