/**
 * The rollout tailer on real files (no Codex binary): the REAL paginated/legacy fixtures are
 * written into a temp file piece by piece while the tailer follows it.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRolloutBytes, tailRollout, type RolloutDiagnostic, type RolloutTailer, type RolloutTailerOptions, type TailedEvent, type TailerTimers } from '../../src/engines/codex/rollout/index.js';

const fixtureDir = join(import.meta.dirname, '..', 'fixtures', 'codex', 'rollout');
const fixture = (name: string) => Buffer.from(readFileSync(join(fixtureDir, `${name}.rollout.jsonl`), 'utf8').replaceAll('say hello', 'say héllo 😀'), 'utf8');
const PAGINATED = fixture('paginated-app-server-0.169.0');
const LEGACY = fixture('legacy-mcp-server-0.153.4');

const comparable = (events: TailedEvent[]) => events.map((e) => ({ key: e.key, event: e.event, cursor: e.cursor }));

/** Follows `path`, collecting events; `until(n)` waits (on events, with a deadline) for n of them. */
function follow(path: string, options: Partial<RolloutTailerOptions> = {}) {
  const events: TailedEvent[] = [];
  const diagnostics: RolloutDiagnostic[] = [];
  const waiters = new Set<() => void>();
  const tailer = tailRollout({
    path,
    pollIntervalMs: 20,
    ...options,
    onEvent: (event) => {
      events.push(event);
      for (const w of waiters) w();
      options.onEvent?.(event);
    },
    onDiagnostic: (d) => {
      diagnostics.push(d);
      for (const w of waiters) w();
    },
  });
  const until = (predicate: () => boolean, what: string, timeoutMs = 5000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}: ${events.length} events, diagnostics ${JSON.stringify(diagnostics)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { tailer, events, diagnostics, until };
}

describe('RolloutTailer', () => {
  let root: string;
  const open: RolloutTailer[] = [];

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ase-rollout-tail-'));
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((t) => t.close()));
    rmSync(root, { recursive: true, force: true });
  });

  it('waits for a file (and its dated directory) created after it started, then follows it', async () => {
    const dir = join(root, 'sessions', '2026', '11', '23');
    const path = join(dir, 'rollout-late.jsonl');
    const expected = readRolloutBytes(path, PAGINATED).events;
    const t = follow(path);
    open.push(t.tailer);
    await t.tailer.catchUp();
    expect(t.events).toEqual([]);
    expect(t.diagnostics).toEqual([]); // a missing file is not an error
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, PAGINATED.subarray(0, 1000));
    appendFileSync(path, PAGINATED.subarray(1000));
    await t.until(() => t.events.length === expected.length, 'all events');
    expect(comparable(t.events)).toEqual(comparable(expected));
  });

  it('processes a line only once its newline arrives: pieces split mid-line and mid-UTF-8 character', async () => {
    const path = join(root, 'rollout.jsonl');
    const expected = readRolloutBytes(path, LEGACY).events;
    writeFileSync(path, '');
    const t = follow(path, { watch: false, pollIntervalMs: 60_000 }); // only catchUp() reads: deterministic
    open.push(t.tailer);
    const multibyte = LEGACY.indexOf(Buffer.from('😀'));
    expect(multibyte).toBeGreaterThan(0);
    // cut inside the 4-byte emoji, inside a JSON string, right before and right after newlines
    const firstNewline = LEGACY.indexOf(0x0a);
    const cuts = [5, firstNewline, firstNewline + 1, multibyte + 1, multibyte + 2, multibyte + 3, multibyte + 40, LEGACY.length - 3, LEGACY.length];
    let written = 0;
    for (const cut of cuts) {
      appendFileSync(path, LEGACY.subarray(written, cut));
      written = cut;
      await t.tailer.catchUp();
      // exactly the events of the lines complete so far
      const complete = LEGACY.lastIndexOf(0x0a, written - 1) + 1;
      const completeLines = LEGACY.subarray(0, complete).toString('latin1').split('\n').length - 1;
      expect(comparable(t.events)).toEqual(comparable(expected.filter((e) => e.line < completeLines)));
      expect(t.tailer.cursor).toEqual({ path, byteOffset: complete, ordinal: completeLines });
    }
    expect(comparable(t.events)).toEqual(comparable(expected));
    expect(t.events.some((e) => JSON.stringify(e.event).includes('héllo 😀'))).toBe(true);
    expect(t.diagnostics).toEqual([]);
  });

  it('resumes from a stored cursor without repeating or skipping an event', async () => {
    const path = join(root, 'rollout.jsonl');
    const expected = readRolloutBytes(path, PAGINATED).events;
    const half = PAGINATED.indexOf(Buffer.from('"Tools done"')); // mid-line, in the second turn
    writeFileSync(path, PAGINATED.subarray(0, half));
    const first = follow(path);
    open.push(first.tailer);
    await first.tailer.catchUp();
    expect(first.events.length).toBeGreaterThan(3);
    // the consumer handled only some of them, then stopped
    const handled = first.events.slice(0, first.events.length - 2);
    await first.tailer.close();
    appendFileSync(path, PAGINATED.subarray(half));
    const second = follow(path, { from: handled[handled.length - 1]!.cursor });
    open.push(second.tailer);
    await second.until(() => handled.length + second.events.length === expected.length, 'the remaining events');
    expect(comparable([...handled, ...second.events])).toEqual(comparable(expected));
  });

  it('a multi-event line (failed turn: error + turn_complete) can be resumed between its events', async () => {
    const path = join(root, 'rollout.jsonl');
    writeFileSync(path, PAGINATED);
    const expected = readRolloutBytes(path, PAGINATED).events;
    const errorIndex = expected.findIndex((e) => e.event.type === 'error');
    expect(expected[errorIndex]!.cursor.eventsDelivered).toBe(1);
    const t = follow(path, { from: expected[errorIndex]!.cursor });
    open.push(t.tailer);
    await t.until(() => t.events.length === expected.length - errorIndex - 1, 'the rest');
    expect(t.events.map((e) => e.event.type)).toEqual(['turn_complete']);
  });

  it('fs.watch wakes it on appends (the poll fallback is set to a minute here)', async () => {
    const path = join(root, 'rollout.jsonl');
    const expected = readRolloutBytes(path, PAGINATED).events;
    writeFileSync(path, PAGINATED.subarray(0, 100)); // exists, but no complete line yet
    const t = follow(path, { pollIntervalMs: 60_000 });
    open.push(t.tailer);
    await t.tailer.catchUp();
    expect(t.events).toEqual([]);
    appendFileSync(path, PAGINATED.subarray(100));
    await t.until(() => t.events.length === expected.length, 'events via fs.watch');
  });

  it('polling alone follows the file when fs.watch is off', async () => {
    const path = join(root, 'rollout.jsonl');
    writeFileSync(path, '');
    const expected = readRolloutBytes(path, LEGACY).events;
    const t = follow(path, { watch: false, pollIntervalMs: 10 });
    open.push(t.tailer);
    for (let i = 0; i < LEGACY.length; i += 9000) appendFileSync(path, LEGACY.subarray(i, i + 9000));
    await t.until(() => t.events.length === expected.length, 'events via polling');
    expect(comparable(t.events)).toEqual(comparable(expected));
  });

  it('skips and records malformed lines, and lines before session_meta', async () => {
    const path = join(root, 'rollout.jsonl');
    const lines = PAGINATED.toString('utf8').split('\n');
    const garbage = ['{"type":"event_msg","payload":{"type":"task_started","turn_id":"t0"}}', lines[0], 'not json at all', '{"type":"event_msg"}', '[1,2]', '', '{"type":"mystery_line","payload":{}}', ...lines.slice(1)];
    writeFileSync(path, garbage.join('\n'));
    const t = follow(path);
    open.push(t.tailer);
    const expected = readRolloutBytes(path, PAGINATED).events;
    await t.until(() => t.events.length === expected.length, 'valid events');
    expect(t.events.map((e) => e.event)).toEqual(expected.map((e) => e.event));
    expect(t.diagnostics.map((d) => [d.kind, d.line])).toEqual([
      ['unhandled', 0],
      ['malformed', 2],
      ['malformed', 3],
      ['malformed', 4],
      ['unhandled', 6],
    ]);
    expect(t.diagnostics[1]!.excerpt).toBe('not json at all');
    expect(t.tailer.diagnostics).toEqual(t.diagnostics);
  });

  it('a throwing listener is recorded and tailing goes on', async () => {
    const path = join(root, 'rollout.jsonl');
    writeFileSync(path, PAGINATED);
    const expected = readRolloutBytes(path, PAGINATED).events;
    let calls = 0;
    const t = follow(path, {
      onEvent: () => {
        if (calls++ === 0) throw new Error('consumer bug');
      },
    });
    open.push(t.tailer);
    await t.until(() => t.events.length === expected.length, 'all events');
    expect(t.diagnostics).toEqual([{ kind: 'listener', message: 'onEvent threw: consumer bug', line: 0 }]);
  });

  it('stops with an io diagnostic when the file shrinks under it', async () => {
    const path = join(root, 'rollout.jsonl');
    writeFileSync(path, PAGINATED);
    const t = follow(path);
    open.push(t.tailer);
    await t.until(() => t.events.length > 0 && t.tailer.cursor.byteOffset === PAGINATED.length, 'the whole file');
    truncateSync(path, 100);
    await t.until(() => t.tailer.closed, 'close after shrink');
    expect(t.diagnostics.map((d) => d.kind)).toEqual(['io']);
    expect(t.diagnostics[0]!.message).toMatch(/shrank/);
  });

  it('AbortSignal stops watching and polling: no timer left, nothing reported afterwards', async () => {
    const path = join(root, 'rollout.jsonl');
    writeFileSync(path, PAGINATED.subarray(0, PAGINATED.indexOf(0x0a) + 1));
    const pending = new Set<unknown>();
    const timers: TailerTimers = {
      setTimeout: (fn, ms) => {
        const handle = setTimeout(() => {
          pending.delete(handle);
          fn();
        }, ms);
        pending.add(handle);
        return handle;
      },
      clearTimeout: (handle) => {
        pending.delete(handle);
        clearTimeout(handle as ReturnType<typeof setTimeout>);
      },
    };
    const controller = new AbortController();
    const t = follow(path, { signal: controller.signal, timers });
    open.push(t.tailer);
    await t.until(() => t.events.length === 1, 'session_identified');
    await t.tailer.catchUp();
    expect(pending.size).toBe(1); // the poll
    controller.abort();
    await t.tailer.close(); // idempotent; waits for a pass in flight
    expect(t.tailer.closed).toBe(true);
    expect(pending.size).toBe(0);
    appendFileSync(path, PAGINATED.subarray(PAGINATED.indexOf(0x0a) + 1));
    await t.tailer.catchUp();
    await new Promise((r) => setTimeout(r, 80)); // a poll period or four: nothing may arrive
    expect(t.events).toHaveLength(1);
  });

  it('an already-aborted signal never reads', async () => {
    const path = join(root, 'rollout.jsonl');
    writeFileSync(path, PAGINATED);
    const t = follow(path, { signal: AbortSignal.abort() });
    await t.tailer.catchUp();
    expect(t.tailer.closed).toBe(true);
    expect(t.events).toEqual([]);
  });
});

