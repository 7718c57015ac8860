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
import { latencyStats, runSwitchSoak } from '../support/local-switch-soak.js';
import { phase, waitForNotice } from '../support/session-notices.js';
import { findProcesses } from '../support/processes.js';

// 8 switches (4 each way: a resumed session resumed again, and again) prove what 20 did: each
// message once and in order, one session throughout, nothing left. The long soak (latency
// figures in docs/engines.md): LOCAL_SOAK_SWITCHES=20 node scripts/loopback-only.mjs npx vitest run test/real-cli/codex-local-session.test.ts
const SWITCHES = Number(process.env.LOCAL_SOAK_SWITCHES ?? 8);
/** Waits on a notice, as long as a switch of the real CLI may take. */
const waitFor = (session: Session, pred: (n: SessionNotice) => boolean, what: string) => waitForNotice(session, pred, what, 60_000);

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
    expect(ask.toolName).toBe('shell'); // Codex's hook says Bash; every codex engine says shell
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
    const soak = await runSwitchSoak(s, screen, SWITCHES);
    const sent = soak.sent;
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
    console.log(`[codex-local-soak] ${soak.switches} switches; local→remote (send → remote ready): ${latencyStats(soak.toRemote)}; remote→local (switchMode → local phase): ${latencyStats(soak.toLocal)}, (switchMode → the conversation on screen): ${latencyStats(soak.toLocalScreen)}`);
  }, 600_000);
});
