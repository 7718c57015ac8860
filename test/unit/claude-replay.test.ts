/**
 * Recorded real Claude Code traffic (test/fixtures/claude/engine/, written by the real-CLI engine
 * tests) replayed through the ClaudeEngine without the binary: the engine must write exactly the
 * recorded lines (the replaying stand-in checks every one) and emit exactly the recorded
 * AgentEvents. A doctored recording adds the malformed lines real agents sometimes print.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PermissionDecision } from '../../src/events/engine-input.js';
import { ClaudeEngine } from '../../src/engines/claude/index.js';
import type { EngineContext } from '../../src/engines/core/engine.js';
import type { AgentEvent, AgentEventBody } from '../../src/events/agent-event.js';
import { claudeFixtureVars } from '../support/claude-fixture.js';
import { hostActions, readFixture, recordedEvents, replayLauncher, writeFixture, type FixtureRecord, type FixtureVars, type HostAction } from '../support/engine-fixture.js';
import { realEngineContext } from '../support/engine-context.js';

const fixtureDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'claude', 'engine');
const fixtures = readdirSync(fixtureDir).filter((f) => f.endsWith('.jsonl')).sort();

const context: EngineContext = realEngineContext();

interface ClaudeHostLine {
  type?: string;
  message?: { content?: Array<{ text?: string }> };
  request?: { subtype?: string; mode?: string };
  response?: { subtype?: string; request_id?: string; response?: Record<string, unknown> };
}

/** The PermissionDecision that made the engine write this `can_use_tool` answer. */
function decisionOf(answer: Record<string, unknown>): PermissionDecision {
  if (answer['behavior'] === 'allow') {
    return {
      behavior: 'allow',
      ...(answer['updatedInput'] !== undefined && { updatedInput: answer['updatedInput'] }),
      ...(Array.isArray(answer['updatedPermissions']) && { updatedPermissions: answer['updatedPermissions'] }),
    };
  }
  return { behavior: 'deny', ...(typeof answer['message'] === 'string' && { message: answer['message'] }), interrupt: answer['interrupt'] === true };
}

/** Performs the engine call that wrote `action` in the recording; false = the engine writes it by itself. */
async function perform(engine: ClaudeEngine, action: HostAction, index: number): Promise<boolean> {
  const msg = action.msg as ClaudeHostLine;
  if (msg.type === 'user') {
    await engine.send({ localId: `replay-${index}`, text: msg.message?.content?.[0]?.text ?? '' });
    return true;
  }
  if (msg.type === 'control_request' && msg.request?.subtype === 'interrupt') {
    await engine.abort();
    return true;
  }
  if (msg.type === 'control_request' && msg.request?.subtype === 'set_permission_mode') {
    await engine.setPermissionMode(msg.request.mode as never);
    return true;
  }
  if (msg.type === 'control_response' && msg.response?.subtype === 'success' && msg.response.response && 'behavior' in msg.response.response) {
    await engine.answerPermission(msg.response.request_id!, decisionOf(msg.response.response));
    return true;
  }
  // initialize, and error answers to unsupported CLI requests: the engine's own doing.
  return false;
}

const body = (e: AgentEvent): AgentEventBody => {
  const { gen: _g, at: _a, ...rest } = e;
  return rest as AgentEventBody;
};

/** Replays `records` through a ClaudeEngine, driving it as the session did; returns what it emitted. */
async function replay(root: string, fixturePath: string, vars: FixtureVars, records: readonly FixtureRecord[]) {
  const { launcher } = replayLauncher(fixturePath, vars);
  const engine = new ClaudeEngine(context, { launcher, env: { CLAUDE_CONFIG_DIR: join(root, 'config') }, shutdown: { stdinGraceMs: 2_000, termGraceMs: 500, killWaitMs: 500 } });
  const expected = recordedEvents(records);
  const actions = hostActions(records);
  const got: AgentEventBody[] = [];
  let next = 0;
  let failure: unknown;
  let finished!: () => void;
  const done = new Promise<void>((r) => (finished = r));
  let busy = false;
  const pump = async () => {
    if (busy) return;
    busy = true;
    try {
      while (next < actions.length && actions[next]!.eventsBefore <= got.length) await perform(engine, actions[next]!, next++);
      // Everything the host did is done and only the exit is left: stop, as the session did.
      if (next === actions.length && got.length === expected.length - 1 && expected.at(-1)?.type === 'exited') void engine.stop();
    } catch (error) {
      failure ??= error;
      void engine.stop();
    } finally {
      busy = false;
    }
  };
  engine.onEvent((event) => {
    if (event.type === 'activity') return; // time-dependent, not recorded
    got.push(body(event));
    if (event.type === 'exited') finished();
    else void pump();
  });
  await engine.start({ gen: 1, mode: 'remote', workDir: join(root, 'work'), options: {} });
  await pump();
  const timeout = setTimeout(() => void engine.stop(), 20_000);
  await done;
  clearTimeout(timeout);
  if (failure) throw failure;
  return { engine, got, expected };
}

describe('ClaudeEngine replaying recorded real-CLI traffic', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ase-claude-replay-'));
    mkdirSync(join(root, 'work'));
    mkdirSync(join(root, 'config'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('has recordings to replay', () => {
    expect(fixtures).toEqual(expect.arrayContaining(['text-then-tool-allowed.jsonl', 'tool-denied.jsonl', 'abort-mid-stream.jsonl', 'abort-at-permission-prompt.jsonl', 'api-error-529.jsonl']));
  });

  for (const name of fixtures) {
    it(`${name}: writes the recorded lines and emits the recorded events`, async () => {
      const vars = claudeFixtureVars(root);
      const path = join(fixtureDir, name);
      const { engine, got, expected } = await replay(root, path, vars, readFixture(path, vars));
      // An auth error names the credential variables looked for (added after these were recorded;
      // which of them were set depends on the host): checked apart, then compared without it.
      const hint = / \(Claude Code looks for credentials in ANTHROPIC_API_KEY, .* or a \/login under CLAUDE_CONFIG_DIR \(default ~\/\.claude\); (its environment had [A-Z_, ]+|none of them was in its environment)\)$/;
      for (const e of got) if (e.type === 'error' && e.kind === 'auth') expect(e.message).toMatch(hint);
      expect(got.map((e) => (e.type === 'error' && e.kind === 'auth' ? { ...e, message: e.message.replace(hint, '') } : e))).toEqual(expected);
      expect(engine.invalidEvents).toEqual([]);
      expect(engine.listenerErrors).toEqual([]);
    });
  }

  it('a non-JSON line and an unknown message type in the stream are skipped; the turn is unaffected', async () => {
    const vars = claudeFixtureVars(root);
    const records = readFixture(join(fixtureDir, 'text-then-tool-allowed.jsonl'), vars);
    // Right after the first line the CLI printed for the first turn.
    const firstUser = records.findIndex((r) => r.dir === 'to_agent' && (r as { msg: ClaudeHostLine }).msg.type === 'user');
    const at = records.findIndex((r, i) => i > firstUser && r.dir === 'from_agent') + 1;
    const t = records[at]!.t;
    const doctored: FixtureRecord[] = [
      ...records.slice(0, at),
      { t, dir: 'from_agent', raw: '{"type":"assistant","message":' }, // a torn line
      { t, dir: 'from_agent', raw: 'Warning: something the CLI printed to stdout' },
      { t, dir: 'from_agent', msg: { type: 'brand_new_message_type', payload: { x: 1 } } },
      { t, dir: 'from_agent', msg: { type: 'keep_alive' } },
      ...records.slice(at),
    ];
    const path = join(root, 'doctored.jsonl');
    writeFixture(path, doctored);
    const { engine, got, expected } = await replay(root, path, vars, doctored);
    expect(got).toEqual(expected);
    expect(engine.skipped.map((s) => s.reason)).toEqual([
      expect.stringContaining('not JSON'),
      expect.stringContaining('not JSON'),
      expect.stringContaining('brand_new_message_type'),
    ]);
  });

  it('a host line that differs from the recording fails the replay (the check can fail)', async () => {
    const vars = claudeFixtureVars(root);
    const records = readFixture(join(fixtureDir, 'text-then-tool-allowed.jsonl'), vars);
    // Record a different prompt than the one the driver sends.
    const doctored = records.map((r) =>
      r.dir === 'to_agent' && (r as { msg: ClaudeHostLine }).msg.type === 'user'
        ? { ...r, msg: { ...(r as { msg: object }).msg, message: { role: 'user', content: [{ type: 'text', text: 'something else' }] } } }
        : r,
    );
    const path = join(root, 'mismatch.jsonl');
    writeFixture(path, doctored);
    const stand = replayLauncher(path, vars);
    const engine = new ClaudeEngine(context, { launcher: stand.launcher, shutdown: { stdinGraceMs: 500, termGraceMs: 500, killWaitMs: 500 } });
    const events: AgentEvent[] = [];
    const exited = new Promise<void>((r) => engine.onEvent((e) => (events.push(e), e.type === 'exited' && r())));
    await engine.start({ gen: 1, mode: 'remote', workDir: join(root, 'work'), options: {} });
    await new Promise<void>((r) => engine.onEvent((e) => e.type === 'ready' && r()));
    await engine.send({ localId: 'x', text: 'the prompt as sent' });
    await exited;
    const error = events.find((e) => e.type === 'error');
    expect(error).toMatchObject({ kind: 'fatal' });
    expect((error as { message: string }).message).toContain('differs from the recording');
    // The typed error names the host line and both versions of it.
    expect(stand.mismatch()).toMatchObject({ code: 'REPLAY_MISMATCH', details: { gen: 1, line: 2 } });
    expect(stand.mismatch()?.message).toContain('the prompt as sent');
  });
});
