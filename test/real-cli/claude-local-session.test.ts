/**
 * Local mode and handoff through a whole session with the REAL pinned Claude Code CLI (mock
 * Messages API, loopback only): the terminal UI in a PTY shown on `session.terminal` (read with a
 * headless terminal emulator), a remote client answering a dialog shown in it, and a soak of
 * alternating switches with messages sent during the transitions.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine } from '../../src/engines/claude/index.js';
import { createSession, DEFAULT_SESSION_CONFIG, MemoryJournal, MemoryStore, type AgentEvent, type Session, type SessionNotice, type TranscriptEntry } from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../support/claude-hermetic.js';
import { HeadlessScreen, seedClaudeTuiConfig } from '../support/headless-screen.js';
import { latencyStats, runSwitchSoak } from '../support/local-switch-soak.js';
import { phase, waitForNotice } from '../support/session-notices.js';
import { findProcesses } from '../support/processes.js';

// 8 switches (4 each way: a resumed session resumed again, and again) prove what 20 did: each
// message once and in order, one session throughout, nothing left. The long soak (latency
// figures in docs/engines.md): LOCAL_SOAK_SWITCHES=20 node scripts/loopback-only.mjs npx vitest run test/real-cli/claude-local-session.test.ts
const SWITCHES = Number(process.env.LOCAL_SOAK_SWITCHES ?? 8);
/** Waits on a notice, as long as a switch of the real CLI may take. */
const waitFor = (session: Session, pred: (n: SessionNotice) => boolean, what: string) => waitForNotice(session, pred, what, 60_000);

describe('claude local mode through a session, with the real CLI', () => {
  let root: string;
  let mock: AnthropicMock;
  let session: Session | undefined;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-claude-local-session-'));
    mock = await startAnthropicMock();
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function open(journal = new MemoryJournal()) {
    const work = join(root, 'work');
    mkdirSync(work, { recursive: true });
    const env = hermeticClaudeEnv({ port: mock.port, root });
    seedClaudeTuiConfig(env.CLAUDE_CONFIG_DIR!, work);
    const opened = await createSession({
      agent: 'claude',
      engines: [claudeEngine({ bin: claudeBinary() })],
      store: new MemoryStore(),
      journal,
      workDir: work,
      mode: 'local',
      engineOptions: { env, permissionMode: 'default' },
      config: { restartBaseMs: 100 },
    });
    session = opened;
    const screen = new HeadlessScreen();
    opened.terminal.resize(screen.cols, screen.rows);
    opened.terminal.onData((data) => screen.term.write(data));
    const events: AgentEvent[] = [];
    const errors: string[] = [];
    if (process.env.LOCAL_SOAK_DEBUG) opened.on('*', (n) => n.type !== 'agent' || n.event.type !== 'text_delta' ? console.log(JSON.stringify(n).slice(0, 900)) : undefined);
    opened.on('agent', (n) => events.push(n.event));
    opened.on('error', (n) => errors.push(`${n.error.code}: ${n.error.message}`));
    return { work, env, session: opened, screen, events, errors, journal };
  }

  // Both desk stories on one Claude Code (one start fewer): the dialog approved by a remote client,
  // then a desk turn declined at the desk, after which the phone takes control.
  it('a remote client approves a dialog shown in the local terminal UI; a desk turn ended by declining its dialog at the desk: the phone takes control at once, no wait for a local turn', async () => {
    const journal = new MemoryJournal();
    const { work, session, screen, errors } = await open(journal);
    await waitFor(session, phase('local'), 'local phase');
    await screen.waitFor(/❯/);
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'echo from-the-phone > phone.txt', description: 'write' } }, { kind: 'text', text: 'written' });
    const prompt = waitFor(session, (n) => n.type === 'permission_prompt', 'permission prompt');
    session.terminal.write('write the file please');
    await screen.waitFor(/write the file please/);
    session.terminal.write('\r');
    const ask = (await prompt) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    expect(ask).toMatchObject({ toolName: 'Bash', input: { command: 'echo from-the-phone > phone.txt' } });
    await screen.waitFor(/Do you want to proceed\?/);
    const resolved = waitFor(session, (n) => n.type === 'permission_resolved', 'permission resolved');
    await session.decide(ask.requestId, 'allow');
    expect(await resolved).toMatchObject({ requestId: ask.requestId, status: 'approved' });
    await waitFor(session, (n) => n.type === 'agent' && n.event.type === 'turn_complete', 'turn end');
    await screen.waitFor(/written/);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(work, 'phone.txt'), 'utf8')).toBe('from-the-phone\n');
    expect(session.snapshot().mode).toBe('local');
    expect(errors).toEqual([]);

    // A desk turn declined at the desk: the phone takes control at once.
    mock.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'echo no > declined.txt', description: 'write' } }, { kind: 'text', text: 'never asked for' });
    const declinedPrompt = waitFor(session, (n) => n.type === 'permission_prompt', 'permission prompt');
    // Claude Code runs no Stop hook for a turn the person interrupts: only its transcript says so.
    const ended = waitFor(session, (n) => n.type === 'agent' && n.event.type === 'turn_complete', 'the declined desk turn to end');
    session.terminal.write('a risky question from the desk');
    await screen.waitFor(/a risky question from the desk/);
    session.terminal.write('\r');
    await declinedPrompt;
    await screen.waitFor(/Do you want to proceed\?/);
    session.terminal.write('\x1b');
    expect(await ended).toMatchObject({ event: { status: 'cancelled' } });
    const ready = waitFor(session, (n) => n.type === 'status' && n.mode === 'remote' && n.phase === 'idle', 'remote ready');
    const taken = performance.now();
    await session.switchMode('remote');
    await ready;
    const ms = performance.now() - taken;
    const entries: TranscriptEntry[] = await journal.read(session.id);
    expect(entries.filter((e) => e.type === 'handoff_waiting')).toEqual([]);
    // Each desk prompt once: the approved turn's and the declined one's.
    expect(entries.filter((e) => e.type === 'message' && (e.payload as { role: string }).role === 'user')).toHaveLength(2);
    expect(ms).toBeLessThan(DEFAULT_SESSION_CONFIG.handoffWaitMs);
    expect(errors).toEqual([]);
    console.log(`[claude-local-take-control] after a declined desk turn: ${Math.round(ms)} ms`);
  });

  it(`soak: ${SWITCHES} alternating switches with messages sent during the transitions: each delivered once, in order, one session id, nothing left`, async () => {
    const journal = new MemoryJournal();
    const opened = await open(journal);
    const { screen, events, errors } = opened;
    const s = opened.session;
    await waitFor(s, phase('local'), 'local phase');
    await screen.waitFor(/❯/);
    const soak = await runSwitchSoak(s, screen, SWITCHES);
    const sent = soak.sent;
    await s.stop();
    session = undefined;

    const entries: TranscriptEntry[] = await journal.read(s.id);
    const delivered = entries.filter((e) => e.type === 'user_message').map((e) => (e.payload as { localId: string }).localId);
    expect(delivered).toEqual(sent);
    // The model saw each message exactly once (the last user text of the requests that answered it).
    const asked = mock.requests
      .filter((r) => r.pathname === '/v1/messages' && r.body?.stream === true)
      .map((r) => /message (r\d+-[ab])/.exec(JSON.stringify((r.body?.messages as { role: string }[] | undefined)?.filter((m) => m.role === 'user').at(-1) ?? ''))?.[1])
      .filter((id): id is string => id !== undefined);
    expect(asked).toEqual(sent);
    const ids = new Set(events.filter((e) => e.type === 'session_identified').map((e) => (e as { resumeToken: string }).resumeToken));
    expect(ids.size).toBe(1);
    expect(errors).toEqual([]);
    expect(entries.filter((e) => e.type === 'turn_ended')).toEqual([]);
    expect(findProcesses((p) => p.environ().includes(root))).toEqual([]);
    console.log(`[claude-local-soak] ${soak.switches} switches; local→remote (send → remote ready): ${latencyStats(soak.toRemote)}; remote→local (switchMode → local phase): ${latencyStats(soak.toLocal)}, (switchMode → the conversation on screen): ${latencyStats(soak.toLocalScreen)}`);
  }, 600_000);
});
