/**
 * What every engine's `engineOptions` share, and how they are checked: each engine declares a zod
 * object of its options (the common `bin`, `env`, `passEnv`, `extraArgs` included), and
 * {@link parseEngineOptions} checks a caller's object against it strictly. A typo'd key, a number
 * where a string belongs, an env value that is not a string: each becomes one INVALID_OPTIONS
 * sentence naming the engine, the key and, for an unknown key, every known one. Before, unknown
 * keys were ignored and `env: {A: 1}` was dropped without a word.
 */
import { z } from 'zod';
import { AseError } from '../../errors.js';

const typeOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Why `name` cannot be an environment variable name, or undefined when it can. */
function badVariableName(name: string): string | undefined {
  if (name === '') return 'a variable name cannot be empty';
  if (name.includes('=') || name.includes('\0')) return 'a variable name cannot contain "=" or NUL';
  return undefined;
}

/** `env`: values to set in the agent's environment, strings only. */
export const EnvValuesSchema = z
  .record(
    z.string(),
    z.string({ error: (issue) => `must be a string, got ${typeOf(issue.input)} (environment values are strings: write ${JSON.stringify(String(issue.input))})` }),
  )
  .superRefine((record, ctx) => {
    for (const name of Object.keys(record)) {
      const problem = badVariableName(name);
      if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
    }
  });

/** `passEnv`: host variables to inherit, by name or `PREFIX*` pattern. */
export const PassEnvSchema = z.array(
  z
    .string({ error: (issue) => `must be a variable name or PREFIX* pattern, got ${typeOf(issue.input)}` })
    .refine((name) => name !== '*' && name !== '' && !name.includes('='), 'must be a variable name or PREFIX* pattern ("*" alone would pass everything)'),
);

/** The options every engine takes (documented in docs/engines.md). */
export const COMMON_ENGINE_OPTIONS = {
  /** The agent executable; see the discovery order in agent-discovery.ts. */
  bin: z.string().min(1).optional(),
  /** Variables set in the agent's environment (win over everything inherited). */
  env: EnvValuesSchema.optional(),
  /** Host variables inherited on top of the engine's defaults, by name or `PREFIX*`. */
  passEnv: PassEnvSchema.optional(),
  /** Arguments appended to the agent's command line. */
  extraArgs: z.array(z.string()).optional(),
} as const;

/** A caller-supplied function (taps, launchers): checked to be one, typed by the engine. */
export const fn = <T>(what: string) => z.custom<T>((v) => typeof v === 'function', `${what} must be a function`);

/**
 * The strict form of each options schema, made once: `.strict()` returns a new schema, and zod
 * compiles a schema on its first parse (about 1 ms of CPU), so a fresh one per call cost every
 * session start several milliseconds (options are checked at creation, by the engine and at start).
 */
const strictSchemas = new WeakMap<z.ZodObject, z.ZodObject>();
function strictOf(schema: z.ZodObject): z.ZodObject {
  let strict = strictSchemas.get(schema);
  if (!strict) strictSchemas.set(schema, (strict = schema.strict()));
  return strict;
}

/**
 * Checks `value` (a session's `engineOptions`, or a factory's options) against `schema`, strictly:
 * unknown keys are refused with the known ones listed. Returns the parsed options; throws an
 * AseError INVALID_OPTIONS whose `details` carry `{engine, known, problems}`.
 */
export function parseEngineOptions<S extends z.ZodObject>(engine: string, schema: S, value: unknown): z.output<S> {
  const parsed = strictOf(schema).safeParse(value ?? {});
  if (parsed.success) return parsed.data as z.output<S>;
  const known = Object.keys(schema.shape).sort();
  const problems = parsed.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
      if (issue.path.length > 0) return `${issue.path.join('.')}: unknown key${issue.keys.length > 1 ? 's' : ''} ${keys}`;
      return `unknown option${issue.keys.length > 1 ? 's' : ''} ${keys} (known: ${known.join(', ')})`;
    }
    return `${issue.path.join('.') || 'options'}: ${issue.message}`;
  });
  throw new AseError('INVALID_OPTIONS', `${engine} engine options: ${problems.join('; ')}`, { details: { engine, known, problems } });
}
