import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { it } from 'vitest';
import { startOpenAIResponsesMock, type MockReply } from '../mocks/openai-responses-mock.js';
import { hermeticCodex } from '../support/codex-hermetic.js';
import type { RecordedRequest } from '../mocks/loopback-server.js';

it('scratch', async () => {
  const root = mkdtempSync(join(tmpdir(), 'ase-scratch-'));
  const mock = await startOpenAIResponsesMock();
  const h = hermeticCodex({ root, baseUrl: mock.providerBaseUrl, features: { multi_agent_v2: true } });
  const target = join(root, 'sub-made.txt');
  const script = (q: RecordedRequest): MockReply => {
    const input = JSON.stringify(q.body?.input ?? []);
    const outputs = (q.body?.input ?? []).filter((i: any) => i?.type === 'function_call_output').length;
    if (!input.includes('PARENT-PROMPT')) return outputs === 0 ? { kind: 'tool_call', name: 'exec_command', arguments: { cmd: `touch ${target}` } } : { kind: 'text', text: 'Sub done.' };
    if (outputs === 0) return { kind: 'tool_call', name: 'spawn_agent', namespace: 'collaboration', arguments: { message: 'make the file', task_name: 'maker', fork_turns: 'none' } };
    if (outputs === 1) return { kind: 'tool_call', name: 'wait_agent', namespace: 'collaboration', arguments: { timeout_ms: 10000 } };
    return { kind: 'text', text: 'Parent done.' };
  };
  for (let i = 0; i < 10; i++) mock.enqueue(script);
  const r = await execa(h.bin, ['exec', '--json', '--skip-git-repo-check', '-C', h.workDir, 'PARENT-PROMPT delegate'], { env: h.env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 60000 });
  writeFileSync('/tmp/i15/scratch.json', JSON.stringify({ stdout: r.stdout, stderr: r.stderr, code: r.exitCode, requests: mock.responsesRequests().map((q) => ({ headers: q.headers, body: q.body })) }, null, 1));
  await mock.close();
});
