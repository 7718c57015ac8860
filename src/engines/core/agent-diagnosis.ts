/**
 * One agent CLI as `ase doctor` reports it: where it was found (or every place looked in), its
 * version against the tested one, and which of the credential variables its engine looks for are
 * set. Only names are ever reported, never values. Also the hint an `auth` error carries, built
 * from the same list, so a user who sees "Not logged in" learns which variables were looked for.
 */
import { searchAgent, type AgentCliSpec, type AgentSource } from './agent-discovery.js';
import { readAgentVersion } from './agent-version.js';

export interface AgentDiagnosis {
  /** The engine that runs it (`claude`, `codex`, `codex-mcp`, `acp`). */
  engine: string;
  /** The agent (`claude`, `codex`, `gemini`, `codex-acp`, …); for acp the preset name. */
  agent: string;
  /** For people: `Claude Code`. */
  title: string;
  /** How to choose it in a session: `agent: 'acp', engineOptions: {preset: 'gemini'}` reads `acp --option preset=gemini`. */
  select: string;
  found: boolean;
  /** Where it was found, when it was. */
  source?: AgentSource;
  where?: string;
  /** The executable (after unwrapping a launcher script). */
  path?: string;
  /** Every place looked in, in order, with what each held. */
  looked: string[];
  version?: string;
  /** Why the version is unknown, when it is. */
  versionError?: string;
  testedVersion?: string;
  /** The variable that names the executable (`ASE_CLAUDE_BIN`). */
  envVar: string;
  /** The npm package to install, and how. */
  packageName: string;
  install: string;
  /** The credential and endpoint variables the engine looks for, and those of them that are set. */
  credentials: { variables: string[]; set: string[] };
}

export interface DiagnoseOptions {
  engine: string;
  select: string;
  spec: AgentCliSpec;
  /** Credential / endpoint variable names this agent reads. */
  credentials: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
}

export async function diagnoseAgent(options: DiagnoseOptions): Promise<AgentDiagnosis> {
  const { spec } = options;
  const env = options.env ?? process.env;
  const search = await searchAgent(spec, { env });
  const base: AgentDiagnosis = {
    engine: options.engine,
    agent: spec.name,
    title: spec.title,
    select: options.select,
    found: search.found !== undefined,
    looked: search.looked,
    envVar: spec.envVar,
    packageName: spec.packageName,
    install: spec.install,
    ...(spec.testedVersion !== undefined && { testedVersion: spec.testedVersion }),
    credentials: { variables: [...options.credentials], set: credentialsSet(options.credentials, env) },
  };
  if (!search.found) return base;
  const { found } = search;
  const version = await readAgentVersion(spec, found);
  return {
    ...base,
    source: found.source,
    where: found.where,
    path: found.path,
    ...(version.version !== undefined && { version: version.version }),
    ...(version.error !== undefined && { versionError: version.error }),
  };
}

/** The names in `variables` that are set (non-empty) in `env`. */
export function credentialsSet(variables: readonly string[], env: Readonly<Record<string, string | undefined>>): string[] {
  return variables.filter((name) => typeof env[name] === 'string' && env[name] !== '');
}

/**
 * What an `auth` error adds to its message: the variables the engine looks for credentials in
 * (`lookedFor`, the main ones) and which of `related` (every credential and endpoint variable it
 * knows) the agent's environment had. Names only.
 */
export function credentialHint(o: {
  title: string;
  lookedFor: readonly string[];
  related?: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /** Where else a login may live (`a /login under ~/.claude`). */
  otherwise?: string;
}): string {
  const set = credentialsSet([...new Set([...o.lookedFor, ...(o.related ?? [])])], o.env);
  const had = set.length > 0 ? `its environment had ${set.join(', ')}` : 'none of them was in its environment';
  return `${o.title} looks for credentials in ${o.lookedFor.join(', ')}${o.otherwise ? ` or ${o.otherwise}` : ''}; ${had}`;
}
