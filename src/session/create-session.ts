/** `createSession()`: builds (or, for a stored id, continues) a SessionActor with its runtime and returns the handle. */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { defaultRegistry } from '../engines/default-registry.js';
import { AseError, toAseError } from '../errors.js';
import { RealClock } from '../runtime/clock.js';
import { FileJournal } from '../runtime/journal/file-journal.js';
import { SessionRuntime } from '../runtime/session-runtime.js';
import { FileStore } from '../runtime/store/file-store.js';
import { defaultDataDir, parseSessionOptions, type SessionOptions } from './options.js';
import type { Session } from './session.js';
import { SessionHandle } from './session-handle.js';

/**
 * Creates (or, when the store holds `sessionId`, continues) a session and starts its engine.
 *
 * @example
 * const session = await createSession({ agent: 'fake', workDir: process.cwd() });
 * session.on('permission_prompt', (p) => session.decide(p.requestId, 'allow'));
 * session.send('hello');
 */
export async function createSession(options: SessionOptions): Promise<Session> {
  const opts = parseSessionOptions(options);
  if (opts.signal?.aborted) throw new AseError('ABORTED', 'createSession: the signal was already aborted');
  const dataDir = opts.dataDir ?? defaultDataDir();
  const store = opts.store ?? new FileStore({ dir: path.join(dataDir, 'sessions') });
  const journal = opts.journal ?? new FileJournal({ dir: path.join(dataDir, 'transcripts') });
  const clock = opts.clock ?? new RealClock();
  const registry = opts.registry ?? defaultRegistry();
  for (const factory of opts.engines ?? []) registry.register(factory);
  // Unknown engine names fail here, with the known names listed; so do engine options the engine
  // does not know (or that have the wrong type), before anything is stored or started.
  const factory = registry.get(opts.agent);
  try {
    factory.validateOptions?.(opts.engineOptions ?? {});
  } catch (error) {
    throw toAseError(error, 'INVALID_OPTIONS');
  }

  const sessionId = opts.sessionId ?? randomUUID();
  const restored = await store.load(sessionId);
  // A resume token belongs to one agent in one directory: never hand it to another.
  if (restored && (restored.state.agent !== opts.agent || restored.state.workDir !== path.resolve(opts.workDir))) {
    throw new AseError(
      'INVALID_OPTIONS',
      `createSession: session "${sessionId}" belongs to agent "${restored.state.agent}" in ${restored.state.workDir}, not "${opts.agent}" in ${path.resolve(opts.workDir)}`,
    );
  }
  // Aborted while loading: the 'abort' event has fired already, so a listener added below would never run.
  if (opts.signal?.aborted) throw new AseError('ABORTED', 'createSession: the signal was aborted while the session was loading');
  const runtime = new SessionRuntime({
    input: {
      sessionId,
      instance: randomUUID().slice(0, 8),
      agent: opts.agent,
      workDir: path.resolve(opts.workDir),
      mode: opts.mode,
      now: clock.now(),
      ...(opts.engineOptions && { options: opts.engineOptions }),
      ...(opts.config && { config: opts.config }),
      ...(restored && { restored }),
    },
    registry,
    clock,
    store,
    journal,
    ...(opts.bin !== undefined && { bin: opts.bin }),
  });
  const session = new SessionHandle(sessionId, runtime);
  if (opts.onNotice) session.on('*', opts.onNotice);
  // A journal this call created is this session's to close; a caller's journal stays open.
  if (!opts.journal) {
    void session.done
      .then(() => journal.close?.())
      .catch((error: unknown) => process.emitWarning(`agent-session-engine: closing the transcript journal failed: ${String(error)}`));
  }
  if (opts.signal) {
    const onAbort = () => void session.stop();
    opts.signal.addEventListener('abort', onAbort, { once: true });
    void session.done.finally(() => opts.signal?.removeEventListener('abort', onAbort));
  }
  runtime.start();
  return session;
}
