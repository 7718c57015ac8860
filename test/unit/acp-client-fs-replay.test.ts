/**
 * Replays the fs/* and terminal/* requests that the real claude-code-acp 0.16.2 sent in
 * test/real-cli/acp-security.test.ts (fixture test/fixtures/acp-client/claude-code-acp-security.jsonl,
 * paths recorded as $ROOT) through ConfinedFs and TerminalManager on a fresh copy of the recorded
 * tree, without the agent, and requires the same answers: the same -32602 errors (code, message,
 * data) for every escape attempt and the same results for the allowed operations.
 *
 * Requests are issued in wire order. A request whose recorded answer came before the agent's
 * next request is awaited before going on; others (a wait_for_exit answered only by a later
 * release) stay pending, as on the wire. Terminal requests keep their recorded spacing so a
 * command has the time it had to write output. The end of the recording is the session end
 * (closeAll), which answers what is still pending.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RequestError } from '@agentclientprotocol/sdk';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfinedFs } from '../../src/engines/acp/client-fs.js';
import { TerminalManager } from '../../src/engines/acp/client-terminal.js';
import { toRequestError } from '../../src/engines/acp/client.js';
import { loadAcpSdk } from '../../src/engines/acp/sdk.js';
import { buildEnv } from '../../src/engines/transport/env.js';
import { testRunEnv } from '../support/orphan-check.js';
import { waitNoProcessesUnder } from '../support/processes.js';

const fixture = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'acp-client', 'claude-code-acp-security.jsonl');

interface Tree {
  dirs: string[];
  files: Record<string, string>;
  symlinks: Record<string, string>;
}
interface Entry {
  t: number;
  dir: 'agent->client' | 'client->agent';
  msg: { id?: number | string; method?: string; params?: any; result?: unknown; error?: { code: number; message: string; data?: unknown } };
}
type Outcome = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

function load(): { tree: Tree; entries: Entry[] } {
  const [head, ...rest] = readFileSync(fixture, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
  return { tree: (head as { tree: Tree }).tree, entries: rest as Entry[] };
}

let root: string | undefined;
let terminals: TerminalManager | undefined;
const mark = randomUUID();

afterEach(async () => {
  await terminals?.closeAll();
  expect(await waitNoProcessesUnder(mark)).toEqual([]);
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('replay of the real claude-code-acp fs/terminal traffic', () => {
  beforeAll(() => loadAcpSdk()); // an engine's start() loads it (sdk.ts); these tests call the client's converter alone
  it('gives the recorded answer to every recorded request', async () => {
    const { tree, entries } = load();
    root = realpathSync(mkdtempSync(join(tmpdir(), 'acp-replay-')));
    const sub = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('$ROOT', root!)) as T;
    for (const dir of ['work', ...tree.dirs]) mkdirSync(join(root, dir), { recursive: true });
    for (const [path, content] of Object.entries(tree.files)) writeFileSync(join(root, path), content);
    for (const [path, target] of Object.entries(tree.symlinks)) symlinkSync(sub(target), join(root, path));
    const workDir = join(root, 'work');
    const fs = new ConfinedFs({ workDir });
    terminals = new TerminalManager({ workDir, env: { ...buildEnv(), ...testRunEnv(), ACP_REPLAY_MARK: mark } });
    const t = terminals;
    const handlers: Record<string, (params: any) => Promise<unknown>> = {
      'fs/read_text_file': (p) => fs.readTextFile(p),
      'fs/write_text_file': (p) => fs.writeTextFile(p),
      'terminal/create': (p) => t.create(p),
      'terminal/output': (p) => t.output(p),
      'terminal/wait_for_exit': (p) => t.waitForExit(p),
      'terminal/kill': (p) => t.kill(p),
      'terminal/release': (p) => t.release(p),
    };
    const call = (method: string, params: unknown): Promise<Outcome> =>
      handlers[method]!(params).then(
        (result) => ({ result }),
        (thrown: unknown) => {
          // What the client connection answers the agent with (client.ts converts at the SDK boundary).
          const error = toRequestError(thrown);
          if (!(error instanceof RequestError)) throw error;
          return { error: { code: error.code, message: error.message, data: error.data } };
        },
      );

    const recorded = new Map<unknown, Outcome>();
    const answeredAt = new Map<unknown, number>();
    entries.forEach((e, index) => {
      if (e.dir !== 'client->agent') return;
      recorded.set(e.msg.id, e.msg.error ? { error: e.msg.error } : { result: e.msg.result });
      answeredAt.set(e.msg.id, index);
    });
    const requests = entries.map((e, index) => ({ e, index })).filter(({ e }) => e.dir === 'agent->client');
    expect(requests.length).toBeGreaterThan(20);

    const replayed = new Map<unknown, Promise<Outcome>>();
    let previousTerminalT: number | undefined;
    for (const [i, { e, index }] of requests.entries()) {
      const method = e.msg.method!;
      if (method.startsWith('terminal/') && previousTerminalT !== undefined) {
        await new Promise((r) => setTimeout(r, Math.min(2000, Math.max(0, e.t - previousTerminalT!))));
      }
      if (method.startsWith('terminal/')) previousTerminalT = e.t;
      const outcome = call(method, sub(e.msg.params));
      replayed.set(e.msg.id, outcome);
      const nextRequestIndex = requests[i + 1]?.index;
      const answered = answeredAt.get(e.msg.id);
      if (answered !== undefined && nextRequestIndex !== undefined && answered < nextRequestIndex) await outcome;
    }
    await t.closeAll(); // the recording ends with the session

    let escapes = 0;
    for (const [id, outcome] of replayed) {
      const expected = recorded.get(id);
      if (expected === undefined) continue; // never answered on the wire (agent already gone)
      const request = requests.find(({ e }) => e.msg.id === id)!.e.msg;
      expect(await outcome, `${request.method} ${JSON.stringify(request.params)}`).toEqual(sub(expected));
      if ('error' in expected && expected.error.code === -32602) escapes++;
    }
    expect(escapes).toBeGreaterThanOrEqual(11); // 5 reads + 6 writes outside workDir
    // The replayed escapes changed nothing outside work/.
    for (const [path, content] of Object.entries(tree.files)) expect(readFileSync(join(root, path), 'utf8')).toBe(content);
    expect(readFileSync(join(workDir, 'made-by-terminal.txt'), 'utf8')).toBe('from-terminal\n');
  });
});
