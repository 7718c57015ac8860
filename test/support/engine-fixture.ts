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
 * Replaying: test/support/replay-agent.mjs plays the `from_agent` lines back, segment by segment,
 * each time the engine writes the next `to_agent` line (which must match the recording), and
 * {@link hostActions} tells a test which engine call produced each `to_agent` line and after how
 * many events, so the test can drive the engine exactly as the session did.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentEngine, EngineFactory } from '../../src/engines/core/engine.js';
import type { TrafficRecord } from '../../src/engines/transport/traffic.js';
import type { AgentEvent, AgentEventBody } from '../../src/events/agent-event.js';

/** Placeholder → the value it stands for in this run, e.g. `{ '<ROOT>': '/tmp/ase-x' }`. */
export type FixtureVars = Readonly<Record<string, string>>;
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

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
 * Writes an executable stand-in for the agent CLI into `dir` that replays `fixturePath` (see
 * replay-agent.mjs), running on this process's Node. Returns its path.
 */
export function replayAgentBin(dir: string, fixturePath: string, vars: FixtureVars): string {
  const bin = join(dir, 'replay-agent');
  const script = join(repoRoot, 'test', 'support', 'replay-agent.mjs');
  writeFileSync(
    bin,
    `#!${process.execPath}\nprocess.env.REPLAY_FIXTURE = ${JSON.stringify(fixturePath)};\nprocess.env.REPLAY_VARS = ${JSON.stringify(JSON.stringify(vars))};\nimport(${JSON.stringify(script)});\n`,
  );
  chmodSync(bin, 0o755);
  return bin;
}
