/**
 * `ase run`: one prompt, one turn, through a real session (SessionActor + runtime + engine), new or
 * continued (`--session-id`). Prints the session id on stderr, streams readable output (or NDJSON
 * AgentEvents with --json), asks y/n on permission requests, and exits with the turn's outcome.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  AseError,
  createSession,
  defaultRegistry,
  fakeEngine,
  FakeScriptSchema,
  FileStore,
  isAseError,
  type ControlMode,
  type EngineFactory,
  type FakeScript,
  type NoticeOf,
  type SessionNotice,
} from '../index.js';
import { findLiveServer } from './serve-file.js';
import { runThroughServer } from './run-through-server.js';
import { assertDirectory } from './data-dir.js';
import { permissionDecision } from './permission-decision.js';
import { NoticeRenderer, type Output } from './render.js';
import type { RunArgs } from './run-args.js';

export async function runPrompt(args: RunArgs, output: Output): Promise<number> {
  let { agent, cwd } = args;
  if (args.sessionId !== undefined) {
    // Continuing: the stored session says which agent in which directory, unless given (and then they must match).
    const stored = await new FileStore({ dir: path.join(args.dataDir, 'sessions') }).load(args.sessionId);
    if (!stored) throw new AseError('INVALID_OPTIONS', `--session-id ${args.sessionId}: no such session under ${args.dataDir} (\`ase sessions\` lists them)`);
    // The data dir's sessions are the running server's: a second host would fight it for the lease,
    // so the message goes through the server (run-through-server.ts).
    const server = args.noServer ? undefined : await findLiveServer(args.dataDir);
    if (server) return runThroughServer({ ...args, sessionId: args.sessionId }, server, output);
    agent ??= stored.state.agent;
    cwd ??= stored.state.workDir;
  }
  if (agent === undefined) throw new AseError('INVALID_OPTIONS', '--agent is required');
  const workDir = path.resolve(cwd ?? process.cwd());
  await assertDirectory(workDir, '--cwd');

  const registry = defaultRegistry();
  if (args.script !== undefined) registry.register(fakeEngine(await loadScript(args.script)));
  if (args.engine) registry.register(args.engine);
  const stopSignal = new AbortController();
  const renderer = new NoticeRenderer(output);
  // Printing starts with the notices emitted while the session is created (its first status).
  const print = (notice: SessionNotice) => {
    if (!args.json) renderer.render(notice);
    else if (notice.type === 'agent') output.out(`${JSON.stringify(notice.event)}\n`);
    else if (notice.type === 'error') output.err(`${notice.error.code}: ${notice.error.message}\n`);
  };
  const session = await createSession({
    onNotice: print,
    agent,
    workDir,
    mode: args.mode,
    registry,
    signal: stopSignal.signal,
    dataDir: args.dataDir,
    ...(args.sessionId !== undefined && { sessionId: args.sessionId }),
    ...(args.bin !== undefined && { bin: args.bin }),
    ...(args.record !== undefined && { record: { to: args.record, argv: args.argv ?? [] } }),
    ...((Object.keys(args.env).length > 0 || Object.keys(args.options).length > 0) && {
      engineOptions: { ...args.options, ...(Object.keys(args.env).length > 0 && { env: args.env }) },
    }),
  });
  // The one line a script needs to continue this session later (`ase run --session-id <id> ...`).
  output.err(`session ${session.id}\n`);

  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts === 1) {
      try {
        // A promise (once inputs are acknowledged when durable) or nothing: a refusal means no turn runs yet.
        const aborted: unknown = session.abort();
        if (aborted instanceof Promise) aborted.catch(() => stopSignal.abort());
        return;
      } catch {
        // Nothing running: stop instead.
      }
    }
    stopSignal.abort();
  };
  process.on('SIGINT', onSigint);

  const asking: Promise<void>[] = [];
  session.on('permission_prompt', (prompt) => asking.push(answer(prompt)));

  async function answer(prompt: NoticeOf<'permission_prompt'>): Promise<void> {
    // Awaited even when the answer is known, so it is given outside the listener and a refusal is thrown to us.
    const decision = await permissionDecision(prompt, args, output);
    try {
      await session.decide(prompt.requestId, decision, decision === 'deny' ? { message: 'Denied by the ase user.' } : {});
    } catch (error) {
      // It may have ended meanwhile (deadline, abort); the session already reported that.
      if (!isAseError(error)) throw error;
    }
  }

  try {
    // `turn_ended` (the engine went away mid-turn) resolves it too: the message is not re-sent (at most once).
    const result = await session.run(args.prompt).catch((error: unknown) => {
      if (!isAseError(error)) throw error;
      output.err(`${error.code}: ${error.message}\n`);
      return undefined;
    });
    await session.stop();
    await Promise.allSettled(asking);
    return result?.status === 'completed' ? 0 : 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** Reads a `--script` file; a missing file or bad JSON is reported like a bad script, in one line. */
async function loadScript(file: string): Promise<FakeScript> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new AseError('INVALID_OPTIONS', `--script ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const parsed = FakeScriptSchema.safeParse(data);
  if (!parsed.success) throw new AseError('INVALID_OPTIONS', `--script ${file}: ${parsed.error.message}`);
  return parsed.data;
}
