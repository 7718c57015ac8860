/**
 * `ase run`: one prompt, one turn, through a real session (SessionActor + runtime + engine).
 * Streams readable output (or NDJSON AgentEvents with --json) and asks y/n on permission requests.
 */
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { AseError, createSession, defaultRegistry, fakeEngine, FakeScriptSchema, type ControlMode, type FakeScript, type SessionNotice } from '../index.js';
import { NoticeRenderer, yellow, type Output } from './render.js';

export interface RunArgs {
  agent: string;
  prompt: string;
  bin?: string;
  mode: ControlMode;
  cwd: string;
  json: boolean;
  permission: 'ask' | 'allow' | 'deny';
  env: Record<string, string>;
  /** Engine options (`--option`), passed with `env` as the session's `engineOptions`. */
  options: Record<string, unknown>;
  dataDir?: string;
  /** A JSON FakeScript for the fake engine. */
  script?: string;
  interactive: boolean;
}

export async function runPrompt(args: RunArgs, output: Output): Promise<number> {
  const registry = defaultRegistry();
  if (args.script !== undefined) registry.register(fakeEngine(await loadScript(args.script)));
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
    agent: args.agent,
    workDir: args.cwd,
    mode: args.mode,
    registry,
    signal: stopSignal.signal,
    ...(args.bin !== undefined && { bin: args.bin }),
    ...(args.dataDir !== undefined && { dataDir: args.dataDir }),
    ...((Object.keys(args.env).length > 0 || Object.keys(args.options).length > 0) && {
      engineOptions: { ...args.options, ...(Object.keys(args.env).length > 0 && { env: args.env }) },
    }),
  });

  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts === 1) {
      try {
        session.abort();
        return;
      } catch {
        // Nothing running: stop instead.
      }
    }
    stopSignal.abort();
  };
  process.on('SIGINT', onSigint);

  let exitCode = 0;
  let turnEnded = false;
  let localId = '';
  const asking: Promise<void>[] = [];
  const finishWith = (code: number) => {
    exitCode = Math.max(exitCode, code);
    void session.stop();
  };

  session.on('*', (notice: SessionNotice) => {
    if (notice.type === 'permission_prompt') asking.push(answer(notice));
    // `turn_ended`: the engine went away mid-turn; the message is not re-sent (at most once).
    if (notice.type === 'transcript' && (notice.entry.type === 'turn_complete' || notice.entry.type === 'turn_ended')) {
      const payload = notice.entry.payload as { localId?: string; status?: string };
      if (payload.localId === localId) {
        turnEnded = true;
        finishWith(payload.status === 'completed' ? 0 : 1);
      }
    }
    if (notice.type === 'status' && notice.phase === 'failed') finishWith(1);
  });

  async function answer(prompt: Extract<SessionNotice, { type: 'permission_prompt' }>): Promise<void> {
    let decision: 'allow' | 'deny' = args.permission === 'allow' ? 'allow' : 'deny';
    if (args.permission === 'ask') {
      if (args.interactive) {
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        const reply = await rl.question(yellow(`Allow ${prompt.tool} ${JSON.stringify(prompt.input)}? [y/N] `));
        rl.close();
        decision = /^y(es)?$/i.test(reply.trim()) ? 'allow' : 'deny';
      } else {
        output.err(yellow(`permission ${prompt.requestId} (${prompt.tool}) denied: not interactive; pass --yes to allow\n`));
      }
    }
    try {
      session.decide(prompt.requestId, decision, decision === 'deny' ? { message: 'Denied by the ase user.' } : {});
    } catch (error) {
      // It may have ended meanwhile (deadline, abort); the session already reported that.
      if (!(error instanceof AseError)) throw error;
    }
  }

  try {
    localId = session.send(args.prompt).localId;
    await session.done;
    await Promise.allSettled(asking);
    if (!turnEnded) exitCode = 1; // The session ended before the turn did (failed, stopped, or Ctrl-C).
  } finally {
    process.off('SIGINT', onSigint);
  }
  return exitCode;
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
