/**
 * `createSession()`: takes the session's ownership lease, builds (or, for a stored id, continues) a
 * SessionActor with its runtime, and returns the handle. Continuing a session whose host died
 * reads its transcript too, so the statechart can close what that host left open.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { defaultRegistry } from '../engines/default-registry.js';
import { tierOf } from '../engines/core/runtime-tier.js';
import { EngineRegistry } from '../engines/core/registry.js';
import { HostToolbox } from '../engines/core/host-tools.js';
import { assertRecordable, recordingFactory, TrafficRecorder } from '../engines/core/recorder.js';
import { AseError, toAseError } from '../errors.js';
import { RealClock } from '../effects/clock.js';
import { FileJournal } from '../effects/journal/file-journal.js';
import { reapOrphanedProcesses } from '../effects/process-reaper.js';
import { ProcessRegistry } from '../effects/process-registry.js';
import { journalFacts } from '../effects/journal-facts.js';
import type { TranscriptJournal } from '../effects/journal/transcript-journal.js';
import type { JournalFacts } from '../actors/session-context.js';
import type { PersistedSession } from '../events/session-state.js';
import { SessionRuntime } from '../effects/session-runtime.js';
import { FileStore } from '../effects/store/file-store.js';
import { assertAgentFound, resolveLocator } from './agent-location.js';
import { defaultDataDir, parseSessionOptions, type SessionOptions } from './options.js';
import type { Session } from './session.js';
import { SessionHandle } from './session-handle.js';
import { SessionTerminal } from './session-terminal.js';
import { verifyTurnEntry, type TurnVerifierContext } from './turn-verifier.js';

/** Default `leaseTtlMs`. */
export const DEFAULT_LEASE_TTL_MS = 30_000;

/**
 * Creates (or, when the store holds `sessionId`, continues) a session and starts its engine.
 * Rejects with `SESSION_OWNED` while another live host drives that session.
 *
 * @example
 * const session = await createSession({ agent: 'fake', workDir: process.cwd() });
 * session.on('permission_prompt', (p) => session.decide(p.requestId, 'allow'));
 * await session.send('hello'); // resolves once the message is stored
 */
export async function createSession<A extends string>(options: SessionOptions<A>): Promise<Session> {
  const opts = parseSessionOptions(options);
  if (opts.signal?.aborted) throw new AseError('ABORTED', 'createSession: the signal was already aborted');
  await assertDirectory(opts.workDir);
  const dataDir = opts.dataDir ?? defaultDataDir();
  // What a dead host left running is killed before anything new starts (its agent may be this session's).
  const processDir = path.join(dataDir, 'processes');
  await reapOrphanedProcesses(processDir).catch((error: unknown) => process.emitWarning(`agent-session-engine: reaping ${processDir} failed: ${String(error)}`));
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

  // An engine that cannot offer host tools would run the agent without them, silently: refused.
  if (opts.tools && opts.tools.length > 0 && factory.capabilities.hostTools !== true) {
    throw new AseError('UNSUPPORTED', `createSession: the ${opts.agent} engine cannot offer host tools (tools) to its agent`, { details: { agent: opts.agent } });
  }

  const sessionId = opts.sessionId ?? randomUUID();
  const hostTools = opts.tools && opts.tools.length > 0 ? new HostToolbox(opts.tools, { sessionId, what: 'createSession: tools' }) : undefined;
  // A continued session runs the agent it was created with (its stored bin and locating options),
  // unless this call names another. A missing agent fails here, before anything is stored.
  const known = opts.sessionId !== undefined ? await store.load(sessionId) : undefined;
  const launch = resolveLocator(opts, known?.state.agent === opts.agent ? known.state.agentLocator : undefined);
  try {
    await assertAgentFound(factory, launch);
  } catch (error) {
    throw toAseError(error, 'INVALID_OPTIONS');
  }
  // Recording wraps this session's engine factory (in a registry of its own: the caller's is not changed).
  let recorder: TrafficRecorder | undefined;
  let engines = registry;
  if (opts.record !== undefined) {
    assertRecordable(factory);
    const target = typeof opts.record === 'object' && 'to' in opts.record ? opts.record : { to: opts.record };
    recorder = new TrafficRecorder(target.to, {
      agent: opts.agent,
      workDir: path.resolve(opts.workDir),
      engineOptions: launch.engineOptions,
      sessionId,
      ...('argv' in target && target.argv && { argv: target.argv }),
    });
    try {
      engines = new EngineRegistry();
      for (const name of registry.names()) engines.register(registry.get(name));
      engines.register(recordingFactory(factory, recorder));
    } catch (error) {
      recorder.close();
      throw error;
    }
  }
  // One host drives a session at a time: the lease comes first, so two hosts never both load and run it.
  const lease = await store.acquire(sessionId, { ttlMs: opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS, ...(opts.takeOver && { force: true }) }).catch((error: unknown) => {
    recorder?.close();
    throw error;
  });
  let runtime: SessionRuntime;
  const terminal = new SessionTerminal();
  try {
    const restored = await store.load(sessionId);
    if (restored && restored.state.sessionId !== sessionId) {
      // A custom store may not check this itself: adopting another session's state would take its agent.
      throw new AseError('STORE_CORRUPT', `createSession: the store returned session "${restored.state.sessionId}" for "${sessionId}"`);
    }
    // A resume token belongs to one agent in one directory: never hand it to another.
    if (restored && (restored.state.agent !== opts.agent || restored.state.workDir !== path.resolve(opts.workDir))) {
      throw new AseError(
        'INVALID_OPTIONS',
        `createSession: session "${sessionId}" belongs to agent "${restored.state.agent}" in ${restored.state.workDir}, not "${opts.agent}" in ${path.resolve(opts.workDir)}`,
      );
    }
    if (restored) assertSameParent(sessionId, restored.state, opts);
    const facts = restored ? await crashFacts(journal, restored.state) : undefined;
    // Aborted while loading: the 'abort' event has fired already, so a listener added below would never run.
    if (opts.signal?.aborted) throw new AseError('ABORTED', 'createSession: the signal was aborted while the session was loading');
    runtime = new SessionRuntime({
      input: {
        sessionId,
        instance: randomUUID().slice(0, 8),
        agent: opts.agent,
        workDir: path.resolve(opts.workDir),
        ...(opts.parentId !== undefined && { parentId: opts.parentId }),
        ...(opts.parentCallId !== undefined && { parentCallId: opts.parentCallId }),
        mode: opts.mode,
        now: clock.now(),
        ...(Object.keys(launch.engineOptions).length > 0 && { options: launch.engineOptions }),
        ...(launch.locator && { agentLocator: launch.locator }),
        ...(opts.config && { config: opts.config }),
        ...(restored && { restored }),
        ...(facts && { journal: facts }),
      },
      registry: engines,
      clock,
      store,
      journal,
      lease,
      ...(launch.bin !== undefined && { bin: launch.bin }),
      ...(opts.maxMessageBytes !== undefined && { maxMessageBytes: opts.maxMessageBytes }),
      processes: new ProcessRegistry({ dir: processDir }).observer(sessionId),
      terminal,
      ...(hostTools && { hostTools }),
      ...(opts.inspect && { inspect: opts.inspect }),
    });
  } catch (error) {
    await store.release(lease).catch(() => undefined);
    recorder?.close();
    throw error;
  }
  const session = new SessionHandle(sessionId, runtime, terminal);
  if (recorder) {
    const close = () => recorder.close();
    void session.done.then(close, close);
  }
  if (opts.onNotice) session.on('*', opts.onNotice);
  if (opts.canUseTool) session.setPermissionPolicy(opts.canUseTool);
  if (opts.verifyTurn) {
    const context: TurnVerifierContext = {
      sessionId,
      agent: opts.agent,
      workDir: path.resolve(opts.workDir),
      tier: tierOf(factory.capabilities),
      verify: opts.verifyTurn,
      record: async (input) => {
        if (!runtime.isDone) await runtime.apply(input);
      },
    };
    session.on('transcript', ({ entry }) => {
      void verifyTurnEntry(entry, context).catch((error: unknown) => process.emitWarning(`agent-session-engine: recording a turn verdict failed: ${String(error)}`));
    });
  }
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

/**
 * A session that did not reach `stopped` ended with its host: its journal may know more than its
 * state (see journalFacts). A journal that cannot be read does not block the restore: the turn in
 * flight is then ended without its help.
 */
async function crashFacts(journal: TranscriptJournal, state: PersistedSession): Promise<JournalFacts | undefined> {
  if (state.phase === 'stopped') return undefined;
  try {
    return journalFacts(await journal.read(state.sessionId), state);
  } catch (error) {
    process.emitWarning(`agent-session-engine: reading the transcript of ${state.sessionId} for recovery failed: ${String(error)}`);
    return undefined;
  }
}

/**
 * A session's parent is fixed when it is created: continuing it may leave `parentId` out (the stored
 * one stays) or repeat it, but not name another (that would move it to another tree).
 */
function assertSameParent(sessionId: string, state: PersistedSession, opts: { parentId?: string; parentCallId?: string }): void {
  const differs = (asked: string | undefined, stored: string | undefined) => asked !== undefined && asked !== stored;
  if (differs(opts.parentId, state.parentId) || differs(opts.parentCallId, state.parentCallId)) {
    const was = state.parentId === undefined ? 'no parent' : `parent "${state.parentId}"${state.parentCallId !== undefined ? ` (call ${state.parentCallId})` : ''}`;
    throw new AseError('INVALID_OPTIONS', `createSession: session "${sessionId}" was created with ${was}; its parent cannot change`, {
      details: { sessionId, parentId: state.parentId ?? null, askedParentId: opts.parentId ?? null },
    });
  }
}

/**
 * The agent runs in `workDir`: a missing one would otherwise surface later as the agent binary's
 * `spawn ... ENOENT`, blaming the wrong thing, after state was already written.
 */
async function assertDirectory(workDir: string): Promise<void> {
  const resolved = path.resolve(workDir);
  let stat;
  try {
    stat = await fs.stat(resolved);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'ENOTDIR' ? 'does not exist (a part of the path is a file)' : `cannot be read (${code ?? String(error)})`;
    throw new AseError('INVALID_OPTIONS', `createSession: workDir: ${resolved} ${why}`, { cause: error, details: { workDir: resolved } });
  }
  if (!stat.isDirectory()) {
    const what = stat.isFile() ? 'is a file, not a directory' : 'is not a directory';
    throw new AseError('INVALID_OPTIONS', `createSession: workDir: ${resolved} ${what}`, { details: { workDir: resolved } });
  }
}
