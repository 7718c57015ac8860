/**
 * Property tests (fast-check) over the real SessionActor + effect runtime, checking the same
 * invariants as the model-based test after every step:
 *
 * 1. Random walks with manual engines: at each step the event menu of the model (`eventsFor`) is
 *    computed from the runtime's snapshot and a generated index picks one; every agent event goes
 *    through the engine. At the end the session is stopped and wound down.
 * 2. Scripted engines: FakeEngines play generated scripts (turns of text/ask/crash/stall/complete,
 *    start/stop delays, disobedient agents) while generated client actions and clock advances are
 *    interleaved; then `stop` and only time passes until the session is done.
 *
 * FC_RUNS (default 1000) sets the runs of property 1; property 2 runs a third of that
 * (`npm run test:fuzz` runs 10,000 / 3,333). A failure prints fast-check's seed and path and the
 * shrunk run as a numbered story; replay exactly that case (only that test, as the path is per property):
 * `FC_SEED=<seed> FC_PATH=<path> npx vitest run test/model-based/session.property.test.ts -t 'random walks'`
 * (or `-t 'scripted engines'`).
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/actors/session.js';
import type { SessionMachineInput } from '../../src/actors/session-context.js';
import type { TurnUsage } from '../../src/events/agent-event.js';
import type { ControlMode } from '../../src/events/session-input.js';
import { checkEffectLog, flush, MODEL_CONFIG, START_TIME, Sut } from './harness.js';
import { eventsFor } from './model.js';
import {
  actionArb,
  checkSendsAccountedFor,
  checkStateInvariants,
  describeEvent,
  explained,
  numbered,
  scriptArb,
  ScriptedSut,
  sumUsage,
} from './property-harness.js';

const RUNS = Number(process.env.FC_RUNS ?? 1000);
const SCRIPTED_RUNS = Math.max(1, Math.round(RUNS / 3));
const replay = {
  ...(process.env.FC_SEED !== undefined && { seed: Number(process.env.FC_SEED) }),
  ...(process.env.FC_PATH !== undefined && { path: process.env.FC_PATH }),
};
/** Generous per-test timeout that scales with FC_RUNS (the default runs take a fraction of it). */
const timeoutFor = (runs: number) => Math.max(60_000, runs * 150);

const stats = {
  walks: { runs: 0, steps: 0, ms: 0 },
  scripted: { runs: 0, actions: 0, timerFirings: 0, maxTimerFirings: 0, engines: 0, ms: 0 },
  /** What the scripted runs went through (transcript entry types, request outcomes, refusals), to judge the generators. */
  seen: new Map<string, number>(),
};
const tally = (key: string, n = 1) => stats.seen.set(key, (stats.seen.get(key) ?? 0) + n);

afterAll(() => {
  const { walks, scripted } = stats;
  console.log(
    `property: random walks ${walks.runs} runs, ${walks.steps} steps, ${(walks.ms / 1000).toFixed(1)}s; ` +
      `scripted engines ${scripted.runs} runs, ${scripted.actions} client actions, ${scripted.timerFirings} timer firings (max ${scripted.maxTimerFirings} in a run), ` +
      `${scripted.engines} engines, ${(scripted.ms / 1000).toFixed(1)}s (FC_RUNS=${RUNS})\n  scripted runs saw: ` +
      [...stats.seen.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, n]) => `${k} ${n}`)
        .join(', '),
  );
});

function inputFor(mode: ControlMode): SessionMachineInput {
  return { sessionId: 'walk', agent: 'fake', workDir: '/work', mode, now: START_TIME, config: MODEL_CONFIG };
}

describe('SessionActor properties', () => {
  it(
    'random walks over the model’s event menu keep every invariant, and the session winds down cleanly',
    async () => {
      const started = performance.now();
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom<ControlMode>('remote', 'local'),
            fc.array(fc.nat({ max: 999 }), { minLength: 1, maxLength: 60, size: 'max' }),
            async (mode, choices) => {
              stats.walks.runs += 1;
              const sut = new Sut(inputFor(mode));
              const trace: string[] = [`start in ${mode} mode`];
              const failures: string[] = [];
              // The walk fails writes on purpose (persist_failed); any other failure is an engine call
              // the engine could not take (a gone engine, an answer nobody waits for).
              sut.runtime.observe({ failure: (error) => error.code !== 'PERSIST_FAILED' && failures.push(`${error.code}: ${error.message}`) });
              const check = async () => {
                expect(failures, 'the runtime failed to carry out an effect').toEqual([]);
                sut.checkInvariants();
                checkStateInvariants(sut.runtime);
                await sut.assertStaleIgnored();
              };
              const apply = async (event: SessionEvent, note = '') => {
                trace.push(`${describeEvent(event)}${note} @+${sut.clock.now() - START_TIME}`);
                await sut.apply(event);
              };
              await explained(
                () => `after these steps (state now ${JSON.stringify(sut.runtime.actor.getSnapshot().value)}):\n${numbered(trace)}`,
                async () => {
                  await flush();
                  await check();
                  for (const choice of choices) {
                    // A done session offers nothing more: the remaining choices are the wind-down's.
                    if (sut.runtime.isDone) break;
                    const menu = eventsFor(sut.runtime.actor.getSnapshot());
                    await apply(menu[choice % menu.length]!);
                    stats.walks.steps += 1;
                    await check();
                  }

                  // Wind down: stop, the live engine exits, every pending write lands.
                  if (!sut.runtime.isDone) await apply({ type: 'stop', at: sut.clock.now() }, ' [wind-down]');
                  const live = sut.context.liveGen;
                  if (!sut.runtime.isDone && live !== null) {
                    await apply({ type: 'exited', gen: live, at: sut.clock.now(), code: 0, signal: null }, ' [wind-down]');
                  }
                  while (sut.store.settle('ok')) {
                    trace.push('persist_ok [wind-down]');
                    await flush();
                  }
                  let finished = false;
                  void sut.runtime.done.then(() => (finished = true));
                  await flush();

                  expect(sut.runtime.actor.getSnapshot().status, 'the actor is done').toBe('done');
                  expect(finished, 'runtime.done resolved (final state, engines gone, writes settled)').toBe(true);
                  sut.checkInvariants();
                  checkStateInvariants(sut.runtime);
                  expect(Object.keys(sut.context.requests), 'no open requests remain').toEqual([]);
                  checkSendsAccountedFor(sut.effects, sut.accepted, sut.context.queue.map((q) => q.localId));
                  expect(sut.runtime.armedTimers(), 'no armed timers').toEqual([]);
                  expect(sut.clock.pendingCount, 'nothing left on the clock').toBe(0);
                  expect(sut.store.saved?.state.phase, 'the final state was written').toBe('stopped');
                  // Manual engines exit only when told to (injected `exited`): the ones the runtime still
                  // holds must at least have been asked to stop.
                  for (const gen of sut.runtime.liveEngineGens()) {
                    expect(sut.engineFor(gen)?.stopped, `engine gen ${gen} was never stopped`).toBe(true);
                  }
                },
              );
            },
          ),
          { numRuns: RUNS, ...replay },
        );
      } finally {
        stats.walks.ms += performance.now() - started;
      }
    },
    timeoutFor(RUNS),
  );

  it(
    'scripted engines with interleaved client actions and time keep every invariant, and stop cleanly',
    async () => {
      const started = performance.now();
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom<ControlMode>('remote', 'local'),
            fc.array(scriptArb, { minLength: 1, maxLength: 3 }),
            fc.integer({ min: 0, max: 3 }),
            fc.array(actionArb, { minLength: 1, maxLength: 60, size: 'max' }),
            fc.boolean(),
            async (mode, scripts, maxRestarts, actions, restFirst) => {
              stats.scripted.runs += 1;
              const sut = new ScriptedSut(mode, scripts, { maxRestarts });
              sut.log.push(`start in ${mode} mode, maxRestarts=${maxRestarts}`);
              const check = async () => {
                // Store and journal are in memory and never fail: any failure is an engine call the
                // engine could not take (a gone engine, an answer nobody waits for).
                expect(sut.failures.map((f) => `${f.code}: ${f.message}`), 'the runtime failed to carry out an effect').toEqual([]);
                checkEffectLog(sut.effects, sut.accepted, sut.context.queue.map((q) => q.localId));
                checkStateInvariants(sut.runtime);
                await sut.checkSettings(false);
              };
              try {
                await explained(
                  () => `state ${JSON.stringify(sut.runtime.actor.getSnapshot().value)}; what happened:\n${numbered(sut.log)}`,
                  async () => {
                    await flush();
                    await check();
                    for (const action of actions) {
                      await sut.act(action);
                      stats.scripted.actions += 1;
                      await check();
                    }
                    if (restFirst) {
                      await sut.rest();
                      await check();
                      checkAtRest(sut);
                      await sut.checkSettings(true);
                    }
                    await sut.stopAndDrain();
                    await checkFinal(sut);
                  },
                );
              } finally {
                for (const e of sut.effects) {
                  if (e.type === 'transcript.emit') tally(e.entry.type);
                  if (e.type === 'ephemeral.emit' && e.kind === 'permission_resolved') tally(`request ${e.status}`);
                  if (e.type === 'ephemeral.emit' && e.kind === 'status' && e.phase === 'failed') tally('phase failed');
                  if (e.type === 'engine.abort') tally('engine.abort');
                  if (e.type === 'engine.configure') tally('engine.configure');
                  if (e.type === 'client.error') tally(e.code);
                }
                stats.scripted.timerFirings += sut.timerFirings;
                stats.scripted.maxTimerFirings = Math.max(stats.scripted.maxTimerFirings, sut.timerFirings);
                stats.scripted.engines += sut.engines.length;
              }
            },
          ),
          { numRuns: SCRIPTED_RUNS, ...replay },
        );
      } finally {
        stats.scripted.ms += performance.now() - started;
      }
    },
    timeoutFor(RUNS),
  );
});

/**
 * Liveness: left alone, a session settles. Every deadline is bounded (stall, interrupt grace, stop
 * timeout, permission timeout, restart backoff, bounded restarts), so once nothing is scheduled:
 * no request is open, the agent is not "thinking", and in remote mode every queued message went
 * out and the session is hibernated (idle past `hibernateAfterMs`, its agent stopped), or idle
 * when hibernation is off, or failed. A local session may keep messages queued while a person
 * drives the agent (they wait for control to come back), or be done (the agent was quit).
 */
function checkAtRest(sut: ScriptedSut): void {
  const snapshot = sut.runtime.actor.getSnapshot();
  const ctx = snapshot.context;
  expect(Object.keys(ctx.requests), 'open requests at rest').toEqual([]);
  expect(ctx.thinking, 'thinking at rest').toBe(false);
  if (snapshot.status === 'done') return;
  expect(sut.runtime.armedTimers(), 'timers armed at rest').toEqual([]);
  if (ctx.mode === 'remote') {
    const resting = ctx.config.hibernateAfterMs > 0 ? ['hibernated', 'failed'] : ['idle', 'failed'];
    expect(resting, `remote session at rest in ${JSON.stringify(snapshot.value)}`).toContain(ctx.phase);
    if (ctx.phase !== 'failed') expect(ctx.queue.map((q) => q.localId), 'messages still queued at rest').toEqual([]);
    if (ctx.phase === 'hibernated') expect(snapshot.value, 'at rest, hibernated means no agent').toEqual({ hibernated: 'asleep' });
  } else {
    expect(['local', 'failed'], `local session at rest in ${JSON.stringify(snapshot.value)}`).toContain(ctx.phase);
  }
}

async function checkFinal(sut: ScriptedSut): Promise<void> {
  const ctx = sut.context;
  expect(sut.runtime.actor.getSnapshot().status, 'the actor is done').toBe('done');
  checkEffectLog(sut.effects, sut.accepted, ctx.queue.map((q) => q.localId));
  checkStateInvariants(sut.runtime);
  checkSendsAccountedFor(sut.effects, sut.accepted, ctx.queue.map((q) => q.localId));
  expect(Object.keys(ctx.requests), 'no open requests remain').toEqual([]);

  // The journal holds exactly what the session emitted, in order, numbered 1, 2, 3, ... (its seq).
  const transcript = await sut.transcript();
  const emitted = sut.effects.flatMap((e) => (e.type === 'transcript.emit' ? [{ ...e.entry, seq: 0 }] : []));
  emitted.forEach((entry, index) => (entry.seq = index + 1));
  expect(transcript, 'the journal holds every transcript entry, in order').toEqual(emitted);
  expect(new Set(transcript.map((e) => e.eventId)).size, 'transcript event ids are unique').toBe(transcript.length);

  // Every permission request the session recorded ended exactly once.
  const payload = (e: { payload: unknown }) => e.payload as Record<string, unknown>;
  const asked = transcript.filter((e) => e.type === 'permission_request');
  const resolved = transcript.filter((e) => e.type === 'permission_resolved');
  const prompts = sut.effects.filter((e) => e.type === 'ephemeral.emit' && e.kind === 'permission_resolved');
  for (const entry of asked) {
    const id = payload(entry)['requestId'] as string;
    const where = `permission request ${id}`;
    expect(asked.filter((e) => payload(e)['requestId'] === id), `${where} recorded twice`).toHaveLength(1);
    const ended = ctx.completed[id];
    expect(ended, `${where} never ended`).toBeDefined();
    const closes = resolved.filter((e) => payload(e)['requestId'] === id).length;
    const notices = prompts.filter((e) => e.type === 'ephemeral.emit' && e.kind === 'permission_resolved' && e.requestId === id).length;
    if (payload(entry)['handledLocally']) {
      expect(ended!.status, `${where} (local)`).toBe('local');
      expect(closes, `${where} (local) resolved remotely`).toBe(0);
    } else if (payload(entry)['refused']) {
      expect(ended!.status, `${where} (refused)`).toBe('cancelled');
      expect(closes, `${where} (refused) resolved again`).toBe(0);
    } else {
      expect(closes, `${where}: permission_resolved entries`).toBe(1);
      expect(notices, `${where}: permission_resolved notices`).toBe(1);
    }
  }
  const recorded = new Set(asked.map((e) => payload(e)['requestId'] as string));
  for (const id of Object.keys(ctx.completed)) expect(recorded.has(id), `completed ${id} was never requested`).toBe(true);
  const answers = sut.effects.flatMap((e) => (e.type === 'engine.answer_permission' ? [e.requestId] : []));
  expect(new Set(answers).size, 'a request answered twice').toBe(answers.length);
  for (const engine of sut.engines) {
    const ids = engine.answers.map((a) => a.requestId);
    expect(new Set(ids).size, 'an engine got two answers for one request').toBe(ids.length);
  }

  // Usage: the totals are the sum of the turns in the transcript, and of what the live engines reported.
  const turns = transcript.filter((e) => e.type === 'turn_complete').map((e) => payload(e)['usage'] as TurnUsage);
  const reported = sut.liveEvents.flatMap((e) => (e.type === 'turn_complete' ? [e.usage] : []));
  for (const [what, expected] of [
    ['transcript turns', sumUsage(turns)],
    ['live engines’ turn_complete events', sumUsage(reported)],
  ] as const) {
    const { costUsd, ...tokens } = ctx.usage;
    const { costUsd: expectedCost, ...expectedTokens } = expected;
    expect(tokens, `usage totals = sum over ${what}`).toEqual(expectedTokens);
    expect(costUsd, `cost total = sum over ${what}`).toBeCloseTo(expectedCost, 9);
  }

  // The stored final state is the final context.
  const stored = await sut.store.load(sut.sessionId);
  expect(stored?.state.phase, 'the final state was written').toBe('stopped');
  expect(stored?.state.usage).toEqual(ctx.usage);
  expect(stored?.state.completed).toEqual(ctx.completed);
  expect(stored?.state.queue).toEqual(ctx.queue);
  expect({ model: stored?.state.model ?? null, permissionMode: stored?.state.permissionMode ?? null }, 'the final state holds the last choice').toEqual(sut.chosen);

  // Nothing left running.
  for (const [i, engine] of sut.engines.entries()) {
    if (engine.started) expect(engine.stopped || engine.exitedEmitted, `engine #${i + 1} was started and never stopped`).toBe(true);
    else expect(engine.sent.length + engine.aborts + engine.answers.length, `engine #${i + 1} was used but never started`).toBe(0);
  }
  expect(sut.runtime.liveEngineGens(), 'engines that never reported exited').toEqual([]);
  expect(sut.runtime.armedTimers(), 'no armed timers').toEqual([]);
  expect(sut.clock.pendingCount, 'nothing left on the clock').toBe(0);
}
