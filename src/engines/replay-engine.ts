/**
 * `replayEngine(file)`: the engine of a recording (docs/recording.md), run for real against a
 * stand-in agent that answers from the recording, so a bug seen once becomes a test. The factory
 * is the built-in engine the recording names (its real protocol client and translation); only the
 * process it starts is replaced, one recorded generation per engine start, through the engine's
 * own spawning hook (`launcher`, or `spawn` for acp). Nothing looks for the agent CLI or asks its
 * version: no agent needs to be installed.
 */
import { AseError } from '../errors.js';
import type { AgentEngine, EngineFactory, EngineStartSpec } from './core/engine.js';
import { wrapEngine } from './core/engine-wrapper.js';
import { readRecording, recordedGenerations, REDACTED, type RecordedGeneration, type Recording } from './core/recording.js';
import { openReplayRelay, ReplayScript } from './core/replay-agent.js';
import { defaultRegistry } from './default-registry.js';
import type { AgentProcess } from './acp/options.js';
import { spawnSupervised, type SpawnSupervisedOptions } from './transport/process-supervisor.js';
import { launchNdjsonProcess, type NdjsonLauncher, type NdjsonProcessSpec } from './transport/ndjson-process.js';

export interface ReplayEngineOptions {
  /** The engine factory to replay through (default: the built-in one the recording names). */
  factory?: EngineFactory;
}

export interface ReplayEngineFactory extends EngineFactory {
  readonly recording: Recording;
  /** The first mismatch between what the engine wrote and the recording, if any. */
  readonly mismatch: AseError | undefined;
  /** True once every recorded generation was started and every recorded line matched or answered. */
  readonly finished: boolean;
  /** Throws the mismatch (REPLAY_MISMATCH), or REPLAY_MISMATCH when recorded generations or lines were left over. */
  assertReplayed(): void;
}

/**
 * An engine factory that replays `file` (or an already read recording). Register it and start a
 * session with the recording's agent and options; drive it as the recorded session was driven.
 *
 * @example
 * const engine = replayEngine('bug.jsonl');
 * const session = await createSession({ agent: engine.name, engines: [engine], workDir, engineOptions: engine.recording.header.engineOptions });
 * await session.run('the recorded prompt');
 * engine.assertReplayed();
 */
export function replayEngine(file: string | Recording, options: ReplayEngineOptions = {}): ReplayEngineFactory {
  const recording = typeof file === 'string' ? readRecording(file) : file;
  const { header } = recording;
  const real = options.factory ?? lookUp(header.agent);
  const generations = recordedGenerations(recording);
  const scripts: ReplayScript[] = [];
  let started = 0;
  let mismatch: AseError | undefined;
  const noteMismatch = (error: AseError) => {
    mismatch ??= error;
  };

  const replayStart = (engine: AgentEngine, spec: EngineStartSpec): Promise<void> => {
    const generation: RecordedGeneration | undefined = generations[started++];
    if (!generation) {
      noteMismatch(
        new AseError('REPLAY_MISMATCH', `replay: the recording has ${generations.length} engine generation(s); this is start ${started} (gen ${spec.gen})`, {
          details: { gen: spec.gen, line: 0, expected: undefined, got: undefined },
        }),
      );
      return Promise.reject(mismatch);
    }
    const script = new ReplayScript(generation, [[header.workDir, spec.workDir]]);
    scripts.push(script);
    const launcher = Object.assign(replayLauncher(script, noteMismatch), { replayedVersion: generation.agentVersion });
    // acp: `command` runs as given (the preset still lends its env and version check), so no
    // agent is looked for; the spawner then starts the stand-in instead of it.
    const hook = real.name === 'acp' ? { command: 'ase-replay-stand-in', spawn: replaySpawner(script, noteMismatch) } : { launcher };
    // The recorded options under the session's: the host lines depend on them. Of `env`, only the
    // values kept (places the engine derives paths from); a redacted secret means nothing here.
    const { env, ...recorded } = header.engineOptions;
    const kept = typeof env === 'object' && env !== null ? Object.fromEntries(Object.entries(env).filter(([, v]) => v !== REDACTED)) : {};
    const options = { ...recorded, ...(Object.keys(kept).length > 0 && { env: kept }), ...spec.options, ...hook };
    return engine.start({ ...spec, options });
  };

  const factory: ReplayEngineFactory = {
    name: real.name,
    capabilities: real.capabilities,
    recording,
    get mismatch() {
      return mismatch;
    },
    get finished() {
      return started >= generations.length && scripts.every((s) => s.finished);
    },
    assertReplayed() {
      if (mismatch) throw mismatch;
      const unfinished = scripts.findIndex((s) => !s.finished);
      if (started < generations.length || unfinished >= 0) {
        const gen = generations[unfinished >= 0 ? unfinished : started]?.gen;
        throw new AseError('REPLAY_MISMATCH', `replay: ended early: ${started} of ${generations.length} recorded generation(s) started${unfinished >= 0 ? `, generation ${gen} not played to its end` : ''}`, {
          details: { gen, line: 0, expected: undefined, got: undefined },
        });
      }
    },
    create(context) {
      const engine = real.create(context);
      return wrapEngine(engine, { start: (spec) => replayStart(engine, spec) });
    },
  };
  if (real.validateOptions) factory.validateOptions = (o) => real.validateOptions!(o);
  if (real.validateSettings) factory.validateSettings = (s) => real.validateSettings!(s);
  return factory;
}

function lookUp(agent: string): EngineFactory {
  const registry = defaultRegistry();
  if (!registry.has(agent) || agent === 'fake') throw new AseError('RECORDING_INVALID', `replay: the recording is of agent "${agent}", which is not a built-in engine (pass options.factory)`);
  return registry.get(agent);
}

/** The claude and codex engines' process hook (`launcher`): the stand-in, through the usual NDJSON transport. */
export function replayLauncher(script: ReplayScript, onMismatch: (error: AseError) => void): NdjsonLauncher {
  return async (spec: NdjsonProcessSpec) => {
    const relay = await openReplayRelay(script, onMismatch);
    try {
      const proc = await launchNdjsonProcess({ ...spec, file: relay.file, args: relay.args, env: { ...spec.env, ...relay.env } });
      void proc.exited.then(relay.close, relay.close);
      return proc;
    } catch (error) {
      relay.close();
      throw error;
    }
  };
}

/** The acp engine's process hook (`spawn`): the stand-in, supervised like any agent. */
export function replaySpawner(script: ReplayScript, onMismatch: (error: AseError) => void): (request: SpawnSupervisedOptions) => Promise<AgentProcess> {
  return async (request) => {
    const relay = await openReplayRelay(script, onMismatch);
    try {
      const proc = await spawnSupervised({ ...request, file: relay.file, args: relay.args, env: { ...request.env, ...relay.env } });
      void proc.exited.then(relay.close, relay.close);
      return proc;
    } catch (error) {
      relay.close();
      throw error;
    }
  };
}
