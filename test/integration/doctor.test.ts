/**
 * `ase doctor` (the built CLI) with every pinned agent CLI of this repository named through the
 * engines' variables and nothing on PATH: each engine reports the CLI it would run, found in its
 * variable, with the version it is tested against; the credential variables that are set are
 * listed by name, never with their values. The no-agent case and the PATH case run in the
 * consumer test (test/integration/consumer.test.ts), against the packed library.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentDiagnosis } from '../../src/index.js';
import { ASE_BIN, ensureBuiltCli } from '../support/built-cli.js';
import { testRunEnv } from '../support/orphan-check.js';
import { pinnedAgentEnv } from '../support/pinned-agents.js';

let root: string;
beforeAll(async () => {
  await ensureBuiltCli();
  root = mkdtempSync(join(tmpdir(), 'ase-doctor-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('ase doctor with each pinned agent', () => {
  it('finds every pinned CLI through its variable, at the tested version; credentials by name only', async () => {
    const pinned = pinnedAgentEnv();
    const env = { PATH: join(root, 'empty'), HOME: root, ...pinned, OPENAI_API_KEY: 'sk-doctor-secret', GEMINI_API_KEY: 'gm-doctor-secret', ...testRunEnv() };
    const run = await execa(process.execPath, [ASE_BIN, 'doctor', '--json'], { env, extendEnv: false, reject: false, timeout: 60_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(/doctor-secret/);
    const agents = (JSON.parse(run.stdout) as { engines: { engine: string; agents: AgentDiagnosis[] }[] }).engines.flatMap((e) => e.agents);
    const byVar = new Map(agents.map((a) => [a.envVar, a]));
    expect([...byVar.keys()]).toEqual(expect.arrayContaining(Object.keys(pinned)));
    for (const variable of Object.keys(pinned)) {
      const agent = byVar.get(variable)!;
      expect(agent, variable).toMatchObject({ found: true, source: 'env', where: variable });
      expect(agent.version, variable).toBe(agent.testedVersion);
    }
    expect(byVar.get('ASE_CODEX_BIN')!.credentials.set).toEqual(['OPENAI_API_KEY']);
    expect(byVar.get('ASE_GEMINI_BIN')!.credentials.set).toEqual(['GEMINI_API_KEY']);
    expect(byVar.get('ASE_CLAUDE_BIN')!.credentials.set).toEqual([]);

    const text = await execa(process.execPath, [ASE_BIN, 'doctor'], { env: { ...env, NO_COLOR: '1' }, extendEnv: false, reject: false, timeout: 60_000 });
    expect(text.exitCode).toBe(0);
    expect(text.stdout).not.toMatch(/doctor-secret/);
    expect(text.stdout).toContain(`found        yes, ASE_CLAUDE_BIN: ${pinned['ASE_CLAUDE_BIN']}`);
    expect(text.stdout).toMatch(/version {6}2\.1\.330 ✓ tested/);
    expect(text.stdout).toContain('set: OPENAI_API_KEY');
    // each engine's runtime tier (docs/engines.md, runtime tiers)
    expect(text.stdout).toContain('tier         claude: hooked; turnEnd authoritative, toolUse authoritative, permission authoritative, cost authoritative, fileChanges cooperative');
    expect(text.stdout).toContain('tier         codex: hooked;');
    const tiers = (JSON.parse(run.stdout) as { engines: { engine: string; tier: { tier: string } }[] }).engines.map((e) => [e.engine, e.tier.tier]);
    expect(Object.fromEntries(tiers)).toMatchObject({ fake: 'hooked', claude: 'hooked', codex: 'hooked', 'codex-mcp': 'hooked', acp: 'hooked' });
  });

  it('a variable that names nothing is reported as such (not silently replaced by another place)', async () => {
    const run = await execa(process.execPath, [ASE_BIN, 'doctor', '--json'], {
      env: { PATH: join(root, 'empty'), HOME: root, ASE_CODEX_BIN: join(root, 'no-such-codex'), ...testRunEnv() },
      extendEnv: false,
      reject: false,
      timeout: 60_000,
    });
    const codex = (JSON.parse(run.stdout) as { engines: { agents: AgentDiagnosis[] }[] }).engines.flatMap((e) => e.agents).find((a) => a.agent === 'codex')!;
    expect(codex).toMatchObject({ found: false, looked: ['bin option: not given', `ASE_CODEX_BIN: ${join(root, 'no-such-codex')} (no such executable file)`] });
  });
});
