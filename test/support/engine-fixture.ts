/**
 * Engine fixtures: real protocol traffic recorded from an engine talking to the real CLI, with the
 * AgentEvents the engine made of it, replayed later without the binary.
 *
 * A fixture is JSONL, one record per line, in the order the host observed them:
 * - `{t, dir: 'to_agent' | 'from_agent', msg}`: a JSON line written to / read from the agent;
 * - `{t, dir: 'to_agent' | 'from_agent', raw}`: a line that was not JSON;
 * - `{t, dir: 'event', event}`: an AgentEvent the engine emitted (without `gen`/`at`).
 * `t` is ms since the first record. Values that depend on the test's temp directory (its path,
 * the agent's slug of it, ...) are replaced by placeholders ({@link FixtureVars}), so a replay in
 * another directory sees its own paths. `activity` events are not recorded: they depend on time.
 *
 * Replaying: {@link replayLauncher} hands the engine the library's replay stand-in (the mechanism
 * behind `replayEngine`), which plays the `from_agent` lines back, segment by segment, each time
 * the engine writes the next `to_agent` line (which must match the recording), and
 * {@link hostActions} tells a test which engine call produced each `to_agent` line and after how
 * many events, so the test can drive the engine exactly as the session did.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AgentEngine, EngineFactory } from '../../src/engines/core/engine.js';
import type { TrafficRecord } from '../../src/engines/transport/traffic.js';
import type { AgentEvent, AgentEventBody } from '../../src/events/agent-event.js';
import type { AseError } from '../../src/errors.js';
import { ReplayScript } from '../../src/engines/core/replay-agent.js';
import { replayLauncher as replayNdjsonLauncher } from '../../src/engines/replay-engine.js';
import type { NdjsonLauncher } from '../../src/engines/transport/ndjson-process.js';

/** Placeholder → the value it stands for in this run, e.g. `{ '<ROOT>': '/tmp/ase-x' }`. */
export type FixtureVars = Readonly<Record<string, string>>;

export type FixtureRecord =
  | { t: number; dir: 'to_agent' | 'from_agent'; msg: unknown }
  | { t: number; dir: 'to_agent' | 'from_agent'; raw: string }
  | { t: number; dir: 'event'; event: AgentEventBody };

const withoutStamp = (event: AgentEvent): AgentEventBody => {
  const { gen: _gen, at: _at, ...body } = event;
  return body as AgentEventBody;
};

/** Collects traffic and events of one engine, then writes them as a fixture with `root` anonymised. */
export class FixtureRecorder {
  readonly #records: FixtureRecord[] = [];
  #t0: number | undefined;

  constructor(readonly vars: FixtureVars) {}

  #t(): number {
    const now = performance.now();
    this.#t0 ??= now;
    return Math.round((now - this.#t0) * 1000) / 1000;
  }

  readonly tap = (record: TrafficRecord): void => {
    let msg: unknown;
    try {
      msg = JSON.parse(record.line);
    } catch {
      this.#records.push({ t: this.#t(), dir: record.direction, raw: record.line });
      return;
    }
    this.#records.push({ t: this.#t(), dir: record.direction, msg });
  };

  readonly onEvent = (event: AgentEvent): void => {
    if (event.type === 'activity') return;
    this.#records.push({ t: this.#t(), dir: 'event', event: withoutStamp(event) });
  };

  /** Wraps `factory` so every engine it creates reports its events here (traffic comes via `tap`). */
  wrap(factory: EngineFactory): EngineFactory {
    return {
      ...factory,
      create: (context) => {
        const engine: AgentEngine = factory.create(context);
        engine.onEvent(this.onEvent);
        return engine;
      },
    };
  }

  get records(): readonly FixtureRecord[] {
    return this.#records;
  }

  write(path: string): void {
    mkdirSync(dirname(path), { recursive: true });
    // Longest values first, so a value containing another is replaced whole.
    const vars = Object.entries(this.vars).sort(([, a], [, b]) => b.length - a.length);
    const anonymise = (line: string) => vars.reduce((text, [placeholder, value]) => text.split(value).join(placeholder), line);
    writeFileSync(path, `${this.#records.map((r) => anonymise(JSON.stringify(r))).join('\n')}\n`);
  }
}

/** Reads a fixture, putting this run's values where the recording has placeholders. */
export function readFixture(path: string, vars: FixtureVars): FixtureRecord[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(fillIn(line, vars)) as FixtureRecord);
}

export function fillIn(text: string, vars: FixtureVars): string {
  return Object.entries(vars).reduce((out, [placeholder, value]) => out.split(placeholder).join(value), text);
}

export function writeFixture(path: string, records: readonly FixtureRecord[]): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
}

/** The AgentEvents the engine emitted in the recording, in order. */
export function recordedEvents(records: readonly FixtureRecord[]): AgentEventBody[] {
  return records.flatMap((r) => (r.dir === 'event' ? [r.event] : []));
}

/** One `to_agent` line of the recording: what the host wrote and how many events it had seen by then. */
export interface HostAction {
  msg: unknown;
  raw?: string;
  eventsBefore: number;
}

export function hostActions(records: readonly FixtureRecord[]): HostAction[] {
  const actions: HostAction[] = [];
  let events = 0;
  for (const r of records) {
    if (r.dir === 'event') events++;
    else if (r.dir === 'to_agent') actions.push({ msg: 'msg' in r ? r.msg : undefined, ...('raw' in r && { raw: r.raw }), eventsBefore: events });
  }
  return actions;
}

/**
 * A stand-in agent process for the engine's `launcher` option that replays the fixture at
 * `fixturePath` (with this run's `vars`): the library's own replay mechanism (ReplayScript and its
 * relay process, src/engines/core/replay-agent.ts), fed with the fixture's traffic. `mismatch()`
 * is the first host line that differed, as the typed REPLAY_MISMATCH error.
 */
export function replayLauncher(fixturePath: string, vars: FixtureVars): { launcher: NdjsonLauncher; mismatch(): AseError | undefined } {
  const records = readFixture(fixturePath, vars);
  const exited = records.findLast((r): r is Extract<FixtureRecord, { dir: 'event' }> => r.dir === 'event' && r.event.type === 'exited')?.event as
    | { code: number | null; signal: string | null }
    | undefined;
  const traffic = records.flatMap((r) =>
    r.dir === 'event' ? [] : [{ kind: 'traffic' as const, at: r.t, gen: 1, direction: r.dir, line: 'raw' in r ? r.raw : JSON.stringify(r.msg) }],
  );
  let mismatch: AseError | undefined;
  const script = new ReplayScript({ gen: 1, traffic, ...(exited && { exit: { code: exited.code, signal: exited.signal } }) });
  return { launcher: replayNdjsonLauncher(script, (error) => (mismatch ??= error)), mismatch: () => mismatch };
}
