/**
 * The acp engine with the REAL pinned claude-code-acp 0.16.2 (Claude Agent SDK 0.2.44) against
 * our Anthropic Messages mock on 127.0.0.1. This agent routes its tools through the client: Bash
 * runs in OUR terminals (terminal/*), Read/Write go through OUR confined fs (fs/*).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TrafficRecorder } from '../support/acp-traffic.js';
import type { Session } from '../../src/index.js';
import { startAnthropicMock, type AnthropicMock } from '../mocks/anthropic-mock.js';
import { AcpAgentBench, acpSession, sessionReady } from '../support/acp-agent-bench.js';
import { hermeticClaudeCodeAcp, isMainClaudeRequest } from '../support/acp-hermetic.js';
import { runScenarioSuite, type AgentSetup } from '../support/acp-scenarios.js';
import { nextNotice } from '../support/acp-session.js';
import { waitNoProcessesUnder } from '../support/processes.js';

const BASH = 'mcp__acp__Bash';

describe('acp engine with claude-code-acp', () => {
  let bench: AcpAgentBench<AnthropicMock>;
  let root: string;
  let mock: AnthropicMock;
  let session: Session | undefined;

  beforeEach(async () => {
    bench = await AcpAgentBench.open('ase-acp-claude-', () => startAnthropicMock({ consumesQueue: isMainClaudeRequest }));
    ({ root, mock } = bench);
  });

  afterEach(async () => {
    await session?.stop().catch(() => undefined);
    session = undefined;
    await bench.close();
  });

  /** fs and terminals enabled: claude-code-acp then runs Bash/Read/Write through us. */
  function options(env: Record<string, string>) {
    return { env, fs: { enabled: true }, terminal: { enabled: true, env: { PATH: env['PATH']!, HOME: env['HOME']!, LANG: 'C.UTF-8', ...(env['ASE_TEST_RUN'] ? { ASE_TEST_RUN: env['ASE_TEST_RUN'] } : {}) } } };
  }

  function setup(): AgentSetup {
    const h = hermeticClaudeCodeAcp({ port: mock.port, root });
    return {
      work: h.work,
      options: { preset: 'claude-code-acp', ...options(h.env) },
      model: {
        text: (text) => mock.enqueue({ kind: 'text', text }),
        thinking: (thinking, text) => mock.enqueue({ kind: 'thinking', thinking, text }),
        shell: (command) => mock.enqueue({ kind: 'tool_use', name: BASH, input: { command, description: 'run it', timeout: 10_000 } }),
        slow: (text) => mock.enqueue({ kind: 'text', text, chunks: 40, delayMs: 100 }),
      },
      close: async () => undefined,
    };
  }

  it('text, thinking, tool allowed/rejected, cancel mid-stream and at a permission (fixture recorded)', async () => {
    const timings = await runScenarioSuite('claude-code-acp', root, setup(), { thinking: true });
    console.log(`[acp-claude-code] timings ${JSON.stringify(timings)}`);
  });

  // One agent for both stories (a start of claude-code-acp is ~5 s): the session's turns, then
  // session/load of that same session on a second agent.
  it('a SessionActor in remote mode completes permissioned Bash (our terminal) and Write (our fs) turns through decide(); session/load replays that history into engine.history (not as a live turn), then the session goes on', async () => {
    const h = hermeticClaudeCodeAcp({ port: mock.port, root });
    const recorder = new TrafficRecorder();
    const started = await acpSession({ preset: 'claude-code-acp', onTraffic: recorder.tap }, h.work, options(h.env));
    session = started.session;
    const { log } = started;
    await sessionReady(log);

    // A plain turn first: the word the loaded session must still know.
    mock.enqueue({ kind: 'text', text: 'I will remember pineapple.' });
    let done = log.next('turn_complete');
    session.send('remember the word pineapple');
    expect(await done).toMatchObject({ status: 'completed' });

    // Bash through terminal/create → wait_for_exit → output → release
    mock.enqueue({ kind: 'tool_use', name: BASH, input: { command: 'echo made-by-terminal > bash.txt && echo ok', description: 'write a file', timeout: 10_000 } }, { kind: 'text', text: 'Ran it.' });
    let prompt = nextNotice(session, 'permission_prompt');
    done = log.next('turn_complete');
    session.send('run the command');
    let p = await prompt;
    expect(p.toolName).toBe(BASH);
    expect(p.input).toMatchObject({ command: 'echo made-by-terminal > bash.txt && echo ok' });
    session.decide(p.requestId, 'allow');
    expect(await done).toMatchObject({ status: 'completed' });
    expect(readFileSync(join(h.work, 'bash.txt'), 'utf8')).toBe('made-by-terminal\n');
    const methods = recorder.entries.flatMap((e) => (e.dir === 'agent->client' && (e.msg as { method?: string })?.method ? [(e.msg as { method: string }).method] : []));
    expect(methods).toEqual(expect.arrayContaining(['terminal/create', 'terminal/wait_for_exit', 'terminal/output', 'terminal/release']));
    expect(log.of('tool_result').at(-1)).toMatchObject({ callId: p.callId, status: 'completed' });

    // Write through fs/write_text_file
    const target = join(h.work, 'written.txt');
    mock.enqueue({ kind: 'tool_use', name: 'mcp__acp__Write', input: { file_path: target, content: 'written through the client\n' } }, { kind: 'text', text: 'Wrote it.' });
    prompt = nextNotice(session, 'permission_prompt');
    done = log.next('turn_complete');
    session.send('write the file');
    p = await prompt;
    session.decide(p.requestId, 'allow');
    expect(await done).toMatchObject({ status: 'completed' });
    expect(readFileSync(target, 'utf8')).toBe('written through the client\n');
    expect(recorder.entries.some((e) => e.dir === 'agent->client' && (e.msg as { method?: string })?.method === 'fs/write_text_file')).toBe(true);

    // Read inside the work dir: no prompt, content through fs/read_text_file
    writeFileSync(join(h.work, 'README.md'), 'read me through the client\n');
    mock.enqueue({ kind: 'tool_use', name: 'mcp__acp__Read', input: { file_path: join(h.work, 'README.md') } }, { kind: 'text', text: 'Read it.' });
    done = log.next('turn_complete');
    session.send('read the readme');
    expect(await done).toMatchObject({ status: 'completed' });
    const reads = recorder.entries.filter((e) => e.dir === 'agent->client' && (e.msg as { method?: string })?.method === 'fs/read_text_file');
    expect(reads.length).toBeGreaterThan(0);
    const toolResults = mock.requests.filter(isMainClaudeRequest).at(-1)?.body?.messages?.at(-1)?.content;
    expect(JSON.stringify(toolResults)).toContain('read me through the client');

    const token = log.of('session_identified')[0]!.resumeToken;
    await session.stop();
    session = undefined;
    expect(await waitNoProcessesUnder(root)).toEqual([]);

    // session/load of that session on a new agent.
    const t = performance.now();
    const { engine: b, log: second } = await bench.startEngine({ preset: 'claude-code-acp', env: h.env }, { gen: 2, workDir: h.work, resumeToken: token });
    const loadMs = Math.round(performance.now() - t);
    expect(second.of('session_identified')).toEqual([expect.objectContaining({ resumeToken: token })]);
    expect(second.of('error')).toEqual([]);
    // Nothing of the replay reached the live event stream…
    // (The agent's state it announces on load — commands, mode, context — is live state, not replay.)
    expect(second.events.map((e) => e.type).filter((type) => !['available_commands', 'agent_mode', 'context_usage'].includes(type))).toEqual(['session_identified', 'ready']);
    // …it is in history: the user's prompt and the assistant's answer.
    const history = JSON.stringify(b.history);
    expect(history).toContain('remember the word pineapple');
    expect(history).toContain('I will remember pineapple.');
    mock.enqueue({ kind: 'text', text: 'Pineapple.' });
    done = second.next('turn_complete');
    await b.send({ localId: 'b', text: 'what was the word?' });
    expect(await done).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(mock.requests.filter(isMainClaudeRequest).at(-1)?.body?.messages)).toContain('pineapple');
    await b.stop();
    expect(await waitNoProcessesUnder(root)).toEqual([]);
    console.log(`[acp-claude-code] load: spawn→ready ${loadMs} ms, ${b.history.length} history events`);
  });
});
