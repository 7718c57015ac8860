/**
 * Binary-free replay of the recorded real-agent runs (test/fixtures/acp/<agent>.jsonl, written by
 * the real-cli ACP suites): a fake agent process plays the agent's side of the recording message
 * by message and the host's recorded actions (send, abort, allow/reject, stop) are repeated at the
 * same points. Every message the engine sends must equal the recorded one, and the engine
 * must emit exactly the recorded events, in order. Terminals and fs requests are served for real
 * (our ConfinedFs / TerminalManager) in a fresh work dir.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AcpEngine, type AcpEngineOptions } from '../../src/engines/acp/index.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { FakeAgentProcess, fakeSpawner } from '../support/acp-fake-agent.js';
import { EventLog } from '../support/acp-hermetic.js';
import { ACP_FIXTURE_DIR, realContext, type FixtureLine } from '../support/acp-scenarios.js';

function readFixture(agent: string, vars: Record<string, string>): FixtureLine[] {
  let text = readFileSync(join(ACP_FIXTURE_DIR, `${agent}.jsonl`), 'utf8');
  for (const [name, value] of Object.entries(vars)) text = text.split(`{{${name}}}`).join(value);
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as FixtureLine);
}

const body = (e: AgentEvent) => {
  const { gen: _g, at: _a, ...rest } = e;
  return rest;
};

/** Waits until `log` holds at least `count` events other than `activity` (timing-dependent, not recorded deterministically). */
async function eventsReached(log: EventLog, count: number, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (log.events.filter((e) => e.type !== 'activity').length < count) {
    if (Date.now() > deadline) throw new Error(`replay: expected ${count} events, got ${log.events.map((e) => e.type).join(',')}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function replay(agent: string, options: AcpEngineOptions): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), `ase-acp-replay-${agent}-`));
  roots.push(root);
  const work = join(root, 'work');
  mkdirSync(work, { recursive: true });
  const lines = readFixture(agent, { WORK: work, ROOT: root });
  const fake = new FakeAgentProcess();
  const exit = lines.find((l) => 'exit' in l && l.exit);
  if (exit && 'exit' in exit && exit.exit) fake.stopExit = { code: exit.exit.code, signal: exit.exit.signal as NodeJS.Signals | null };
  const log = new EventLog();
  // No binary: `command` is never executed (the spawner hands out the fake); HOME stays in the temp root.
  const engine = new AcpEngine(realContext(), { ...options, command: `replayed-${agent}`, home: join(root, 'home'), spawn: fakeSpawner(fake), permissionGraceMs: 60_000 });
  engine.onEvent(log.push);
  await engine.start({ gen: 1, mode: 'remote', workDir: work, options: {} });

  let eventsBefore = 0;
  for (const line of lines) {
    if (line.dir === 'engine->host') {
      if (line.event.type !== 'activity') eventsBefore++;
      continue;
    }
    if (line.dir === 'host->engine') {
      // Act where the host acted: after the engine reported what it had reported by then.
      await eventsReached(log, eventsBefore);
      const action = line.action;
      if (action.type === 'send') void engine.send({ localId: action.localId, text: action.text });
      else if (action.type === 'abort') void engine.abort();
      else if (action.type === 'answer') void engine.answerPermission(action.requestId, action.decision);
      else await engine.stop();
      continue;
    }
    if (!line.msg) continue;
    if (line.dir === 'agent->client') {
      fake.send(line.msg);
      continue;
    }
    const actual = await fake.next();
    expect(actual, `client message #${fake.received.length}`).toEqual(line.msg);
  }
  const expected = lines.flatMap((l) => (l.dir === 'engine->host' && l.event.type !== 'activity' ? [l.event] : []));
  expect(log.events.filter((e) => e.type !== 'activity').map(body)).toEqual(expected);
  expect(fake.received).toHaveLength(lines.filter((l) => l.dir === 'client->agent' && 'msg' in l && l.msg).length);
}

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('acp engine replays the recorded real-agent runs (no binary)', () => {
  it('gemini-cli 0.61.0', async () => {
    await replay('gemini', { fs: { enabled: true } });
  });

  it('claude-code-acp 0.16.2 (terminals served for real by TerminalManager)', async () => {
    await replay('claude-code-acp', { fs: { enabled: true }, terminal: { enabled: true } });
  });

  it('codex-acp 0.16.0', async () => {
    await replay('codex-acp', {});
  });

  it('opencode 1.18.33', async () => {
    await replay('opencode', {});
  });

  it('Qwen Code 0.24.4', async () => {
    await replay('qwen', {});
  });

  it('GitHub Copilot CLI 1.0.102', async () => {
    await replay('copilot', {});
  });
});
