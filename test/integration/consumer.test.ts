/**
 * The library as a new user meets it: `npm pack`, installed into a fresh project with only its
 * runtime dependencies (offline: test/support/consumer-install.ts), no agent package installed,
 * a stand-in `claude` on PATH (test/support/consumer-claude-stand-in.mjs) and ANTHROPIC_API_KEY exported.
 * `npx ase run --agent claude --json hi` and a small `createSession` script must both find the
 * stand-in on PATH, hand it the key (the claude engine passes ANTHROPIC_* by default) and finish the
 * turn; `ase doctor` must report what it found and which credential variables are set, and work with
 * no agent at all. Nothing of this repository's node_modules is visible to the consumer project.
 */
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentEventSchema, type AgentDiagnosis } from '../../src/index.js';
import { ensureBuiltCli, REPO_ROOT } from '../support/built-cli.js';
import { installedConsumerProject } from '../support/consumer-install.js';
import { testRunEnv } from '../support/orphan-check.js';

const KEY = 'sk-ant-consumer-test-not-a-real-key';

/** The directory holding `name` on this process's PATH (npx lives next to the machine's npm). */
function onPath(name: string): string {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    try {
      readFileSync(join(dir, name));
      return dir;
    } catch {
      // not here
    }
  }
  throw new Error(`${name} is not on PATH`);
}

let root: string;
let app: string;
let standInDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  await ensureBuiltCli();
  root = mkdtempSync(join(tmpdir(), 'ase-consumer-'));
  app = join(root, 'app');
  standInDir = join(root, 'bin');
  for (const dir of [app, standInDir, join(root, 'home')]) mkdirSync(dir, { recursive: true });
  await installedConsumerProject(app, { name: 'consumer', version: '1.0.0', private: true, type: 'module' }, root);
  // The stand-in `claude`; `node` on PATH is this Node (the machine's may be too old for the library).
  copyFileSync(join(REPO_ROOT, 'test', 'support', 'consumer-claude-stand-in.mjs'), join(standInDir, 'claude'));
  chmodSync(join(standInDir, 'claude'), 0o755);
  env = {
    PATH: [standInDir, dirname(process.execPath), onPath('npx'), '/usr/bin', '/bin'].join(delimiter),
    HOME: join(root, 'home'),
    ANTHROPIC_API_KEY: KEY,
    NO_COLOR: '1',
    npm_config_cache: join(root, 'npm-cache'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    ...testRunEnv(),
  };
}, 120_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

const calls = () =>
  readFileSync(join(standInDir, 'calls.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { argv: string[]; ANTHROPIC_API_KEY: string | null; NODE_OPTIONS: string | null });

describe('a fresh project that installed the packed library', () => {
  it('has only the runtime dependencies: no agent CLI, no dev tool', () => {
    const installed = JSON.parse(readFileSync(join(app, 'node_modules', 'agent-session-engine', 'package.json'), 'utf8')) as { peerDependenciesMeta?: Record<string, { optional?: boolean }> };
    expect(Object.values(installed.peerDependenciesMeta ?? {}).every((m) => m.optional === true)).toBe(true);
    for (const absent of ['@anthropic-ai/claude-code', '@openai/codex', '@google/gemini-cli', 'opencode-ai', '@qwen-code/qwen-code', '@github/copilot', 'vitest', 'typescript']) {
      expect(() => readFileSync(join(app, 'node_modules', absent, 'package.json')), absent).toThrow();
    }
  });

  it('npx ase run --agent claude --json hi: finds claude on PATH, passes ANTHROPIC_API_KEY, finishes the turn', async () => {
    const run = await execa('npx', ['ase', 'run', '--agent', 'claude', '--json', 'hi'], { cwd: app, env, extendEnv: false, stdin: 'ignore', reject: false, timeout: 30_000 });
    expect(run.stderr).not.toMatch(/AGENT_NOT_FOUND|ENGINE_ERROR|INVALID_OPTIONS/);
    expect(run.exitCode, run.stderr).toBe(0);
    const events = run.stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => AgentEventSchema.parse(JSON.parse(line)));
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['ready', 'session_identified', 'message', 'turn_complete']));
    expect(events.find((e) => e.type === 'turn_complete')).toMatchObject({ status: 'completed' });
    expect(events).toContainEqual(expect.objectContaining({ type: 'message', role: 'assistant', blocks: [{ type: 'text', text: 'hello from the stand-in (turn 1)' }] }));
    // The stand-in answers 2.1.330, the tested version: no warning.
    expect(events.some((e) => e.type === 'warning')).toBe(false);
    const [call] = calls();
    expect(call).toMatchObject({ ANTHROPIC_API_KEY: KEY, NODE_OPTIONS: null });
    expect(call!.argv).toEqual(expect.arrayContaining(['--input-format', 'stream-json', '--session-id']));
  });

  it('a createSession script: the same discovery and credentials, the turn finishes', async () => {
    writeFileSync(
      join(app, 'consumer.mjs'),
      [
        "import { createSession } from 'agent-session-engine';",
        "const session = await createSession({ agent: 'claude', workDir: process.cwd(), dataDir: './ase-data' });",
        'const seen = [];',
        "session.on('agent', ({ event }) => seen.push(event));",
        "session.on('transcript', ({ entry }) => { if (entry.type === 'turn_complete') void session.stop(); });",
        "session.send('hi from createSession');",
        'await session.done;',
        'console.log(JSON.stringify(seen));',
      ].join('\n'),
    );
    const before = calls().length;
    const run = await execa(process.execPath, ['consumer.mjs'], { cwd: app, env, extendEnv: false, stdin: 'ignore', reject: false, timeout: 30_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    const seen = (JSON.parse(run.stdout) as unknown[]).map((e) => AgentEventSchema.parse(e));
    expect(seen.find((e) => e.type === 'turn_complete')).toMatchObject({ status: 'completed' });
    expect(seen).toContainEqual(expect.objectContaining({ type: 'message', role: 'assistant' }));
    expect(calls().slice(before)).toEqual([expect.objectContaining({ ANTHROPIC_API_KEY: KEY })]);
  });

  it('without ANTHROPIC_API_KEY the turn fails with an auth error naming the variables looked for', async () => {
    const { ANTHROPIC_API_KEY: _key, ...noKey } = env;
    const run = await execa('npx', ['ase', 'run', '--agent', 'claude', '--json', 'hi'], { cwd: app, env: noKey, extendEnv: false, stdin: 'ignore', reject: false, timeout: 30_000 });
    expect(run.exitCode).toBe(1);
    const events = run.stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => AgentEventSchema.parse(JSON.parse(line)));
    const auth = events.find((e) => e.type === 'error' && e.kind === 'auth');
    expect(auth).toMatchObject({ message: expect.stringContaining('Claude Code looks for credentials in ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN') });
    expect((auth as { message: string }).message).toContain('none of them was in its environment');
  });

  it('ase doctor: reports the stand-in, its version and the credential variables set (names only)', async () => {
    const run = await execa('npx', ['ase', 'doctor', '--json'], { cwd: app, env, extendEnv: false, stdin: 'ignore', reject: false, timeout: 30_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).not.toContain(KEY);
    const report = JSON.parse(run.stdout) as { engines: { engine: string; agents: AgentDiagnosis[] }[] };
    const agents = report.engines.flatMap((e) => e.agents);
    expect(agents.find((a) => a.agent === 'claude')).toMatchObject({
      found: true,
      source: 'path',
      path: join(standInDir, 'claude'),
      version: '2.1.330',
      testedVersion: '2.1.330',
      credentials: { set: ['ANTHROPIC_API_KEY'] },
    });
    for (const name of ['codex', 'codex-mcp', 'gemini', 'codex-acp', 'claude-code-acp']) {
      const agent = agents.find((a) => a.agent === name);
      expect(agent, name).toMatchObject({ found: false });
      expect(agent!.looked.at(-1), name).toMatch(/^npm package: .*not installed/);
    }
    const text = await execa('npx', ['ase', 'doctor'], { cwd: app, env, extendEnv: false, stdin: 'ignore', reject: false, timeout: 30_000 });
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain(`found        yes, PATH: ${join(standInDir, 'claude')}`);
    expect(text.stdout).toContain('set: ANTHROPIC_API_KEY');
    expect(text.stdout).not.toContain(KEY);
  });

  it('ase doctor with no agent anywhere (empty PATH, no packages): every engine says where it looked, exit 0', async () => {
    const empty = join(root, 'empty-path');
    mkdirSync(empty, { recursive: true });
    const run = await execa(process.execPath, [join(app, 'node_modules', 'agent-session-engine', 'dist', 'cli', 'bin.js'), 'doctor', '--json'], {
      cwd: app,
      env: { PATH: empty, HOME: join(root, 'home'), ...testRunEnv() },
      extendEnv: false,
      reject: false,
      timeout: 30_000,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const agents = (JSON.parse(run.stdout) as { engines: { agents: AgentDiagnosis[] }[] }).engines.flatMap((e) => e.agents);
    expect(agents.length).toBeGreaterThanOrEqual(6);
    for (const agent of agents) {
      expect(agent.found, agent.agent).toBe(false);
      expect(agent.looked, agent.agent).toEqual([
        'bin option: not given',
        `${agent.envVar}: not set`,
        expect.stringMatching(/^PATH: no ".+" in 1 directory$/),
        expect.stringMatching(/^npm package: /),
      ]);
      expect(agent.credentials.set).toEqual([]);
    }
    const claude = await execa(process.execPath, [join(app, 'node_modules', 'agent-session-engine', 'dist', 'cli', 'bin.js'), 'run', '--agent', 'claude', 'hi'], {
      cwd: app,
      env: { PATH: empty, HOME: join(root, 'home'), ...testRunEnv() },
      extendEnv: false,
      stdin: 'ignore',
      reject: false,
      timeout: 30_000,
    });
    expect(claude.exitCode).toBe(1);
    expect(claude.stderr).toContain('the Claude Code CLI was not found. Looked in: bin option: not given; ASE_CLAUDE_BIN: not set; PATH: no "claude" in 1 directory; npm package:');
  });
});
