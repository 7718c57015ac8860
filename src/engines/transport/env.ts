/**
 * Builds a child environment from an allow-list instead of copying `process.env`: the host's
 * secrets and tooling variables (NODE_OPTIONS, DEBUG, npm_*, …) do not leak into agents unless
 * asked for. An allow-list entry is a name (`PATH`) or a prefix pattern ending in `*`
 * (`ANTHROPIC_*`: every variable whose name starts with `ANTHROPIC_`). NODE_OPTIONS is never
 * inherited from `base`, even when allow-listed (it would inject the host's loaders/inspector into
 * node-based agent CLIs); an explicit `set.NODE_OPTIONS` is honoured because it is the caller's
 * deliberate choice.
 *
 * The lists below are what each engine passes by default (docs/engines.md has them as one table):
 * the base, the network settings every agent needs behind a proxy or a private CA, and per agent
 * the variables its CLI reads for credentials, endpoints and configuration.
 */
/** What every agent gets: the basics of a login shell. */
export const DEFAULT_ENV_ALLOW: readonly string[] = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR'];

/** Proxies (both spellings), extra CAs and the XDG base directories: every engine passes them. */
export const NETWORK_ENV_ALLOW: readonly string[] = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'XDG_*',
];

/** Claude Code: Anthropic API and login, its own settings, Bedrock (AWS) and Vertex (Google Cloud). */
export const CLAUDE_ENV_ALLOW: readonly string[] = ['ANTHROPIC_*', 'CLAUDE_*', 'AWS_*', 'GOOGLE_*', 'CLOUD_ML_*', 'VERTEX_*'];

/** Codex: OpenAI API key and endpoint, CODEX_HOME and CODEX_API_KEY, and its log level. */
export const CODEX_AGENT_ENV_ALLOW: readonly string[] = ['OPENAI_*', 'CODEX_*', 'RUST_LOG'];

/** Gemini CLI: API key and settings, Vertex AI / Google Cloud. */
export const GEMINI_ENV_ALLOW: readonly string[] = ['GEMINI_*', 'GOOGLE_*'];

export interface BuildEnvOptions {
  /**
   * Variable names (or `PREFIX*` patterns) copied from `base` when present. Default
   * {@link DEFAULT_ENV_ALLOW}.
   */
  allow?: readonly string[];
  /** Variables set (overriding `base`) after the allow-list is applied. */
  set?: Readonly<Record<string, string>>;
  /** Source of inherited values. Default `process.env`. */
  base?: NodeJS.ProcessEnv | Readonly<Record<string, string | undefined>>;
}

/** True when `name` is allowed by `allow` (an exact name or a `PREFIX*` pattern). */
export function envAllows(allow: readonly string[], name: string): boolean {
  for (const entry of allow) {
    if (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : entry === name) return true;
  }
  return false;
}

export function buildEnv(options: BuildEnvOptions = {}): Record<string, string> {
  const { allow = DEFAULT_ENV_ALLOW, set = {}, base = process.env } = options;
  const env: Record<string, string> = {};
  const patterns = allow.some((entry) => entry.endsWith('*'));
  // Exact names are looked up; patterns need a scan of the base environment (a few hundred names).
  const names = patterns ? Object.keys(base).filter((name) => envAllows(allow, name)) : allow;
  for (const name of names) {
    if (name === 'NODE_OPTIONS') continue;
    const value = base[name];
    if (typeof value === 'string') env[name] = value;
  }
  for (const [name, value] of Object.entries(set)) env[name] = value;
  return env;
}
