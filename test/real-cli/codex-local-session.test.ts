/**
 * Local mode and handoff through a whole session with the REAL pinned Codex CLI (0.169.0, mock
 * Responses API, loopback only): the terminal UI in a PTY shown on `session.terminal` (read with a
 * headless terminal emulator), the app-server engine in remote mode, a remote client answering a
 * prompt raised in the terminal, and a soak of alternating switches with messages sent during the
 * transitions.
 */
import { mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexEngine } from '../../src/engines/codex/index.js';
import { createSession, MemoryJournal, MemoryStore, type AgentEvent, type Session, type SessionNotice, type TranscriptEntry } from '../../src/index.js';
import { execCommandCall, lastUserText, startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { findRollouts, hermeticCodex } from '../support/codex-hermetic.js';
import { CODEX_TUI_SEEN_TOML, HeadlessScreen } from '../support/headless-screen.js';
import { findProcesses } from '../support/processes.js';

const WAIT_MS = 60_000;
const SWITCHES = Number(process.env.LOCAL_SOAK_SWITCHES ?? 20);

function waitFor(session: Session, pred: (n: SessionNotice) => boolean, what: string, timeoutMs = WAIT_MS): Promise<SessionNotice> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
    const off = session.on('*', (n) => {
      if (!pred(n)) return;
      clearTimeout(timer);
      off();
      resolve(n);
    });
  });
}

const phase = (name: string) => (n: SessionNotice) => n.type === 'status' && n.phase === name;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('codex local mode through a session, with the real CLI', () => {
  let root: string;
  let mock: OpenAIResponsesMock;
  let session: Session | undefined;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-codex-local-session-'));
    mock = await startOpenAIResponsesMock();
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function open(journal = new MemoryJournal()) {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, approvalPolicy: 'on-request', extraToml: CODEX_TUI_SEEN_TOML });
    const opened = await createSession({
      agent: 'codex',
      engines: [codexEngine({ bin: h.bin })],
      store: new MemoryStore(),
      journal,
      workDir: h.workDir,
      mode: 'local',
      engineOptions: { env: h.env, model: 'gpt-5.5', approvalPolicy: 'on-request' },
      config: { restartBaseMs: 100 },
    });
    session = opened;
    const screen = new HeadlessScreen();
    opened.terminal.resize(screen.cols, screen.rows);
    opened.terminal.onData((data) => screen.term.write(data));
    const events: AgentEvent[] = [];
    const errors: string[] = [];
    if (process.env.LOCAL_SOAK_DEBUG) opened.on('*', (n) => (n.type !== 'agent' || n.event.type !== 'text_delta' ? console.log(JSON.stringify(n).slice(0, 900)) : undefined));
    opened.on('agent', (n) => events.push(n.event));
    opened.on('error', (n) => errors.push(`${n.error.code}: ${n.error.message}`));
    return { h, session: opened, screen, events, errors, journal };
  }

  it('a remote client approves a prompt raised in the local terminal UI', async () => {
    const { h, session, screen, errors } = await open();
    await waitFor(session, phase('local'), 'local phase');
    await screen.waitFor(/Ask Codex/);
    const target = join(h.workDir, 'phone.txt');
    mock.enqueue(execCommandCall(`echo from-the-phone > ${target}`, { sandbox_permissions: 'require_escalated', justification: 'need it' }), { kind: 'text', text: 'written' });
    const prompt = waitFor(session, (n) => n.type === 'permission_prompt', 'permission prompt');
    session.terminal.write('write the file please');
    await screen.waitFor(/write the file please/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    session.terminal.write('\r');
    const ask = (await prompt) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    expect(ask.toolName).toBe('Bash');
    await screen.waitFor(/Running hook/);
    const resolved = waitFor(session, (n) => n.type === 'permission_resolved', 'permission resolved');
    await session.decide(ask.requestId, 'allow');
    expect(await resolved).toMatchObject({ requestId: ask.requestId, status: 'approved' });
    await waitFor(session, (n) => n.type === 'agent' && n.event.type === 'turn_complete', 'turn end');
    expect(readFileSync(target, 'utf8')).toBe('from-the-phone\n');
    expect(session.snapshot().mode).toBe('local');
    expect(errors).toEqual([]);
  });

  it('a thread whose rollout is gone cannot be resumed: local mode starts a new one and the session reports the fork', async () => {
    const { h, session, screen, events, errors, journal } = await open();
    await waitFor(session, phase('local'), 'local phase');
    const idle = waitFor(session, phase('idle'), 'remote idle after a turn');
    await session.send('a remote turn', { localId: 'remote-1' });
    await idle;
    const first = session.snapshot().resumeToken!;
    const [rollout] = findRollouts(h.codexHome);
    expect(rollout).toContain(first);
    renameSync(rollout!, join(root, 'moved-away.jsonl'));
    const local = waitFor(session, phase('local'), 'local phase again');
    await session.switchMode('local');
    await local;
    await screen.waitFor(/Ask Codex/);
    const forked = waitFor(session, (n) => n.type === 'error' && n.error.code === 'RESUME_FORKED', 'RESUME_FORKED');
    session.terminal.write('typed after the switch');
    await screen.waitFor(/typed after the switch/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    session.terminal.write('\r');
    await forked;
    const second = session.snapshot().resumeToken;
    expect(second).not.toBe(first);
    expect(events.some((e) => e.type === 'warning' && e.code === 'thread_not_resumable')).toBe(true);
    expect(errors.map((e) => e.split(':')[0])).toEqual(['RESUME_FORKED']);
    await session.stop(); // the journal holds every entry once the session has stopped
    const identified = (await journal.read(session.id)).filter((e) => e.type === 'session_identified').map((e) => e.payload as Record<string, unknown>);
    expect(identified.at(-1)).toMatchObject({ resumeToken: second, forkedFrom: first });
  });

  it(`soak: ${SWITCHES} alternating switches with messages sent during the transitions: each delivered once, in order, one thread, nothing left`, async () => {
    const journal = new MemoryJournal();
    const opened = await open(journal);
    const { h, screen, events, errors } = opened;
    const s = opened.session;
    await waitFor(s, phase('local'), 'local phase');
    await screen.waitFor(/Ask Codex/);
    const latency = { toRemote: [] as number[], toLocal: [] as number[], toLocalScreen: [] as number[] };
    const sent: string[] = [];
    let switches = 0;
    let round = 0;
    while (switches < SWITCHES) {
      // local → remote: the first send asks for remote control; the second arrives mid-switch.
      const t0 = performance.now();
      const remoteIdle = waitFor(s, phase('idle'), 'remote idle after the sends');
      const firstReady = waitFor(s, (n) => n.type === 'status' && n.mode === 'remote' && (n.phase === 'running' || n.phase === 'idle'), 'remote ready');
      const a = `r${round}-a`;
      const b = `r${round}-b`;
      sent.push(a, b);
      const switching = waitFor(s, phase('switching'), 'switching');
      void s.send(`message ${a}`, { localId: a });
      await switching;
      void s.send(`message ${b}`, { localId: b });
      await firstReady;
      latency.toRemote.push(performance.now() - t0);
      await remoteIdle;
      switches++;
      if (switches >= SWITCHES) break;
      // remote → local.
      const t1 = performance.now();
      const local = waitFor(s, phase('local'), 'local phase');
      await s.switchMode('local');
      await local;
      latency.toLocal.push(performance.now() - t1);
      // The resumed terminal UI shows the conversation, the turns answered remotely included.
      await screen.waitFor(new RegExp(`Echo: message ${b}`));
      latency.toLocalScreen.push(performance.now() - t1);
      switches++;
      round++;
    }
    await s.stop();
    session = undefined;

    const entries: TranscriptEntry[] = await journal.read(s.id);
    const delivered = entries.filter((e) => e.type === 'user_message').map((e) => (e.payload as { localId: string }).localId);
    expect(delivered).toEqual(sent);
    // The model saw each message exactly once (the last user text of the requests that asked it).
    const asked = mock.requests
      .filter((r) => r.pathname.endsWith('/responses'))
      .map((r) => /^message (r\d+-[ab])$/.exec(lastUserText(r.body))?.[1])
      .filter((id): id is string => id !== undefined);
    expect(asked).toEqual(sent);
    const ids = new Set(events.filter((e) => e.type === 'session_identified').map((e) => (e as { resumeToken: string }).resumeToken));
    expect(ids.size).toBe(1);
    expect(findRollouts(h.codexHome)).toHaveLength(1);
    expect(errors).toEqual([]);
    expect(entries.filter((e) => e.type === 'turn_ended')).toEqual([]);
    expect(findProcesses((p) => p.environ().includes(root))).toEqual([]);
    const stats = (xs: number[]) => `median ${Math.round(percentile(xs, 50))} ms, p95 ${Math.round(percentile(xs, 95))} ms (n=${xs.length})`;
    console.log(`[codex-local-soak] ${switches} switches; local→remote (send → remote ready): ${stats(latency.toRemote)}; remote→local (switchMode → local phase): ${stats(latency.toLocal)}, (switchMode → the conversation on screen): ${stats(latency.toLocalScreen)}`);
  }, 600_000);
});
