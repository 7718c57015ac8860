/**
 * `EngineFactory.checkResume` of the claude and codex engines against files laid out as the real
 * CLIs write them: Claude Code's transcript `<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<slug of the
 * cwd>/<sessionId>.jsonl`, Codex's rollout `<CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/
 * rollout-<time>-<threadId>.jsonl` (the recorded 0.169.0 rollout of test/fixtures). The check is
 * what keeps a host from adopting a session whose agent would start over there (issue 22). The
 * real CLIs writing these files are in test/real-cli/claude-engine.test.ts and
 * codex-app-server-engine.test.ts (their resume scenarios ask the same check).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine, claudePrintEngine, projectSlug } from '../../src/engines/claude/index.js';
import { codexEngine, codexExecEngine, codexMcpEngine } from '../../src/engines/codex/index.js';
import type { EngineFactory } from '../../src/engines/core/engine.js';
import type { ResumeTarget } from '../../src/engines/core/resume-check.js';
import { isAseError } from '../../src/errors.js';

const ROLLOUT_FIXTURE = new URL('../fixtures/codex/rollout/paginated-app-server-0.169.0.rollout.jsonl', import.meta.url);
/** The thread the recorded rollout is of (its session_meta line). */
const THREAD = '01a2077a-c650-7cc2-bf7b-ee5ea5a62ab3';
const CLAUDE_SESSION = '27e40ded-5b5a-4a8e-9a57-3c1f2b6e0d11';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ase-resume-check-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const check = (factory: EngineFactory, target: ResumeTarget) => factory.checkResume!(target);

/** A transcript where Claude Code puts it: the first lines of a real one (a user line, an assistant line). */
function writeTranscript(configDir: string, cwd: string, sessionId: string, slug = projectSlug(cwd)): string {
  const dir = join(configDir, 'projects', slug);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${sessionId}.jsonl`);
  const line = (type: string, message: unknown) => JSON.stringify({ parentUuid: null, isSidechain: false, userType: 'external', cwd, sessionId, version: '2.1.330', type, message, uuid: `${type}-1`, timestamp: '2026-11-23T08:16:56.448Z' });
  writeFileSync(file, `${line('user', { role: 'user', content: 'remember the word pineapple' })}\n${line('assistant', { role: 'assistant', content: [{ type: 'text', text: 'ok' }] })}\n`);
  return file;
}

/** The recorded 0.169.0 rollout where Codex puts it: a local-date folder, `rollout-<local time>-<thread>.jsonl`. */
function writeRollout(codexHome: string, threadId = THREAD, day = ['2026', '11', '23']): string {
  const dir = join(codexHome, 'sessions', ...day);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `rollout-${day.join('-')}T08-16-56-${threadId}.jsonl`);
  writeFileSync(file, readFileSync(ROLLOUT_FIXTURE));
  return file;
}

describe('claude checkResume: the transcript of the session', () => {
  it('finds it under CLAUDE_CONFIG_DIR (from the engine options, as the engine starts the CLI), for claude and claude-print', async () => {
    const config = join(root, 'config');
    const work = join(root, 'work');
    writeTranscript(config, work, CLAUDE_SESSION);
    const target = { resumeToken: CLAUDE_SESSION, workDir: work, engineOptions: { env: { CLAUDE_CONFIG_DIR: config } }, env: { HOME: join(root, 'home') } };
    expect(await check(claudeEngine(), target)).toEqual({ ok: true });
    expect(await check(claudePrintEngine(), target)).toEqual({ ok: true });
    // The factory's options count too (a session's win over them).
    expect(await check(claudeEngine({ env: { CLAUDE_CONFIG_DIR: config } }), { ...target, engineOptions: {} })).toEqual({ ok: true });
  });

  it('finds it under ~/.claude of the inherited HOME, and under the inherited CLAUDE_CONFIG_DIR', async () => {
    const home = join(root, 'home');
    const work = join(root, 'work');
    writeTranscript(join(home, '.claude'), work, CLAUDE_SESSION);
    expect(await check(claudeEngine(), { resumeToken: CLAUDE_SESSION, workDir: work, engineOptions: {}, env: { HOME: home } })).toEqual({ ok: true });
    const config = join(root, 'config');
    writeTranscript(config, work, 'other-session');
    expect(await check(claudeEngine(), { resumeToken: 'other-session', workDir: work, engineOptions: {}, env: { HOME: home, CLAUDE_CONFIG_DIR: config } })).toEqual({ ok: true });
  });

  it('is missing: refused, naming the path looked for; another session id, or another config dir, does not count', async () => {
    const config = join(root, 'config');
    const work = join(root, 'work');
    writeTranscript(config, work, CLAUDE_SESSION);
    const refused = await check(claudeEngine(), { resumeToken: 'not-this-one', workDir: work, engineOptions: {}, env: { CLAUDE_CONFIG_DIR: config } });
    expect(refused).toEqual({ ok: false, reason: expect.stringContaining(join(config, 'projects', projectSlug(work), 'not-this-one.jsonl')) });
    // The same session, but this host's Claude Code keeps its files elsewhere (another machine's HOME).
    expect(await check(claudeEngine(), { resumeToken: CLAUDE_SESSION, workDir: work, engineOptions: {}, env: { HOME: join(root, 'elsewhere') } })).toMatchObject({ ok: false });
    // No projects folder at all.
    expect(await check(claudeEngine(), { resumeToken: CLAUDE_SESSION, workDir: work, engineOptions: {}, env: { CLAUDE_CONFIG_DIR: join(root, 'empty') } })).toMatchObject({ ok: false });
  });

  it('a directory where the transcript should be is not a transcript', async () => {
    const config = join(root, 'config');
    const work = join(root, 'work');
    mkdirSync(join(config, 'projects', projectSlug(work), `${CLAUDE_SESSION}.jsonl`), { recursive: true });
    expect(await check(claudeEngine(), { resumeToken: CLAUDE_SESSION, workDir: work, engineOptions: {}, env: { CLAUDE_CONFIG_DIR: config } })).toMatchObject({ ok: false });
  });

  it('finds a session started in another directory, and one whose cwd is too long for a plain slug (`--resume` finds both)', async () => {
    const config = join(root, 'config');
    writeTranscript(config, join(root, 'first-dir'), CLAUDE_SESSION);
    expect(await check(claudeEngine(), { resumeToken: CLAUDE_SESSION, workDir: join(root, 'work'), engineOptions: {}, env: { CLAUDE_CONFIG_DIR: config } })).toEqual({ ok: true });
    // Over 200 characters the CLI truncates the slug and appends a hash of its own.
    const deep = join(root, 'd'.repeat(120), 'e'.repeat(120));
    writeTranscript(config, deep, 'deep-session', `${projectSlug(deep).slice(0, 200)}-1x2y3z`);
    expect(await check(claudeEngine(), { resumeToken: 'deep-session', workDir: deep, engineOptions: {}, env: { CLAUDE_CONFIG_DIR: config } })).toEqual({ ok: true });
  });

  it('bad engine options are refused as at start (INVALID_OPTIONS), not answered', async () => {
    const failure = await check(claudeEngine(), { resumeToken: CLAUDE_SESSION, workDir: root, engineOptions: { nonsense: true } }).catch((error: unknown) => error);
    expect(isAseError(failure, 'INVALID_OPTIONS')).toBe(true);
  });
});

describe('codex checkResume: the rollout of the thread', () => {
  it('finds it in its date folder under CODEX_HOME (engine options, inherited, or ~/.codex), for codex and codex-exec', async () => {
    const codexHome = join(root, 'codex-home');
    writeRollout(codexHome);
    const target = { resumeToken: THREAD, workDir: join(root, 'work'), engineOptions: { env: { CODEX_HOME: codexHome } }, env: { HOME: join(root, 'home') } };
    expect(await check(codexEngine(), target)).toEqual({ ok: true });
    expect(await check(codexExecEngine(), target)).toEqual({ ok: true });
    expect(await check(codexEngine(), { ...target, engineOptions: {}, env: { CODEX_HOME: codexHome } })).toEqual({ ok: true });
    const home = join(root, 'home');
    writeRollout(join(home, '.codex'), THREAD, ['2025', '01', '31']);
    expect(await check(codexEngine(), { ...target, engineOptions: {}, env: { HOME: home } })).toEqual({ ok: true });
  });

  it('is missing: refused, naming where it looked; another thread, or another CODEX_HOME, does not count', async () => {
    const codexHome = join(root, 'codex-home');
    writeRollout(codexHome);
    const other = '01a2077a-c650-7cc2-bf7b-000000000000';
    const refused = await check(codexEngine(), { resumeToken: other, workDir: root, engineOptions: {}, env: { CODEX_HOME: codexHome } });
    expect(refused).toEqual({ ok: false, reason: expect.stringContaining(join(codexHome, 'sessions')) });
    expect(refused).toMatchObject({ reason: expect.stringContaining(other) });
    expect(await check(codexEngine(), { resumeToken: THREAD, workDir: root, engineOptions: {}, env: { HOME: join(root, 'elsewhere') } })).toMatchObject({ ok: false });
    // A rollout whose id only ends like the thread's is another thread's.
    writeRollout(codexHome, `x${other}`);
    expect(await check(codexEngine(), { resumeToken: other, workDir: root, engineOptions: {}, env: { CODEX_HOME: codexHome } })).toMatchObject({ ok: false });
  });

  it('bad engine options are refused as at start (INVALID_OPTIONS); codex-mcp has no check (its threads never outlive the server)', async () => {
    const failure = await check(codexEngine(), { resumeToken: THREAD, workDir: root, engineOptions: { nonsense: true } }).catch((error: unknown) => error);
    expect(isAseError(failure, 'INVALID_OPTIONS')).toBe(true);
    expect(codexMcpEngine().checkResume).toBeUndefined();
  });
});
