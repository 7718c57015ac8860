/**
 * Both Codex engines under a real SessionActor (createSession, remote mode), against the REAL
 * pinned binaries and the mock Responses API: a turn whose shell command needs approval, decided
 * through `session.decide()`; a second approval decided with `updatedPermissions` (Codex's
 * "for this session" answer); the session's resume token is the Codex thread id; nothing of ours
 * survives `stop()`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexEngine, codexMcpEngine } from '../../src/engines/codex/index.js';
import type { TrafficTap } from '../../src/engines/transport/traffic.js';
import type { EngineFactory } from '../../src/engines/core/engine.js';
import { createSession, MemoryJournal, MemoryStore, type AgentEvent, type Session, type SessionNotice } from '../../src/index.js';
import { execCommandCall, startOpenAIResponsesMock, type OpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { hermeticCodex, type CodexVersion } from '../support/codex-hermetic.js';
import { recordTraffic, type TrafficEntry } from '../support/codex-engine-kit.js';
import { processesUnder } from '../support/processes.js';
import { agentEvent, waitForNotice } from '../support/session-notices.js';

const escalated = { sandbox_permissions: 'require_escalated', justification: 'need it' };

const cases: { agent: string; version: CodexVersion; factory: (onTraffic: TrafficTap) => EngineFactory; forSession: unknown }[] = [
  { agent: 'codex', version: '0.169.0', factory: (onTraffic) => codexEngine({ onTraffic }), forSession: 'acceptForSession' },
  { agent: 'codex-mcp', version: '0.153.4', factory: (onTraffic) => codexMcpEngine({ onTraffic }), forSession: 'approved_for_session' },
];

describe.each(cases)('$agent engine under a SessionActor (real codex $version)', ({ agent, version, factory, forSession }) => {
  let mock: OpenAIResponsesMock;
  let root: string;
  let session: Session | undefined;

  beforeEach(async () => {
    mock = await startOpenAIResponsesMock();
    root = mkdtempSync(join(tmpdir(), `ase-${agent}-session-`));
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('completes a turn whose shell command is approved through decide(), then one approved for the session', async () => {
    const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, target: version });
    const events: AgentEvent[] = [];
    const traffic: TrafficEntry[] = [];
    const t0 = performance.now();
    session = await createSession({
      agent,
      engines: [factory(recordTraffic(traffic))],
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      workDir: h.workDir,
      engineOptions: { bin: h.bin, env: h.env, approvalPolicy: 'on-request' },
    });
    session.on('agent', (n) => events.push(n.event));
    await waitForNotice(session, agentEvent('ready'), 'ready');
    const readyMs = Math.round(performance.now() - t0);

    const target = join(h.workDir, 'approved.txt');
    mock.enqueue(execCommandCall(`echo approved > ${target}`, escalated), { kind: 'text', text: 'File written.' });
    const t = performance.now();
    const prompt = waitForNotice(session, (n) => n.type === 'permission_prompt', 'permission_prompt');
    let done = waitForNotice(session, agentEvent('turn_complete'), 'turn complete');
    session.send('write the file');
    const p = (await prompt) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    expect(p.toolName).toBe('shell');
    expect(p.input).toMatchObject({ command: expect.stringContaining(`echo approved > ${target}`) });
    session.decide(p.requestId, 'allow');
    const tc = (await done) as Extract<SessionNotice, { type: 'agent' }>;
    const turnMs = Math.round(performance.now() - t);
    expect(tc.event).toMatchObject({ type: 'turn_complete', status: 'completed' });
    expect(readFileSync(target, 'utf8')).toBe('approved\n');
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ callId: p.callId, status: 'completed' });
    expect(session.snapshot().completed[p.requestId]).toBeDefined();
    const identified = events.find((e) => e.type === 'session_identified') as Extract<AgentEvent, { type: 'session_identified' }>;
    expect(session.snapshot().resumeToken).toBe(identified.resumeToken);

    // allow + updatedPermissions → approved/accept "for the session"
    const second = join(h.workDir, 'second.txt');
    mock.enqueue(execCommandCall(`echo again > ${second}`, escalated), { kind: 'text', text: 'Again.' });
    const prompt2 = waitForNotice(session, (n) => n.type === 'permission_prompt', 'second permission_prompt');
    done = waitForNotice(session, agentEvent('turn_complete'), 'second turn complete');
    session.send('write another');
    const p2 = (await prompt2) as Extract<SessionNotice, { type: 'permission_prompt' }>;
    expect(p2.requestId).not.toBe(p.requestId);
    session.decide(p2.requestId, 'allow', { updatedPermissions: ['for-session'] });
    expect(((await done) as Extract<SessionNotice, { type: 'agent' }>).event).toMatchObject({ status: 'completed' });
    expect(readFileSync(second, 'utf8')).toBe('again\n');
    const answers = traffic.filter((e) => e.dir === 'out' && (e.msg as { result?: { decision?: unknown } }).result?.decision !== undefined);
    expect(answers.map((e) => (e.msg as { result: { decision: unknown } }).result.decision)).toEqual([agent === 'codex' ? 'accept' : 'approved', forSession]);

    await session.stop();
    session = undefined;
    expect(events.at(-1)?.type).toBe('exited');
    expect(processesUnder(root)).toEqual([]);
    console.log(`[${agent} session] createSession→ready ${readyMs} ms, approved turn ${turnMs} ms`);
  });
});
