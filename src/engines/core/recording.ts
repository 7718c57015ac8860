/**
 * The traffic recording file (docs/recording.md): JSONL, a header line, then one record per line.
 *
 *   {"format":"ase-recording","version":1,"agent":"claude","engineOptions":{…},"workDir":…,"aseVersion":…,"argv":[…],…}
 *   {"kind":"start","at":…,"gen":1}
 *   {"kind":"traffic","at":…,"gen":1,"direction":"to_agent","line":"{…}"}
 *   {"kind":"traffic","at":…,"gen":1,"direction":"from_agent","line":"{…}"}
 *   {"kind":"exit","at":…,"gen":1,"code":0,"signal":null}
 *
 * A `start` opens one engine generation (one agent process); its traffic follows, in the order
 * the engine saw it; `exit` closes it when the engine reported its process gone. The header's
 * `engineOptions` and `argv` have secrets redacted ({@link REDACTED}); the traffic lines are raw,
 * as they crossed the pipe (prompts, file contents and whatever the agent printed included).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AseError } from '../../errors.js';

export const RECORDING_FORMAT = 'ase-recording';
export const RECORDING_VERSION = 1;
/** What a redacted value reads as, in the header (and, replayed, a wildcard in host lines). */
export const REDACTED = '<redacted>';

export const RecordingHeaderSchema = z.object({
  format: z.literal(RECORDING_FORMAT),
  version: z.literal(RECORDING_VERSION),
  /** The engine name (`claude`, `codex`, `codex-mcp`, `acp`). */
  agent: z.string().min(1),
  /** The session's `engineOptions`, functions dropped, `env` values and secret-looking values redacted. */
  engineOptions: z.record(z.string(), z.unknown()),
  /** The agent's working directory (a replay elsewhere maps it to its own). */
  workDir: z.string().min(1),
  /** The version of agent-session-engine that recorded. */
  aseVersion: z.string(),
  /** The command line that recorded (`ase run …` arguments after `ase`; a library caller may leave it empty), redacted. */
  argv: z.array(z.string()),
  /** The session id, when known. */
  sessionId: z.string().optional(),
  /** When recording began (ISO 8601). */
  startedAt: z.string(),
  platform: z.string().optional(),
});
export type RecordingHeader = z.infer<typeof RecordingHeaderSchema>;

const gen = z.number().int().nonnegative();
const at = z.number().nonnegative();

export const RecordingStartSchema = z.object({ kind: z.literal('start'), at, gen });
export const RecordingTrafficSchema = z.object({
  kind: z.literal('traffic'),
  at,
  gen,
  direction: z.enum(['to_agent', 'from_agent']),
  /** The line without its newline, as it crossed the pipe (not necessarily JSON). */
  line: z.string(),
});
export const RecordingExitSchema = z.object({
  kind: z.literal('exit'),
  at,
  gen,
  code: z.number().int().nullable(),
  signal: z.string().nullable(),
  /** The agent CLI's version, when the engine knew it by then. */
  agentVersion: z.string().optional(),
});
export const RecordingRecordSchema = z.discriminatedUnion('kind', [RecordingStartSchema, RecordingTrafficSchema, RecordingExitSchema]);
export type RecordingRecord = z.infer<typeof RecordingRecordSchema>;
export type RecordingTraffic = z.infer<typeof RecordingTrafficSchema>;

export interface Recording {
  header: RecordingHeader;
  records: RecordingRecord[];
}

/** One engine generation of a recording: its traffic in order and how its process ended. */
export interface RecordedGeneration {
  gen: number;
  traffic: RecordingTraffic[];
  exit?: { code: number | null; signal: string | null };
  /** The agent CLI's version, as its `exit` record says. */
  agentVersion?: string;
}

/** Parses a recording's text; throws RECORDING_INVALID naming the line and what is wrong. */
export function parseRecording(text: string, file = 'recording'): Recording {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const parseLine = <T>(index: number, schema: z.ZodType<T>): T => {
    let data: unknown;
    try {
      data = JSON.parse(lines[index]!);
    } catch {
      throw invalid(file, index + 1, 'not JSON');
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalid(file, index + 1, `${issue?.path.join('.') || 'record'}: ${issue?.message ?? 'invalid'}`);
    }
    return parsed.data;
  };
  if (lines.length === 0) throw invalid(file, 1, 'empty file (a recording starts with its header line)');
  const first = safeJson(lines[0]!);
  if (typeof first !== 'object' || first === null || (first as { format?: unknown }).format !== RECORDING_FORMAT) {
    throw invalid(file, 1, `not an ${RECORDING_FORMAT} header`);
  }
  if ((first as { version?: unknown }).version !== RECORDING_VERSION) {
    throw invalid(file, 1, `${RECORDING_FORMAT} version ${JSON.stringify((first as { version?: unknown }).version)} (this library reads version ${RECORDING_VERSION})`);
  }
  const header = parseLine(0, RecordingHeaderSchema);
  const records: RecordingRecord[] = [];
  for (let i = 1; i < lines.length; i++) {
    if (lines[i]!.trim() === '') continue;
    records.push(parseLine(i, RecordingRecordSchema));
  }
  return { header, records };
}

/** Reads and parses a recording file (RECORDING_INVALID when it is not one). */
export function readRecording(file: string): Recording {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new AseError('RECORDING_INVALID', `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error, details: { file } });
  }
  return parseRecording(text, file);
}

/** The recording split by engine generation, in the order they started. */
export function recordedGenerations(recording: Recording): RecordedGeneration[] {
  const generations: RecordedGeneration[] = [];
  const byGen = new Map<number, RecordedGeneration>();
  for (const record of recording.records) {
    let generation = byGen.get(record.gen);
    if (!generation) {
      generation = { gen: record.gen, traffic: [] };
      byGen.set(record.gen, generation);
      generations.push(generation);
    }
    if (record.kind === 'traffic') generation.traffic.push(record);
    else if (record.kind === 'exit') {
      generation.exit = { code: record.code, signal: record.signal };
      if (record.agentVersion !== undefined) generation.agentVersion = record.agentVersion;
    }
  }
  return generations;
}

// ---------------------------------------------------------------- redaction

/** Keys whose string values are secrets wherever they appear (`apiKey`, `authToken`, `password`, …). */
const SECRET_KEY = /key|token|secret|passw|credential|cookie|auth|bearer/i;
/** Objects whose every value may be a secret: environment variables and HTTP headers. */
const VALUE_MAPS = new Set(['env', 'headers']);
/**
 * Environment variables that name places, not secrets (`HOME`, `CLAUDE_CONFIG_DIR`, `XDG_*`): kept,
 * because the engine derives paths from them (a transcript path) that a replay should reproduce.
 */
const PLACE_VARIABLE = /^(HOME|PATH|PWD|SHELL|TERM|LANG|TMPDIR|LC_[A-Z_]+|XDG_[A-Z_]+|[A-Z0-9_]+_(DIR|HOME))$/;

/** Whether an environment variable's value stays in the header. */
export function keepsEnvValue(name: string): boolean {
  return PLACE_VARIABLE.test(name) && !SECRET_KEY.test(name);
}

/**
 * `engineOptions` fit for a header: functions (taps, launchers) dropped, the values of every `env`
 * and `headers` object and of secret-looking keys replaced by {@link REDACTED} (names are kept;
 * so are the values of variables that name places, {@link keepsEnvValue}).
 */
export function redactEngineOptions(options: Record<string, unknown>): Record<string, unknown> {
  return redactObject(options) as Record<string, unknown>;
}

function redactObject(value: unknown, allValues = false): unknown {
  if (typeof value === 'function') return undefined;
  if (Array.isArray(value)) return value.map((v) => redactObject(v, allValues)).filter((v) => v !== undefined);
  if (typeof value !== 'object' || value === null) return allValues && value !== undefined ? REDACTED : value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'function') continue;
    if (key === 'env' && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      out[key] = Object.fromEntries(Object.entries(v).map(([name, value]) => [name, keepsEnvValue(name) ? value : REDACTED]));
    } else if (VALUE_MAPS.has(key) && typeof v === 'object' && v !== null && !Array.isArray(v)) out[key] = redactObject(v, true);
    else if (SECRET_KEY.test(key) && (typeof v === 'string' || typeof v === 'number')) out[key] = REDACTED;
    else out[key] = redactObject(v, allValues);
  }
  return out;
}

/** An `ase` command line fit for a header: `--env K=V` keeps `K`, a secret-looking `--option k=v` keeps `k`. */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const inline = /^(--env|--option)=(.*)$/.exec(arg);
    const flag = inline ? inline[1]! : arg;
    if (flag !== '--env' && flag !== '--option') {
      out.push(arg);
      continue;
    }
    const pair = inline ? inline[2]! : argv[++i];
    if (pair === undefined) {
      out.push(arg);
      continue;
    }
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    const secret = flag === '--env' ? !keepsEnvValue(key) : SECRET_KEY.test(key) || VALUE_MAPS.has(key);
    let kept = pair;
    if (secret && eq >= 0) kept = `${key}=${REDACTED}`;
    else if (eq >= 0) {
      // `--option mcpServers={…}`: a JSON value is redacted like engineOptions.
      const value = safeJson(pair.slice(eq + 1));
      if (typeof value === 'object' && value !== null) kept = `${key}=${JSON.stringify(redactObject(value))}`;
    }
    out.push(...(inline ? [`${flag}=${kept}`] : [flag, kept]));
  }
  return out;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function invalid(file: string, line: number, why: string): AseError {
  return new AseError('RECORDING_INVALID', `${file}:${line}: ${why}`, { details: { file, line } });
}
