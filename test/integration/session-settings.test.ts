/**
 * `session.setModel()` / `session.setPermissionMode()` through `createSession` with the fake engine:
 * - they resolve once the choice is stored, and the engine is told only after that (write-ahead);
 * - refused before anything changes: `UNSUPPORTED` when the engine factory cannot (no write, no
 *   transcript entry, no engine call), `INVALID_INPUT` for a malformed name or one the factory or
 *   the live engine rejects, `SESSION_STOPPED` once stopped;
 * - the choice survives a host restart and a crash (FileStore on disk): the next engine starts with
 *   it, and `null` goes back to the engine options' value;
 * - a state file written before the fields existed loads as "no choice".
 * The real agents: test/real-cli (claude, codex app-server), test/unit/acp-session-settings.test.ts.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AseError,
  createSession,
  EngineRegistry,
  FakeEngine,
  isAseError,
  MemoryJournal,
  MemoryStore,
  SimulatedClock,
  type EngineCapabilities,
  type EngineSettings,
  type PersistedSession,
  type SaveResult,
  type Session,
  type SessionNotice,
  type SessionOptions,
} from '../../src/index.js';
import { rejection } from '../support/async.js';

const T0 = 1_700_000_000_000;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

let tmp: string;
let open: { session: Session; clock: SimulatedClock }[] = [];
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-settings-'));
});
afterEach(async () => {
  for (const { session, clock } of open) if (!session.snapshot().done) await stopNow(session, clock);
  open = [];
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A MemoryStore whose saves can be held (`gated`) and are recorded. */
class GatedStore extends MemoryStore {
  saves: PersistedSession[] = [];
  gated = false;
  readonly #waiting: (() => void)[] = [];

  override async save(sessionId: string, state: PersistedSession, expectedVersion: number, fence?: number): Promise<SaveResult> {
    if (this.gated) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    const result = await super.save(sessionId, state, expectedVersion, fence);
    if (result.ok) this.saves.push(structuredClone(state));
    return result;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  letGo(): void {
    this.#waiting.shift()?.();
  }
}

/** The fake engine under a registry; `capabilities` and `validateSettings` of its factory can be changed. */
function agents(options: { capabilities?: Partial<EngineCapabilities>; validateSettings?: (settings: EngineSettings) => void } = {}) {
  const engines: FakeEngine[] = [];
  const registry = new EngineRegistry().register({
    name: 'fake',
    capabilities: { ...FakeEngine.capabilities, ...options.capabilities },
    create: (context) => {
      const engine = new FakeEngine(context, {});
      engines.push(engine);
      return engine;
    },
    ...(options.validateSettings && { validateSettings: options.validateSettings }),
  });
  return { engines, registry };
}

async function start(options: Partial<SessionOptions> = {}) {
  const clock = (options.clock as SimulatedClock | undefined) ?? new SimulatedClock(T0);
  const notices: SessionNotice[] = [];
  const session = await createSession({
    agent: 'fake',
    workDir: tmp,
    store: new MemoryStore(),
    journal: new MemoryJournal(),
    ...options,
    clock,
    onNotice: (n) => notices.push(n),
  });
  open.push({ session, clock });
  return { session, clock, notices };
}

async function until(clock: SimulatedClock, predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    await tick();
    if (predicate()) return;
    clock.advance(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function stopNow(session: Session, clock: SimulatedClock): Promise<void> {
  const stopping = session.stop();
  await until(clock, () => session.snapshot().done, 'the stop');
  await stopping;
}

const settled = async (promise: Promise<unknown>) => {
  let state = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  for (let i = 0; i < 5; i++) await tick();
  return state;
};

const transcriptTypes = (notices: SessionNotice[]) => notices.flatMap((n) => (n.type === 'transcript' ? [n.entry.type] : []));

describe('setModel / setPermissionMode resolve once stored', () => {
  it('pending while the write is; the engine is told only after it is stored; then store, snapshot and engine agree', async () => {
    const store = new GatedStore();
    const fake = agents();
    const { session, clock } = await start({ store, sessionId: 's1', registry: fake.registry });
    await until(clock, () => session.snapshot().phase === 'idle' && store.waiting === 0, 'idle');
    store.gated = true;
    const choosing = session.setModel('opus');
    expect(await settled(choosing)).toBe('pending');
    expect(fake.engines[0]!.configured).toEqual([]); // write-ahead: not before the store has it
    expect(session.snapshot().model).toBe('opus');
    while (store.waiting > 0) {
      store.letGo();
      await tick();
    }
    store.gated = false;
    await choosing;
    expect((await store.load('s1'))!.state.model).toBe('opus');
    await until(clock, () => fake.engines[0]!.configured.length > 0, 'the engine call');
    expect(fake.engines[0]!.configured).toEqual([{ model: 'opus' }]);
    expect(fake.engines[0]!.settings).toEqual({ model: 'opus', permissionMode: null });

    await session.setPermissionMode('plan');
    await until(clock, () => fake.engines[0]!.configured.length > 1, 'the second engine call');
    expect(fake.engines[0]!.settings).toEqual({ model: 'opus', permissionMode: 'plan' });
    expect(session.snapshot()).toMatchObject({ model: 'opus', permissionMode: 'plan' });
  });

  it('mid-turn the change goes to the engine at once and the turn completes', async () => {
    const fake = agents();
    const { session, clock } = await start({ registry: fake.registry });
    await until(clock, () => session.snapshot().phase === 'idle', 'idle');
    const running = session.run('hello');
    await until(clock, () => session.snapshot().phase === 'running', 'running');
    await session.setModel('haiku');
    const result = await (async () => {
      await until(clock, () => session.snapshot().phase === 'idle', 'the turn end');
      return running;
    })();
    expect(result.status).toBe('completed');
    expect(fake.engines[0]!.configured).toEqual([{ model: 'haiku' }]);
  });
});

describe('refused before anything changes', () => {
  it('UNSUPPORTED when the engine factory cannot: rejected, reported, nothing stored, nothing recorded, no engine call', async () => {
    const store = new GatedStore();
    const fake = agents({ capabilities: { setModel: false, setPermissionMode: false } });
    const { session, clock, notices } = await start({ store, sessionId: 'u1', registry: fake.registry });
    await until(clock, () => session.snapshot().phase === 'idle', 'idle');
    const saves = store.saves.length;
    for (const attempt of [() => session.setModel('opus'), () => session.setPermissionMode('plan'), () => session.setModel(null)]) {
      const error = await rejection(attempt());
      expect(isAseError(error, 'UNSUPPORTED'), String(error)).toBe(true);
      expect((error as AseError).details).toMatchObject({ agent: 'fake' });
    }
    await tick();
    expect(notices.filter((n) => n.type === 'error').map((n) => (n.type === 'error' ? n.error.code : ''))).toEqual(['UNSUPPORTED', 'UNSUPPORTED', 'UNSUPPORTED']);
    expect(store.saves.length).toBe(saves);
    expect(transcriptTypes(notices)).not.toContain('settings_changed');
    expect(fake.engines[0]!.configured).toEqual([]);
    expect(session.snapshot()).not.toHaveProperty('model');
  });

  it('a capability declared for the model only: the permission mode is UNSUPPORTED, the model is taken', async () => {
    const fake = agents({ capabilities: { setModel: true, setPermissionMode: false } });
    const { session, clock } = await start({ registry: fake.registry });
    await until(clock, () => session.snapshot().phase === 'idle', 'idle');
    expect(isAseError(await rejection(session.setPermissionMode('plan')), 'UNSUPPORTED')).toBe(true);
    await session.setModel('opus');
    expect(session.snapshot().model).toBe('opus');
  });

  it('INVALID_INPUT for a malformed name, and for one the factory rejects; nothing changes', async () => {
    const fake = agents({
      validateSettings: (s) => {
        if (typeof s.permissionMode === 'string' && !['default', 'plan'].includes(s.permissionMode)) {
          throw new AseError('INVALID_INPUT', `permission mode ${s.permissionMode} is not one of default, plan`);
        }
      },
    });
    const { session, clock, notices } = await start({ registry: fake.registry });
    await until(clock, () => session.snapshot().phase === 'idle', 'idle');
    for (const bad of ['', '-p', '--dangerously-skip-permissions', 'two words', 'tab\there', 'x'.repeat(257), 'nul\u0000']) {
      const error = await rejection(session.setModel(bad));
      expect(isAseError(error, 'INVALID_INPUT'), `${JSON.stringify(bad)}: ${String(error)}`).toBe(true);
    }
    expect(isAseError(await rejection(session.setModel(42 as unknown as string)), 'INVALID_INPUT')).toBe(true);
    const refused = await rejection(session.setPermissionMode('yolo'));
    expect(isAseError(refused, 'INVALID_INPUT')).toBe(true);
    expect((refused as Error).message).toContain('not one of default, plan');
    expect(session.snapshot()).not.toHaveProperty('model');
    expect(session.snapshot()).not.toHaveProperty('permissionMode');
    expect(transcriptTypes(notices)).not.toContain('settings_changed');
    await session.setPermissionMode('plan');
    expect(session.snapshot().permissionMode).toBe('plan');
  });

  it('SESSION_STOPPED once the session stopped', async () => {
    const { session, clock } = await start();
    await until(clock, () => session.snapshot().phase === 'idle', 'idle');
    await stopNow(session, clock);
    expect(isAseError(await rejection(session.setModel('opus')), 'SESSION_STOPPED')).toBe(true);
    expect(isAseError(await rejection(session.setPermissionMode('plan')), 'SESSION_STOPPED')).toBe(true);
  });
});

describe('kept across restarts, crashes and mode switches', () => {
  it('a continued session (FileStore) starts its engine with the stored choice; null goes back to engineOptions', async () => {
    const dataDir = path.join(tmp, 'data');
    const first = agents();
    const a = await start({ dataDir, store: undefined, journal: undefined, sessionId: 'k1', registry: first.registry, engineOptions: { model: 'from-options' } });
    await until(a.clock, () => a.session.snapshot().phase === 'idle', 'idle');
    expect(first.engines[0]!.settings).toEqual({ model: 'from-options', permissionMode: null });
    await a.session.setModel('opus');
    await a.session.setPermissionMode('plan');
    // A mode switch starts the next generation with the choice too.
    await a.session.switchMode('local');
    await until(a.clock, () => a.session.snapshot().phase === 'local', 'local');
    expect(first.engines[1]!.spec).toMatchObject({ mode: 'local', model: 'opus', permissionMode: 'plan' });
    await stopNow(a.session, a.clock);

    const second = agents();
    const b = await start({ dataDir, store: undefined, journal: undefined, sessionId: 'k1', registry: second.registry, engineOptions: { model: 'from-options' }, mode: 'remote' });
    await until(b.clock, () => b.session.snapshot().phase === 'idle', 'idle');
    expect(b.session.snapshot()).toMatchObject({ model: 'opus', permissionMode: 'plan' });
    expect(second.engines[0]!.spec).toMatchObject({ model: 'opus', permissionMode: 'plan', options: { model: 'from-options' } });
    expect(second.engines[0]!.settings).toEqual({ model: 'opus', permissionMode: 'plan' });

    await b.session.setModel(null);
    await until(b.clock, () => second.engines[0]!.configured.length > 0, 'the engine call');
    expect(second.engines[0]!.settings).toEqual({ model: 'from-options', permissionMode: 'plan' });
    expect(b.session.snapshot()).not.toHaveProperty('model');
    await stopNow(b.session, b.clock);
    const stored = JSON.parse(await fs.readFile(path.join(dataDir, 'sessions', 'k1.json'), 'utf8')) as { state: PersistedSession };
    expect(stored.state).not.toHaveProperty('model');
    expect(stored.state.permissionMode).toBe('plan');
  });

  it('a host that died without stopping: the restored session starts with the stored choice', async () => {
    const store = new MemoryStore();
    const journal = new MemoryJournal();
    const first = agents();
    const a = await start({ store, journal, sessionId: 'k2', registry: first.registry });
    await until(a.clock, () => a.session.snapshot().phase === 'idle', 'idle');
    await a.session.setPermissionMode('acceptEdits');
    // The host dies: its lease is released as a dead process's would be taken over, nothing is stopped.
    open = open.filter((o) => o.session !== a.session);
    const lease = await store.acquire('k2', { ttlMs: 1, force: true });
    await store.release(lease);

    const second = agents();
    const b = await start({ store, journal, sessionId: 'k2', registry: second.registry });
    await until(b.clock, () => b.session.snapshot().phase === 'idle', 'idle');
    expect(second.engines[0]!.spec).toMatchObject({ permissionMode: 'acceptEdits' });
    expect(b.session.snapshot().permissionMode).toBe('acceptEdits');
    await stopNow(a.session, a.clock).catch(() => undefined);
  });

  it('a state file written before the settings existed loads as "no choice"', async () => {
    const dataDir = path.join(tmp, 'old');
    await fs.mkdir(path.join(dataDir, 'sessions'), { recursive: true });
    const old = {
      schemaVersion: 1,
      sessionId: 'o1',
      agent: 'fake',
      workDir: tmp,
      mode: 'remote',
      phase: 'stopped',
      gen: 2,
      resumeToken: 'tok-2',
      queue: [],
      requests: {},
      completed: {},
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, turns: 0 },
      deliveredIds: [],
      updatedAt: T0 - 1_000,
    };
    await fs.writeFile(path.join(dataDir, 'sessions', 'o1.json'), JSON.stringify({ version: 4, state: old }));
    const fake = agents();
    const { session, clock } = await start({ dataDir, store: undefined, journal: undefined, sessionId: 'o1', registry: fake.registry });
    await until(clock, () => session.snapshot().phase === 'idle', 'idle');
    expect(session.snapshot()).not.toHaveProperty('model');
    expect(fake.engines[0]!.spec).not.toHaveProperty('model');
    expect(fake.engines[0]!.spec).toMatchObject({ resumeToken: 'tok-2' });
    await session.setModel('opus');
    expect(session.snapshot().model).toBe('opus');
  });
});
