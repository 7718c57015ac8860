/**
 * Where a session's agent CLI is, end to end with the real engines and the pinned CLIs:
 * - a missing agent rejects `createSession` with AGENT_NOT_FOUND naming the places looked, and
 *   nothing is stored (fail fast, instead of a session whose turns fail later);
 * - an agent that vanishes after the session was created fails the session, and `run()` reports
 *   the root cause's code (AGENT_NOT_FOUND), never a SESSION_FAILED wrapping itself;
 * - a session remembers its `bin`, so opening it after a restart runs the same agent, and a stored
 *   bin that is gone is refused at open with nothing changed;
 * - one AbortSignal given to `createSession` and `run()` makes `run()` reject, not resolve.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeEngine, createSession, createSupervisor, MemoryJournal, MemoryStore, type EngineFactory } from '../../src/index.js';
import { claudeBinary } from '../support/claude-hermetic.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'ase-agent-location-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A wrapper of the pinned Claude Code that notes each start (its arguments) in `log`, then runs it. */
function wrapper(name: string, log: string): string {
  const file = path.join(root, name);
  writeFileSync(file, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${claudeBinary()}' "$@"\n`);
  chmodSync(file, 0o755);
  return file;
}

const starts = (log: string): string[] => {
  try {
    return readFileSync(log, 'utf8').split('\n').filter((line) => line !== '' && !line.includes('--version'));
  } catch {
    return [];
  }
};

async function until(predicate: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('fail fast', () => {
  it('an agent that is nowhere: createSession rejects AGENT_NOT_FOUND naming the four places, and nothing is stored', async () => {
    const store = new MemoryStore();
    const journal = new MemoryJournal();
    // claude-agent-acp is an ACP preset whose package this repository does not install.
    const error = await createSession({ agent: 'acp', engineOptions: { preset: 'claude-agent-acp' }, workDir: root, store, journal, sessionId: 'nowhere' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'AGENT_NOT_FOUND', details: { agent: 'claude-agent-acp' } });
    const looked = (error as { details: { looked: string[] } }).details.looked;
    expect(looked).toHaveLength(4);
    expect(looked[0]).toBe('bin option: not given');
    expect(looked[1]).toBe('ASE_CLAUDE_AGENT_ACP_BIN: not set');
    expect(looked[2]).toMatch(/^PATH: no "claude-agent-acp" in \d+ director/);
    expect(looked[3]).toBe('npm package: @zed-industries/claude-agent-acp not installed');
    expect(await store.list()).toEqual([]);
    expect(await store.load('nowhere')).toBeUndefined();
    expect(await journal.read('nowhere')).toEqual([]);
  });

  it('a bin that names nothing, on the file store: AGENT_NOT_FOUND, and the data dir holds no session', async () => {
    const dataDir = path.join(root, 'data');
    const missing = path.join(root, 'no-such-claude');
    await expect(createSession({ agent: 'claude', workDir: root, dataDir, bin: missing })).rejects.toMatchObject({
      code: 'AGENT_NOT_FOUND',
      details: { agent: 'claude', looked: [`bin option: ${missing} (no such executable file)`] },
    });
    const sessions = await fs.readdir(path.join(dataDir, 'sessions')).catch(() => []);
    expect(sessions).toEqual([]);
  });

  it('an agent that vanishes after createSession: run() gives AGENT_NOT_FOUND, not SESSION_FAILED around SESSION_FAILED', async () => {
    const missing = path.join(root, 'gone-claude');
    // The real claude engine without its createSession check: its own start finds nothing, as
    // when the CLI is uninstalled between createSession and the (re)start.
    const { locateAgent: _skip, ...unchecked } = claudeEngine();
    const late: EngineFactory = unchecked;
    const session = await createSession({ agent: 'claude', workDir: root, store: new MemoryStore(), journal: new MemoryJournal(), engines: [late], bin: missing });
    const turn = await session.run('hello');
    expect(turn.status).toBe('failed');
    expect(turn.error).toMatchObject({ code: 'AGENT_NOT_FOUND' });
    expect(turn.error!.message).toContain(missing);
    // What failed the session is kept, once: the cause is the SESSION_FAILED report, whose cause is the engine's error.
    const cause = turn.error!.cause as { code?: string; cause?: { code?: string } } | undefined;
    expect(cause?.code).toBe('SESSION_FAILED');
    expect(cause?.cause?.code).toBe('AGENT_NOT_FOUND');
    // A second run on the failed session says the same.
    const again = await session.run('still there?');
    expect(again).toMatchObject({ status: 'failed', error: { code: 'AGENT_NOT_FOUND' } });
    await session.stop();
  }, 60_000);
});

describe('stored binaries', () => {
  it('open(id) after a restart runs the bin the session was created with; a stored bin that is gone is refused, nothing changed', async () => {
    const dataDir = path.join(root, 'data');
    const log = path.join(root, 'starts.log');
    const bin = wrapper('my-claude', log);
    const first = createSupervisor({ dataDir });
    const session = await first.create({ agent: 'claude', workDir: root, bin, sessionId: 'kept' });
    await until(() => starts(log).length === 1, 'the first start of the wrapper');
    await first.shutdown();

    // Another host (a restart): nothing names the bin now; the pinned CLI is on ASE_CLAUDE_BIN.
    const second = createSupervisor({ dataDir });
    const reopened = await second.open('kept');
    await until(() => starts(log).length === 2, 'the wrapper to run again after open()');
    expect(reopened.id).toBe(session.id);
    await second.shutdown();

    rmSync(bin);
    const stateFile = path.join(dataDir, 'sessions', 'kept.json');
    const before = readFileSync(stateFile, 'utf8');
    const third = createSupervisor({ dataDir });
    await expect(third.open('kept')).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND', details: { looked: [`bin option: ${bin} (no such executable file)`] } });
    expect(readFileSync(stateFile, 'utf8')).toBe(before);
    await third.shutdown();
  }, 120_000);
});

describe('a supervisor`s bins (ase serve --bin AGENT=PATH)', () => {
  it('a create() that names no bin runs the one given for its engine; one that names a bin keeps its own', async () => {
    const missing = path.join(root, 'ops-claude');
    const supervisor = createSupervisor({ dataDir: path.join(root, 'data'), bins: { claude: missing } });
    await expect(supervisor.create({ agent: 'claude', workDir: root })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND', details: { looked: [`bin option: ${missing} (no such executable file)`] } });
    const own = path.join(root, 'own-claude');
    await expect(supervisor.create({ agent: 'claude', workDir: root, bin: own })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND', details: { looked: [`bin option: ${own} (no such executable file)`] } });
    await supervisor.shutdown();
  });
});

describe('one signal for createSession and run()', () => {
  it('aborting it rejects run() with ABORTED (the session stops too)', async () => {
    const controller = new AbortController();
    const session = await createSession({
      agent: 'fake',
      workDir: root,
      store: new MemoryStore(),
      journal: new MemoryJournal(),
      signal: controller.signal,
      engines: [],
    });
    const turn = session.run('hello', { signal: controller.signal });
    controller.abort();
    await expect(turn).rejects.toMatchObject({ code: 'ABORTED', name: 'AbortError' });
    expect((await session.done).phase).toBe('stopped');
  });
});
