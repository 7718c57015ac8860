/** `ase run`'s command line as RunArgs: for `ase run` itself and for `ase replay`, which reruns a recorded one. */
import { parseArgs } from 'node:util';
import { resolveDataDir } from './data-dir.js';
import type { ControlMode, EngineFactory, FakeScript } from '../index.js';


/** What `ase run` was asked to do (its command line, parsed). */
export interface RunArgs {
  /** Required for a new session; for `sessionId`, defaults to the stored session's agent. */
  agent?: string;
  prompt: string;
  bin?: string;
  mode: ControlMode;
  /** Default: the current directory, or for `sessionId` the stored session's workDir. */
  cwd?: string;
  json: boolean;
  permission: 'ask' | 'allow' | 'deny';
  env: Record<string, string>;
  /** Engine options (`--option`), passed with `env` as the session's `engineOptions`. */
  options: Record<string, unknown>;
  dataDir: string;
  /** Continue this stored session. */
  sessionId?: string;
  /** A JSON FakeScript for the fake engine. */
  script?: string;
  interactive: boolean;
  /** Record the agent traffic to this file (docs/recording.md). */
  record?: string;
  /** Host the session here even when an `ase serve` runs on the data dir (default: go through it: local mode attaches, `--session-id` sends there). */
  noServer?: boolean;
  /** Local mode: offer the agent sub-agent tools and the person the `/ase:*` commands (run-local-tree.ts); hosted in this process. */
  subAgents?: boolean;
  /** The `ase` arguments of this run, for the recording's header. */
  argv?: string[];
  /** An engine used instead of the registered one of its name (`ase replay`'s replaying engine). */
  engine?: EngineFactory;
}

/** `ase run` arguments as RunArgs (without `interactive`), or the usage problem. Also reads a recording's argv for `ase replay`. */
export function runArgsOf(argv: string[], context: { terminal?: boolean } = {}): Omit<RunArgs, 'interactive'> | { usage: string } {
  let parsed: ReturnType<typeof parseRunArgs>;
  try {
    parsed = parseRunArgs(argv);
  } catch (error) {
    // An unknown option or a missing option value is a usage error, not a crash with a stack trace.
    return { usage: error instanceof Error ? error.message : String(error) };
  }
  const { values, positionals } = parsed;
  const prompt = positionals.join(' ').trim();
  const problems: string[] = [];
  if (!values.agent && values['session-id'] === undefined) problems.push('--agent is required');
  // Local mode on a terminal needs no prompt: the person types into the agent's own UI.
  const attachesTerminal = values.mode === 'local' && context.terminal === true && !values.json;
  if (!prompt && !attachesTerminal) problems.push('a prompt is required');
  if (values.mode !== 'remote' && values.mode !== 'local') problems.push('--mode must be remote or local');
  if (values.yes && values.deny) problems.push('--yes and --deny exclude each other');
  if (values['sub-agents'] && values.mode !== 'local') problems.push('--sub-agents needs --mode local');
  const env: Record<string, string> = {};
  for (const pair of values.env) {
    const eq = pair.indexOf('=');
    if (eq <= 0) problems.push(`--env ${pair}: expected KEY=VALUE`);
    else env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const options: Record<string, unknown> = {};
  for (const pair of values.option) {
    const eq = pair.indexOf('=');
    if (eq <= 0) problems.push(`--option ${pair}: expected KEY=VALUE`);
    else if (pair.slice(0, eq) === 'env') problems.push('--option env=...: use --env KEY=VALUE');
    else options[pair.slice(0, eq)] = jsonOrString(pair.slice(eq + 1));
  }
  if (problems.length > 0) return { usage: problems.join('; ') };
  return {
    prompt,
    mode: values.mode as 'remote' | 'local',
    json: values.json,
    permission: values.yes ? 'allow' : values.deny ? 'deny' : 'ask',
    env,
    options,
    dataDir: resolveDataDir(values['data-dir']),
    ...(values.agent !== undefined && { agent: values.agent }),
    ...(values.cwd !== undefined && { cwd: values.cwd }),
    ...(values['session-id'] !== undefined && { sessionId: values['session-id'] }),
    ...(values.bin !== undefined && { bin: values.bin }),
    ...(values.script !== undefined && { script: values.script }),
    ...(values.record !== undefined && { record: values.record }),
    ...(values['no-server'] && { noServer: true }),
    ...(values['sub-agents'] && { subAgents: true }),
  };
}

function parseRunArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      agent: { type: 'string' },
      'session-id': { type: 'string' },
      bin: { type: 'string' },
      mode: { type: 'string', default: 'remote' },
      cwd: { type: 'string' },
      json: { type: 'boolean', default: false },
      yes: { type: 'boolean', default: false },
      deny: { type: 'boolean', default: false },
      env: { type: 'string', multiple: true, default: [] },
      option: { type: 'string', multiple: true, default: [] },
      'data-dir': { type: 'string' },
      script: { type: 'string' },
      record: { type: 'string' },
      'no-server': { type: 'boolean', default: false },
      'sub-agents': { type: 'boolean', default: false },
    },
  });
}

/** `--option k=v`: numbers, booleans, arrays and objects as JSON; anything else is the plain string. */
function jsonOrString(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
