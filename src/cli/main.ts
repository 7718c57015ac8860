/** The `ase` command line: `run`, `sessions`, `show`, `rm`, `doctor`, `demo`, `diagram`, `serve`, `inspect`. `bin.ts` is the executable entry. */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import type { DiagramFormat } from './diagram.js';
import { processOutput, type Output } from './render.js';

// Each command's module is imported when that command runs: most of them load the whole library
// (~400 modules, about 1 s of CPU per start), which `ase --version`, the usage and an unknown
// command never need (0.17 s of CPU instead of 1.1 s), and `ase run` does not need the server's.

const USAGE = `Usage:
  ase run --agent <name> [--session-id ID] [--bin PATH] [--mode remote|local] [--cwd DIR]
          [--json] [--yes|--deny] [--env KEY=VALUE]... [--option KEY=VALUE]...
          [--data-dir DIR] [--script FILE] [--record FILE] "prompt"
  ase run --session-id ID [options] "prompt"    continue a stored session (its agent and directory)
  ase run --mode local --agent <name> [options]  on a terminal: the agent's own UI, attached to it
                                                 (Ctrl-] hands the session to remote control);
                                                 goes through the data dir's ase serve if one runs
                                                 (--no-server: host it in this process;
                                                 --sub-agents: the agent may spawn sub-agents;
                                                 Ctrl-] opens a menu: 1-9 enter a child, x back
                                                 to the parent, h hand to remote control; in
                                                 Claude Code also /ase:children, /ase:enter ID,
                                                 /ase:exit)
  ase attach ID [--server URL] [--token-file F] [--data-dir D]
                                                 this terminal as the desk of a session ase serve
                                                 hosts (default: the data dir's server)
  ase replay FILE [--json]                       replay a --record'ed run: the real engine against a
                                                 stand-in agent answering from FILE (no agent needed)
  ase sessions [--json] [--data-dir DIR]         list stored sessions
  ase show ID [--json] [--data-dir DIR]          a session's state and transcript
  ase rm ID... [--force] [--data-dir DIR]        remove stored sessions
  ase doctor [--json]
                 per engine: the agent CLI found (where, version, tested version) and which
                 credential variables are set (names only)
  ase demo       a scripted session on the fake engine (no agent needed)
  ase diagram [--format mermaid|dot|svg|json]
                 the SessionActor statechart, generated from the machine (default Mermaid)
  ase serve [--host 127.0.0.1] [--port 8787] [--token-file F] [--data-dir D]
            [--allow-origin URL]... [--allow-host NAME]... [--script FILE] [--bin AGENT=PATH]...
            [--store postgres://...] [--lease-ttl-ms N] [--sub-agents]
                 the remote-control server and web page (docs/server.md); prints the URL to open;
                 --sub-agents: every session's agent may spawn sub-agents (spawn_session/session_status)
  ase inspect ID [--at-seq N] [--svg|--json] [--data-dir D]
                 replay a session's durable log through the statechart
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
  --record      write the agent traffic (both directions, timestamped) to FILE (docs/recording.md)
  --no-server   local mode: host the session in this process even when ase serve runs on the data dir
  --sub-agents  local mode, hosted here: offer the agent spawn_session/session_status; the person enters
                a sub-agent with /ase:enter ID typed in the agent's UI, and leaves with /ase:exit
The session id is printed on stderr as "session <id>".
`;

export async function main(argv: string[], output: Output = processOutput): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'demo':
      return (await import('./demo.js')).runDemo(output);
    case 'diagram':
      return diagramCommand(rest, output);
    case 'serve':
      return serveCommand(rest, output);
    case 'attach':
      return attachCommand(rest, output);
    case 'inspect':
      return inspectCommand(rest, output);
    case 'doctor':
      return doctorCommand(rest, output);
    case 'run':
      return runCommand(rest, output);
    case 'replay':
      return replayCommand(rest, output);
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
  const terminal = Boolean(process.stdin.isTTY) && Boolean(process.stdout.isTTY);
  const { runArgsOf } = await import('./run-args.js');
  const parsed = runArgsOf(argv, { terminal });
  if ('usage' in parsed) {
    output.err(`ase run: ${parsed.usage}\n\n${USAGE}`);
    return 2;
  }
  // On a terminal, local mode attaches the agent's own UI to it (run-local.ts).
  if (parsed.mode === 'local' && terminal && !parsed.json) return (await import('./run-local.js')).runLocal({ ...parsed, interactive: true }, output);
  return (await import('./run.js')).runPrompt({ ...parsed, interactive: Boolean(process.stdin.isTTY), argv: ['run', ...argv] }, output);
}

async function replayCommand(argv: string[], output: Output): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  } catch (error) {
    output.err(`ase replay: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.positionals.length !== 1) {
    output.err(`ase replay: expected one recording file\n\n${USAGE}`);
    return 2;
  }
  return (await import('./replay.js')).runReplay({ file: parsed.positionals[0]!, json: parsed.values.json }, output);
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
  const dataDir = (await import('./data-dir.js')).resolveDataDir(values['data-dir']);
  if (command === 'sessions') return (await import('./sessions.js')).runSessions({ dataDir, json: values.json }, output);
  if (command === 'show') return (await import('./show.js')).runShow({ dataDir, sessionId: positionals[0]!, json: values.json }, output);
  return (await import('./rm.js')).runRm({ dataDir, sessionIds: positionals, force: values.force }, output);
}

async function diagramCommand(argv: string[], output: Output): Promise<number> {
  let format: string;
  try {
    format = parseArgs({ args: argv, options: { format: { type: 'string', default: 'mermaid' } } }).values.format;
  } catch (error) {
    output.err(`ase diagram: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const { DIAGRAM_FORMATS, runDiagram } = await import('./diagram.js');
  if (!(DIAGRAM_FORMATS as readonly string[]).includes(format)) {
    output.err(`ase diagram: --format must be one of ${DIAGRAM_FORMATS.join(', ')}\n`);
    return 2;
  }
  return runDiagram(output, format as DiagramFormat);
}

async function serveCommand(argv: string[], output: Output): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: '8787' },
        'token-file': { type: 'string' },
        'data-dir': { type: 'string' },
        'allow-origin': { type: 'string', multiple: true, default: [] },
        'allow-host': { type: 'string', multiple: true, default: [] },
        script: { type: 'string' },
        store: { type: 'string' },
        'lease-ttl-ms': { type: 'string' },
        bin: { type: 'string', multiple: true, default: [] },
        'sub-agents': { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    output.err(`ase serve: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const bins: Record<string, string> = {};
  for (const pair of values.bin) {
    const match = /^([A-Za-z0-9._-]+)=(.+)$/.exec(pair);
    if (!match) {
      output.err(`ase serve: --bin ${pair}: expected AGENT=PATH (e.g. --bin claude=/opt/claude/bin/claude)\n`);
      return 2;
    }
    bins[match[1]!] = match[2]!;
  }
  if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) {
    output.err(`ase serve: --port must be 0-65535\n`);
    return 2;
  }
  const leaseTtl = values['lease-ttl-ms'];
  if (leaseTtl !== undefined && (!/^\d{3,9}$/.test(leaseTtl) || Number(leaseTtl) < 100)) {
    output.err(`ase serve: --lease-ttl-ms must be a whole number of milliseconds, at least 100\n`);
    return 2;
  }
  const [{ runServe }, { resolveDataDir }] = await Promise.all([import('./serve.js'), import('./data-dir.js')]);
  return runServe(
    {
      host: values.host,
      port: Number(values.port),
      dataDir: resolveDataDir(values['data-dir']),
      allowOrigins: values['allow-origin'],
      allowHosts: values['allow-host'],
      ...(values['token-file'] !== undefined && { tokenFile: values['token-file'] }),
      ...(values.script !== undefined && { script: values.script }),
      ...(values.store !== undefined && { store: values.store }),
      ...(leaseTtl !== undefined && { leaseTtlMs: Number(leaseTtl) }),
      ...(Object.keys(bins).length > 0 && { bins }),
      ...(values['sub-agents'] && { subAgents: true }),
    },
    output,
  );
}

async function attachCommand(argv: string[], output: Output): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { server: { type: 'string' }, 'token-file': { type: 'string' }, 'data-dir': { type: 'string' } } });
  } catch (error) {
    output.err(`ase attach: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    output.err(`ase attach: expected one session id\n\n${USAGE}`);
    return 2;
  }
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    output.err('ase attach: needs a terminal (stdin and stdout must be TTYs)\n');
    return 2;
  }
  const [{ runAttach }, { resolveDataDir }] = await Promise.all([import('./attach.js'), import('./data-dir.js')]);
  return runAttach(
    {
      sessionId: positionals[0]!,
      dataDir: resolveDataDir(values['data-dir']),
      ...(values.server !== undefined && { server: values.server }),
      ...(values['token-file'] !== undefined && { tokenFile: values['token-file'] }),
    },
    output,
  );
}

async function inspectCommand(argv: string[], output: Output): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'at-seq': { type: 'string' }, json: { type: 'boolean', default: false }, svg: { type: 'boolean', default: false }, 'data-dir': { type: 'string' } },
    });
  } catch (error) {
    output.err(`ase inspect: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const atSeq = values['at-seq'];
  const problems: string[] = [];
  if (positionals.length !== 1) problems.push('expected one session id');
  if (atSeq !== undefined && !/^\d{1,15}$/.test(atSeq)) problems.push('--at-seq must be a non-negative integer');
  if (values.json && values.svg) problems.push('--json and --svg exclude each other');
  if (problems.length > 0) {
    output.err(`ase inspect: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }
  const [{ runInspect }, { resolveDataDir }] = await Promise.all([import('./inspect.js'), import('./data-dir.js')]);
  return runInspect(
    { dataDir: resolveDataDir(values['data-dir']), sessionId: positionals[0]!, json: values.json, svg: values.svg, ...(atSeq !== undefined && { atSeq: Number(atSeq) }) },
    output,
  );
}

async function doctorCommand(argv: string[], output: Output): Promise<number> {
  let json = false;
  try {
    json = parseArgs({ args: argv, options: { json: { type: 'boolean', default: false } } }).values.json;
  } catch (error) {
    output.err(`ase doctor: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  return (await import('./doctor.js')).runDoctor({ json }, output);
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
