/**
 * Bounded input (issue 12, item 5), the probe table's bad-input cases, against the claude engine
 * and a stand-in CLI (support/claude-stand-in.mjs) that misbehaves on purpose:
 *
 * - 30 lines of 10 MiB that are not JSON: the skipped-input list keeps a prefix and the length of
 *   each, so the host holds about nothing after GC (the probe measured 302 MiB).
 * - `system/init` whose session id carries invalid UTF-8 (decoded to U+FFFD): not adopted as the
 *   resume token; an `error {kind: 'protocol'}` says why.
 * - a `result` before any `system/init` (what `--resume` of an unknown id prints): its error is
 *   reported, but it closes no turn and adds no usage.
 * - `send()` of 50 MiB: refused with INVALID_INPUT by the documented, configurable `maxMessageBytes`,
 *   nothing changed and nothing written.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { ClaudeEngine } from '../../src/engines/claude/index.js';
import { MAX_SKIPPED_RAW_BYTES } from '../../src/engines/core/skipped-inputs.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { claudeEngine, createSession, DEFAULT_MAX_MESSAGE_BYTES, MemoryJournal, MemoryStore, type SessionNotice } from '../../src/index.js';
import { realEngineContext } from '../support/engine-context.js';
import { testRunEnv } from '../support/orphan-check.js';

const STAND_IN = fileURLToPath(new URL('../support/claude-stand-in.mjs', import.meta.url));
const MiB = 1024 * 1024;
const shutdown = { stdinGraceMs: 500, termGraceMs: 500, killWaitMs: 500 };

const root = mkdtempSync(join(tmpdir(), 'ase-bad-input-'));
const bin = join(root, 'claude');
writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${STAND_IN}" "$@"\n`);
chmodSync(bin, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function engine(standIn: string) {
  const e = new ClaudeEngine({ ...realEngineContext(), bin }, { env: { ...testRunEnv(), STANDIN: standIn }, shutdown });
  const events: AgentEvent[] = [];
  e.onEvent((ev) => events.push(ev));
  return { e, events };
}

async function waitFor(check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `global.gc`, available without restarting the worker with --expose-gc. */
function forceGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** V8 heap plus memory outside it that JS objects hold: a decoded line over ~1 MiB is an external string. */
function heldBytes(gc: () => void): number {
  gc();
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

describe('bad agent output is bounded and never adopted', () => {
  it('30 non-JSON lines of 10 MiB: each is kept as a 2 KiB prefix plus its length; the host holds < 16 MiB more after GC', async () => {
    const gc = forceGc();
    const before = heldBytes(gc);
    const { e, events } = engine(`garbage=30:${10 * MiB}`);
    await e.start({ gen: 1, mode: 'remote', workDir: root, options: {} });
    await waitFor(() => e.skipped.length >= 30 && events.some((ev) => ev.type === 'ready'));
    const held = heldBytes(gc) - before;
    // For the record (docs/benchmarks.md): what the engine holds after 300 MiB of garbage.
    console.log(`held after 30 x 10 MiB non-JSON lines, after GC: ${(held / MiB).toFixed(1)} MiB`);
    expect(held).toBeLessThan(16 * MiB);
    expect(e.skipped).toHaveLength(30);
    for (const s of e.skipped) {
      expect(s).toMatchObject({ truncated: true, bytes: 10 * MiB - 1 });
      expect(s.reason).toMatch(/^not JSON/);
      expect(Buffer.byteLength(s.raw as string)).toBe(MAX_SKIPPED_RAW_BYTES);
    }
    await e.stop();
  });

  it('a system/init whose session id is invalid UTF-8 is not adopted; an error says why', async () => {
    const { e, events } = engine('bad-init');
    await e.start({ gen: 1, mode: 'remote', workDir: root, options: {} });
    await waitFor(() => events.some((ev) => ev.type === 'ready'));
    await e.send({ localId: 'l1', text: 'hi' });
    await waitFor(() => events.some((ev) => ev.type === 'turn_complete'));
    expect(events.filter((ev) => ev.type === 'session_identified')).toEqual([]);
    const error = events.find((ev) => ev.type === 'error');
    expect(error).toMatchObject({ kind: 'protocol', retryable: false, message: expect.stringContaining('U+FFFD') });
    expect(events.find((ev) => ev.type === 'turn_complete')).toMatchObject({ status: 'completed' });
    await e.stop();
  });

  it('…and through a session: no resume token is stored, the turn completes', async () => {
    const store = new MemoryStore();
    const session = await createSession({
      agent: 'claude',
      workDir: root,
      dataDir: join(root, 'data-init'),
      store,
      journal: new MemoryJournal(),
      bin,
      engines: [claudeEngine({ shutdown })],
      engineOptions: { env: { ...testRunEnv(), STANDIN: 'bad-init' } },
    });
    const notices: SessionNotice[] = [];
    session.on('*', (n: SessionNotice) => notices.push(n));
    session.send('hi');
    await waitFor(() => notices.some((n) => n.type === 'transcript' && n.entry.type === 'turn_complete'));
    expect(session.snapshot().resumeToken).toBeUndefined();
    expect(session.snapshot().lastError).toMatchObject({ kind: 'protocol' });
    const stopped = await session.stop();
    expect(stopped.resumeToken).toBeUndefined();
    expect((await store.load(session.id))?.state.resumeToken).toBeUndefined();
  });

  it('a result before any system/init reports its error but closes no turn and adds no usage', async () => {
    const { e, events } = engine('result-first');
    await e.start({ gen: 1, mode: 'remote', workDir: root, options: {} });
    await waitFor(() => events.some((ev) => ev.type === 'ready'));
    expect(events.filter((ev) => ev.type === 'turn_complete')).toEqual([]);
    expect(events.find((ev) => ev.type === 'error')).toMatchObject({ message: expect.stringContaining('No conversation found') });
    expect(e.skipped.map((s) => s.reason)).toContain('result before system/init with no turn running: ends no turn');
    // The next real turn is counted alone (its result's usage, not the stray one's 1000 tokens).
    await e.send({ localId: 'l1', text: 'hi' });
    await waitFor(() => events.some((ev) => ev.type === 'turn_complete'));
    expect(events.filter((ev) => ev.type === 'turn_complete')).toEqual([expect.objectContaining({ status: 'completed', usage: expect.objectContaining({ inputTokens: 1, outputTokens: 1 }) })]);
    await e.stop();
  });
});

describe('send() size limit (maxMessageBytes)', () => {
  /** Works whether send() throws or returns a rejected promise. */
  const attempt = (send: () => unknown): Promise<unknown> => Promise.resolve().then(send);

  it(`a 50 MiB send is refused with INVALID_INPUT (default limit ${DEFAULT_MAX_MESSAGE_BYTES} bytes), nothing changes, nothing is written`, async () => {
    const dataDir = join(root, 'data-send');
    const session = await createSession({ agent: 'fake', workDir: root, dataDir });
    const big = 'x'.repeat(50 * MiB);
    for (let i = 0; i < 4; i++) {
      await expect(attempt(() => session.send(big))).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringContaining('maxMessageBytes'),
        details: { bytes: 50 * MiB, limit: DEFAULT_MAX_MESSAGE_BYTES },
      });
    }
    expect(session.snapshot().queue).toEqual([]);
    await session.stop();
    const stored = readFileSync(join(dataDir, 'sessions', `${session.id}.json`), 'utf8');
    expect(stored.length).toBeLessThan(64 * 1024);
  });

  it('the limit is configurable and counts UTF-8 bytes', async () => {
    const session = await createSession({ agent: 'fake', workDir: root, store: new MemoryStore(), journal: new MemoryJournal(), maxMessageBytes: 10 });
    await expect(attempt(() => session.send('é'.repeat(6)))).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { bytes: 12, limit: 10 } });
    await expect(attempt(() => session.send('é'.repeat(5)))).resolves.toBeDefined(); // 10 bytes: accepted
    await session.stop();
    for (const bad of [0, -1, 1.5, '10']) {
      await expect(createSession({ agent: 'fake', workDir: root, maxMessageBytes: bad as number })).rejects.toMatchObject({
        code: 'INVALID_OPTIONS',
        message: expect.stringContaining('maxMessageBytes'),
      });
    }
  });
});
