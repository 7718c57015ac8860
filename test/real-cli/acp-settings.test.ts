/**
 * `session.setModel()` / `session.setPermissionMode()` through the acp engine with the REAL pinned
 * gemini-cli 0.61.0 (`--acp`) and our Gemini API mock on 127.0.0.1 (one preset; the others speak
 * the same requests, test/unit/acp-session-settings.test.ts covers the config-option path):
 * - the model goes through `session/set_model` (gemini reports the legacy `models` state): the
 *   next turn's request path names it; `null` goes back to what the session opened with (`auto`);
 * - the permission mode is gemini's mode id (`session/set_mode`): `yolo` runs a shell command
 *   without asking;
 * - a model or mode gemini does not offer is refused (INVALID_INPUT, its choices listed) before
 *   anything is stored.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Session, SessionNotice, TrafficRecord } from '../../src/index.js';
import { startGeminiMock, type GeminiMock } from '../mocks/gemini-mock.js';
import { AcpAgentBench, acpSession, sessionReady } from '../support/acp-agent-bench.js';
import { hermeticGemini } from '../support/acp-hermetic.js';
import { rejection } from '../support/async.js';

describe('acp (gemini-cli): setModel / setPermissionMode', () => {
  let bench: AcpAgentBench<GeminiMock>;
  let mock: GeminiMock;
  let session: Session | undefined;

  beforeEach(async () => {
    bench = await AcpAgentBench.open('ase-acp-settings-', startGeminiMock);
    mock = bench.mock;
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await bench.close();
  });

  it('a new model reaches the model API, yolo runs a command without asking, and unknown names are refused', async () => {
    const h = hermeticGemini({ port: mock.port, root: bench.root });
    const sentToAgent: { method?: string; params?: Record<string, unknown> }[] = [];
    const onTraffic = (r: TrafficRecord) => r.direction === 'to_agent' && sentToAgent.push(JSON.parse(r.line) as (typeof sentToAgent)[number]);
    const started = await acpSession({ preset: 'gemini', onTraffic }, h.work, { env: h.env });
    session = started.session;
    const { log } = started;
    const s = session;
    const prompts: SessionNotice[] = [];
    s.on('permission_prompt', (n) => {
      prompts.push(n);
      void s.decide(n.requestId, 'deny', { message: 'not expected' });
    });
    await sessionReady(log);
    const streamModels = () => mock.requestsFor('streamGenerateContent').map((r) => r.model);

    await s.setModel('gemini-2.5-pro');
    mock.enqueue({ kind: 'text', text: 'pro here' });
    let done = log.next('turn_complete');
    void s.send('which model?');
    expect((await done).status).toBe('completed');
    expect(streamModels().at(-1)).toBe('gemini-2.5-pro');

    // The agent's own choices, checked before anything is stored.
    const badModel = await rejection(s.setModel('gpt-9'));
    expect(badModel).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('gemini-2.5-pro') });
    const badMode = await rejection(s.setPermissionMode('bypassPermissions'));
    expect(badMode).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('its modes: default, autoEdit, yolo, plan') });
    expect(s.snapshot()).toMatchObject({ model: 'gemini-2.5-pro' });
    expect(s.snapshot()).not.toHaveProperty('permissionMode');

    await s.setPermissionMode('yolo');
    mock.enqueue({ kind: 'function_call', name: 'run_shell_command', args: { command: 'echo yolo-ran', description: 'run it' } }, { kind: 'text', text: 'ran it' });
    done = log.next('turn_complete');
    void s.send('run it');
    expect((await done).status).toBe('completed');
    expect(prompts).toEqual([]);
    expect(log.of('tool_result').at(-1)).toMatchObject({ status: 'completed' });

    await s.setModel(null);
    mock.enqueue({ kind: 'text', text: 'back' });
    done = log.next('turn_complete');
    void s.send('and now?');
    expect((await done).status).toBe('completed');
    // Back to what the session opened with (gemini's `auto`: its router picks per request).
    expect(sentToAgent.filter((m) => m.method === 'session/set_model').map((m) => m.params?.['modelId'])).toEqual(['gemini-2.5-pro', 'auto']);
    expect(log.of('error')).toEqual([]);
  });
});
