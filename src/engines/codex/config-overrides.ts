/**
 * `-c key=value` command-line overrides for Codex. Codex parses the value as TOML and falls back
 * to the raw string when that fails, so a string like `true` or `1` would silently change type:
 * every value is therefore encoded as an explicit TOML literal here.
 */
import { AseError } from '../../errors.js';

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/** One TOML key segment: bare when possible, else a quoted string. */
function tomlKey(segment: string): string {
  return BARE_KEY.test(segment) ? segment : JSON.stringify(segment);
}

/**
 * Encodes a JSON-like value as an inline TOML value. Strings use TOML basic-string escapes
 * (the same as JSON's for everything JSON.stringify emits); objects become inline tables.
 */
export function tomlValue(value: unknown, path = 'value'): string {
  // JSON.stringify leaves DEL raw, which TOML forbids in basic strings.
  if (typeof value === 'string') return JSON.stringify(value).replace(/\u007f/g, '\\u007f');
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new AseError('INVALID_OPTIONS', `codex config override ${path}: ${value} is not representable in TOML`);
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map((v, i) => tomlValue(v, `${path}[${i}]`)).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v, `${path}.${k}`)}`).join(', ')}}`;
  }
  throw new AseError('INVALID_OPTIONS', `codex config override ${path}: ${value === null ? 'null' : typeof value} has no TOML form`);
}

/**
 * `{ 'features.plugins': false, model: 'gpt-5.5' }` → `['-c', 'features.plugins=false', '-c', 'model="gpt-5.5"']`.
 * Keys are dotted paths as Codex expects them (`foo.bar.baz`); `undefined` values are skipped.
 */
export function configOverrideArgs(config: Readonly<Record<string, unknown>> | undefined): string[] {
  const args: string[] = [];
  for (const [key, value] of Object.entries(config ?? {})) {
    if (value === undefined) continue;
    if (key.trim() === '' || key.includes('=')) throw new AseError('INVALID_OPTIONS', `codex config override key ${JSON.stringify(key)} is not a dotted path`);
    args.push('-c', `${key}=${tomlValue(value, key)}`);
  }
  return args;
}
