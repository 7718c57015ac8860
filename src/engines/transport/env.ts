/**
 * Builds a child environment from an allow-list instead of copying `process.env`: the host's
 * secrets and tooling variables (NODE_OPTIONS, DEBUG, npm_*, …) do not leak into agents unless
 * asked for. NODE_OPTIONS is never inherited from `base`, even when allow-listed (it would inject
 * the host's loaders/inspector into node-based agent CLIs); an explicit `set.NODE_OPTIONS` is
 * honoured because it is the caller's deliberate choice.
 */

export const DEFAULT_ENV_ALLOW: readonly string[] = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR'];

export interface BuildEnvOptions {
  /** Variable names copied from `base` when present. Default {@link DEFAULT_ENV_ALLOW}. */
  allow?: readonly string[];
  /** Variables set (overriding `base`) after the allow-list is applied. */
  set?: Readonly<Record<string, string>>;
  /** Source of inherited values. Default `process.env`. */
  base?: NodeJS.ProcessEnv | Readonly<Record<string, string | undefined>>;
}

export function buildEnv(options: BuildEnvOptions = {}): Record<string, string> {
  const { allow = DEFAULT_ENV_ALLOW, set = {}, base = process.env } = options;
  const env: Record<string, string> = {};
  for (const name of allow) {
    if (name === 'NODE_OPTIONS') continue;
    const value = base[name];
    if (typeof value === 'string') env[name] = value;
  }
  for (const [name, value] of Object.entries(set)) env[name] = value;
  return env;
}
