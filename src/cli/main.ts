/** The `ase` command line: `run`, `sessions`, `show`, `rm`, `doctor`, `demo`, `diagram`. `bin.ts` is the executable entry. */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { runDemo } from './demo.js';
import { runDiagram } from './diagram.js';
import { resolveDataDir } from './data-dir.js';
import { runDoctor } from './doctor.js';
import { processOutput, type Output } from './render.js';
import { runRm } from './rm.js';
import { runPrompt } from './run.js';
import { runLocal } from './run-local.js';
import { runSessions } from './sessions.js';
import { runShow } from './show.js';

const USAGE = `Usage:
  ase run --agent <name> [--session-id ID] [--bin PATH] [--mode remote|local] [--cwd DIR]
          [--json] [--yes|--deny] [--env KEY=VALUE]... [--option KEY=VALUE]...
          [--data-dir DIR] [--script FILE] "prompt"
  ase run --session-id ID [options] "prompt"    continue a stored session (its agent and directory)
  ase run --mode local --agent <name> [options]  on a terminal: the agent's own UI, attached to it
                                                 (Ctrl-] hands the session to remote control)
  ase sessions [--json] [--data-dir DIR]         list stored sessions
  ase show ID [--json] [--data-dir DIR]          a session's state and transcript
  ase rm ID... [--force] [--data-dir DIR]        remove stored sessions
  ase doctor [--json]
                 per engine: the agent CLI found (where, version, tested version) and which
                 credential variables are set (names only)
  ase demo       a scripted session on the fake engine (no agent needed)
  ase diagram    the SessionActor statechart as Mermaid stateDiagram-v2
  ase --version

run options:
  --agent       engine name: fake (built in), claude, codex, codex-mcp, acp (with --option preset=...)
  --session-id  continue this stored session (default --agent and --cwd: the stored ones)
  --bin         agent executable (default: ASE_<AGENT>_BIN, then PATH, then the npm package)
  --mode        start in remote (default) or local control mode
  --cwd         the agent's working directory (default: current directory)
  --json        print AgentEvents as NDJSON on stdout, one per line
  --yes/--deny  answer every permission request (default: ask when interactive, else deny)
  --env         extra environment for the agent process (repeatable)
  --option      an engine option, e.g. --option preset=gemini (value parsed as JSON when it is JSON; repeatable)
  --data-dir    where session state and transcripts are kept (default: $ASE_DATA_DIR, else ~/.agent-session-engine)
  --script      JSON script for the fake engine
The session id is printed on stderr as "session <id>".
`;

export async function main(argv: string[], output: Output = processOutput): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'demo':
      return runDemo(output);
    case 'diagram':
      return runDiagram(output);
    case 'doctor':
      return doctorCommand(rest, output);
    case 'run':
      return runCommand(rest, output);
    case 'sessions':
    case 'show':
    case 'rm':
      return storeCommand(command, rest, output);
    case '--version':
    case '-v':
      output.out(`${version()}\n`);
      return 0;
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      output.out(USAGE);
      return command === undefined ? 2 : 0;
    default:
      output.err(`ase: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

async function runCommand(argv: string[], output: Output): Promise<number> {
  let parsed: ReturnType<typeof parseRunArgs>;
  try {
    parsed = parseRunArgs(argv);
  } catch (error) {
    // An unknown option or a missing option value is a usage error, not a crash with a stack trace.
    output.err(`ase run: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const prompt = positionals.join(' ').trim();
  const problems: string[] = [];
  if (!values.agent && values['session-id'] === undefined) problems.push('--agent is required');
  const attachLocal = values.mode === 'local' && Boolean(process.stdin.isTTY) && Boolean(process.stdout.isTTY) && !values.json;
  if (!prompt && !attachLocal) problems.push('a prompt is required');
  if (values.mode !== 'remote' && values.mode !== 'local') problems.push('--mode must be remote or local');
  if (values.yes && values.deny) problems.push('--yes and --deny exclude each other');
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
  if (problems.length > 0) {
    output.err(`ase run: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }
  const runArgs = {
      prompt,
      mode: values.mode as 'remote' | 'local',
      json: values.json,
      permission: (values.yes ? 'allow' : values.deny ? 'deny' : 'ask') as 'allow' | 'deny' | 'ask',
      env,
      options,
      interactive: Boolean(process.stdin.isTTY),
      dataDir: resolveDataDir(values['data-dir']),
      ...(values.agent !== undefined && { agent: values.agent }),
      ...(values.cwd !== undefined && { cwd: values.cwd }),
      ...(values['session-id'] !== undefined && { sessionId: values['session-id'] }),
      ...(values.bin !== undefined && { bin: values.bin }),
      ...(values.script !== undefined && { script: values.script }),
  };
  // On a terminal, local mode attaches the agent's own UI to it (run-local.ts).
  if (attachLocal) return runLocal(runArgs, output);
  return runPrompt(runArgs, output);
}

/** `sessions`, `show ID`, `rm ID...`: read (or remove) what earlier runs left under the data directory. */
async function storeCommand(command: 'sessions' | 'show' | 'rm', argv: string[], output: Output): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        json: { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        'data-dir': { type: 'string' },
      },
    });
  } catch (error) {
    output.err(`ase ${command}: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const problems: string[] = [];
  if (command === 'sessions' && positionals.length > 0) problems.push(`unexpected argument ${positionals[0]}`);
  if (command === 'show' && positionals.length !== 1) problems.push('expected one session id');
  if (command === 'rm' && positionals.length === 0) problems.push('expected at least one session id');
  if (values.force && command !== 'rm') problems.push('--force is for rm');
  if (values.json && command === 'rm') problems.push('--json is for sessions and show');
  if (problems.length > 0) {
    output.err(`ase ${command}: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }
  const dataDir = resolveDataDir(values['data-dir']);
  if (command === 'sessions') return runSessions({ dataDir, json: values.json }, output);
  if (command === 'show') return runShow({ dataDir, sessionId: positionals[0]!, json: values.json }, output);
  return runRm({ dataDir, sessionIds: positionals, force: values.force }, output);
}

async function doctorCommand(argv: string[], output: Output): Promise<number> {
  let json = false;
  try {
    json = parseArgs({ args: argv, options: { json: { type: 'boolean', default: false } } }).values.json;
  } catch (error) {
    output.err(`ase doctor: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  return runDoctor({ json }, output);
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

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
