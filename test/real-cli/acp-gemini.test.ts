/**
 * The acp engine with the REAL pinned gemini-cli 0.61.0 (`--acp`) against our Gemini API mock on
 * 127.0.0.1 (`GOOGLE_GEMINI_BASE_URL`), hermetic HOME per test.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Session } from '../../src/index.js';
import { startGeminiMock, type GeminiMock } from '../mocks/gemini-mock.js';
import { AcpAgentBench, acpSession, sessionReady } from '../support/acp-agent-bench.js';
import { hermeticGemini } from '../support/acp-hermetic.js';
import { runScenarioSuite, type AgentSetup } from '../support/acp-scenarios.js';
import { nextNotice } from '../support/acp-session.js';
import { waitNoProcessesUnder } from '../support/processes.js';

describe('acp engine with gemini-cli --acp', () => {
  let bench: AcpAgentBench<GeminiMock>;
  let root: string;
  let mock: GeminiMock;
  let session: Session | undefined;

  beforeEach(async () => {
    bench = await AcpAgentBench.open('ase-acp-gemini-', startGeminiMock);
    ({ root, mock } = bench);
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await bench.close();
  });

  function setup(): AgentSetup {
    const h = hermeticGemini({ port: mock.port, root });
    return {
      work: h.work,
      options: { preset: 'gemini', env: h.env, fs: { enabled: true } },
      model: {
        text: (text) => mock.enqueue({ kind: 'text', text }),
        thinking: (thinking, text) => mock.enqueue({ kind: 'thinking', thinking, text }),
        shell: (command) => mock.enqueue({ kind: 'function_call', name: 'run_shell_command', args: { command, description: 'run it' } }),
        slow: (text) => mock.enqueue({ kind: 'text', text, chunks: 40, delayMs: 100 }),
      },
      close: async () => undefined,
    };
  }

  it('text, thinking, tool allowed/rejected, cancel mid-stream and at a permission (fixture recorded)', async () => {
    const timings = await runScenarioSuite('gemini', root, setup(), { thinking: true });
    console.log(`[acp-gemini] timings ${JSON.stringify(timings)}`);
  });

  // One session (one gemini start, most of each story's time) for both SessionActor stories: the
  // permissioned write_file turn, then the abort at a pending permission prompt and the turn after.
  it('a SessionActor in remote mode completes a permissioned write_file turn through decide() (fs through the client); an abort while a permission prompt is pending cancels the request and the turn; the next turn works', async () => {
    const h = hermeticGemini({ port: mock.port, root });
    const target = join(h.work, 'notes', 'hello.txt');
    const started = await acpSession({ preset: 'gemini' }, h.work, { env: h.env, fs: { enabled: true } });
    session = started.session;
    const { log } = started;
    await sessionReady(log);
    mock.enqueue({ kind: 'function_call', name: 'write_file', args: { file_path: target, content: 'hello from gemini\n' } }, { kind: 'text', text: 'Written.' });
    let prompt = nextNotice(session, 'permission_prompt');
    let done = log.next('turn_complete');
    session.send('write the file');
    let p = await prompt;
    expect(p.toolName).toBe('edit');
    session.decide(p.requestId, 'allow');
    expect(await done).toMatchObject({ status: 'completed' });
    expect(existsSync(target)).toBe(true);
    expect(log.of('tool_result')).toEqual([expect.objectContaining({ callId: p.callId, status: 'completed' })]);
    const snapshot = session.snapshot();
    expect(snapshot.completed[p.requestId]).toMatchObject({ status: 'approved' });

    // The abort at a pending permission prompt, on the same session.
    mock.enqueue({ kind: 'function_call', name: 'run_shell_command', args: { command: 'touch aborted.txt', description: 'never' } });
    prompt = nextNotice(session, 'permission_prompt');
    done = log.next('turn_complete');
    session.send('create it');
    p = await prompt;
    const t = performance.now();
    session.abort();
    expect(await done).toMatchObject({ status: 'cancelled' });
    const abortMs = Math.round(performance.now() - t);
    expect(session.snapshot().completed[p.requestId]).toMatchObject({ status: 'cancelled' });
    expect(existsSync(join(h.work, 'aborted.txt'))).toBe(false);
    mock.enqueue({ kind: 'text', text: 'Back.' });
    done = log.next('turn_complete');
    session.send('hello again');
    expect(await done).toMatchObject({ status: 'completed' });
    expect(log.of('error')).toEqual([]);
    await session.stop();
    session = undefined;
    expect(await waitNoProcessesUnder(root)).toEqual([]);
    console.log(`[acp-gemini] session abort at a permission prompt: ${abortMs} ms`);
  });

  // gemini 0.61.0 mostly refuses (-32603, reference acp.md §4), but not always: when its chat file
  // is already where it looks ("No previous sessions found for this project" otherwise), the load
  // succeeds (seen in about one of five runs), replaying whatever that file holds so far. Both
  // outcomes are checked for what they must be.
  it('session/load: gemini 0.61.0 either refuses (-32603: error + a new session) or loads (same id, history kept apart)', async () => {
    const h = hermeticGemini({ port: mock.port, root });
    const token = await bench.rememberPineapple({ preset: 'gemini', env: h.env }, h.work, 'Remember pineapple.');

    const { engine: b, log: second } = await bench.startEngine({ preset: 'gemini', env: h.env }, { gen: 2, workDir: h.work, resumeToken: token });
    const identified = second.of('session_identified');
    expect(identified).toHaveLength(1);
    if (second.of('error').length > 0) {
      expect(second.of('error')).toEqual([expect.objectContaining({ kind: 'protocol', retryable: true })]);
      expect(second.of('error')[0]!.message).toContain('-32603');
      expect(identified[0]!.resumeToken).not.toBe(token);
    } else {
      expect(identified[0]!.resumeToken).toBe(token);
      // What gemini replays is its saved chat, which may lag behind (seen: only its session
      // context, not yet the pineapple turn); whatever it is, it stays out of the live stream.
      expect(b.history.length).toBeGreaterThan(0);
      expect(second.of('message')).toEqual([]); // replayed history is not a live turn
    }
    await b.stop();
    expect(await waitNoProcessesUnder(root)).toEqual([]);
  });
});
