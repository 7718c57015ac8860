/**
 * TerminalManager (ACP terminal/*): real `sh -c` processes. Every terminal carries a per-test
 * marker in its environment, and after each test /proc must show no live process with it.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AseError } from '../../src/errors.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutputBuffer, TerminalManager, commandLine, completeLength, type TerminalManagerOptions } from '../../src/engines/acp/client-terminal.js';
import { shellQuote } from '../../src/engines/transport/shell-quote.js';
import { buildEnv } from '../../src/engines/transport/env.js';
import { rejection } from '../support/async.js';
import { testRunEnv } from '../support/orphan-check.js';
import { findProcesses, waitUntilNone } from '../support/processes.js';

const MARK_VAR = 'ACP_TERMINAL_TEST_MARK';
let mark: string;
let base: string;
let work: string;
let managers: TerminalManager[];
const sessionId = 'sess-t';

beforeEach(() => {
  mark = randomUUID();
  base = realpathSync(mkdtempSync(join(tmpdir(), 'acp-term-')));
  work = join(base, 'work');
  mkdirSync(join(work, 'sub'), { recursive: true });
  mkdirSync(join(base, 'outside'));
  managers = [];
});

afterEach(async () => {
  await Promise.all(managers.map((m) => m.closeAll()));
  expect(await markedProcessesAfter(2000)).toEqual([]);
  rmSync(base, { recursive: true, force: true });
});

function manager(options: Partial<TerminalManagerOptions> = {}): TerminalManager {
  const m = new TerminalManager({ workDir: work, env: { ...buildEnv(), ...testRunEnv(), [MARK_VAR]: mark }, ...options });
  managers.push(m);
  return m;
}

/** Live (non-zombie) pids whose environment carries this test's marker. */
function markedProcesses(): number[] {
  const needle = `${MARK_VAR}=${mark}`;
  return findProcesses((proc) => {
    if (!proc.environ().split('\0').includes(needle)) return false;
    const stat = proc.stat();
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  });
}

const markedProcessesAfter = (ms: number): Promise<number[]> => waitUntilNone(markedProcesses, ms, 25);

/** Polls output() until `predicate` holds (the process writes asynchronously). */
async function outputWhen(m: TerminalManager, terminalId: string, predicate: (output: string) => boolean, ms = 5000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { output } = await m.output({ sessionId, terminalId });
    if (predicate(output) || Date.now() > deadline) return output;
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function expectRequestError(promise: Promise<unknown>, code: number, message?: RegExp): Promise<void> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(AseError);
  expect(error).toMatchObject({ code: code === -32602 ? 'INVALID_INPUT' : 'ENGINE_ERROR', details: { rpcCode: code } });
  if (message) expect((error as AseError).message).toMatch(message);
}

async function run(m: TerminalManager, params: { command: string; args?: string[]; cwd?: string | null; env?: { name: string; value: string }[]; outputByteLimit?: number | null }) {
  const { terminalId } = await m.create({ sessionId, ...params });
  const exit = await m.waitForExit({ sessionId, terminalId });
  return { terminalId, exit, ...(await m.output({ sessionId, terminalId })) };
}

describe('running commands', () => {
  it('runs the command line with sh -c in the workDir and reports output and exit', async () => {
    const m = manager();
    const result = await run(m, { command: 'echo hello && pwd && echo err >&2 && exit 3' });
    expect(result.exit).toEqual({ exitCode: 3, signal: null });
    expect(result.output).toBe(`hello\n${work}\nerr\n`);
    expect(result.truncated).toBe(false);
    expect(result.exitStatus).toEqual({ exitCode: 3, signal: null });
  });

  it('quotes args so they reach the command verbatim', async () => {
    const m = manager();
    const result = await run(m, { command: 'printf', args: ['%s|', 'a b', "it's", '$HOME', '`id`', ''] });
    expect(result.output).toBe("a b|it's|$HOME|`id`||");
    expect(commandLine('ls', ['-la', 'x y'])).toBe("ls -la 'x y'");
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });

  it('reports output before exit while the command runs, with exitStatus null', async () => {
    const m = manager();
    const { terminalId } = await m.create({ sessionId, command: 'echo started; sleep 300' });
    expect(await outputWhen(m, terminalId, (o) => o.includes('started'))).toBe('started\n');
    expect((await m.output({ sessionId, terminalId })).exitStatus).toBeNull();
    await m.release({ sessionId, terminalId });
  });

  it('collects all output of a fast, large writer before reporting the exit', async () => {
    const m = manager();
    const result = await run(m, { command: 'head -c 300000 /dev/zero | tr "\\0" x; echo; echo end' });
    expect(result.output.length).toBe(300_000 + 1 + 4);
    expect(result.output.endsWith('x\nend\n')).toBe(true);
  });

  it('closes stdin, so a command reading input ends', async () => {
    const m = manager();
    expect((await run(m, { command: 'cat; echo after-cat' })).output).toBe('after-cat\n');
  });
});

describe('cwd confinement', () => {
  it('accepts an absolute cwd inside the root (also through an in-root symlink)', async () => {
    const m = manager();
    expect((await run(m, { command: 'pwd', cwd: join(work, 'sub') })).output).toBe(`${join(work, 'sub')}\n`);
    symlinkSync('sub', join(work, 'sublink'));
    expect((await run(m, { command: 'pwd -P', cwd: join(work, 'sublink') })).output).toBe(`${join(work, 'sub')}\n`);
    expect((await run(m, { command: 'pwd', cwd: null })).output).toBe(`${work}\n`);
  });

  it('refuses a cwd outside, via .., via a symlink, relative, missing or a file (-32602), spawning nothing', async () => {
    const m = manager();
    symlinkSync(join(base, 'outside'), join(work, 'out'));
    writeFileSync(join(work, 'f.txt'), 'x');
    for (const [cwd, message] of [
      [join(base, 'outside'), /outside/],
      [`${work}/..`, /outside/],
      [join(work, 'out'), /outside/],
      ['sub', /must be absolute/],
      [join(work, 'missing'), /does not exist/],
      [join(work, 'f.txt'), /not a directory/],
      ['/', /outside/],
    ] as const) {
      await expectRequestError(m.create({ sessionId, command: 'touch created-by-escape', cwd }), -32602, message);
    }
    expect(m.size).toBe(0);
    expect(readdirSync(join(base, 'outside'))).toEqual([]);
  });

  it('accepts a cwd in an extra root', async () => {
    mkdirSync(join(base, 'extra'));
    const m = manager({ extraRoots: [join(base, 'extra')] });
    expect((await run(m, { command: 'pwd', cwd: join(base, 'extra') })).output).toBe(`${join(base, 'extra')}\n`);
  });
});

describe('environment', () => {
  it('uses only the configured base env plus the request env', async () => {
    process.env.ACP_TERMINAL_HOST_SECRET = 'host-secret';
    try {
      const m = manager({ env: { PATH: '/usr/bin:/bin', ...testRunEnv(), [MARK_VAR]: mark, BASE_ONLY: 'base' } });
      const result = await run(m, {
        command: 'echo "${ACP_TERMINAL_HOST_SECRET-unset} $BASE_ONLY $FROM_AGENT"',
        env: [
          { name: 'FROM_AGENT', value: 'agent value' },
          { name: 'BASE_ONLY', value: 'overridden' },
        ],
      });
      expect(result.output).toBe('unset overridden agent value\n');
    } finally {
      delete process.env.ACP_TERMINAL_HOST_SECRET;
    }
  });

  it('defaults to the allow-listed host variables, never the whole host env', async () => {
    process.env.ACP_TERMINAL_HOST_SECRET = 'host-secret';
    try {
      const m = new TerminalManager({ workDir: work });
      managers.push(m);
      const result = await run(m, { command: 'echo "${ACP_TERMINAL_HOST_SECRET-unset} ${PATH:+has-path}"' });
      expect(result.output).toBe('unset has-path\n');
    } finally {
      delete process.env.ACP_TERMINAL_HOST_SECRET;
    }
  });

  it('refuses malformed env entries, commands and args', async () => {
    const m = manager();
    await expectRequestError(m.create({ sessionId, command: 'true', env: [{ name: 'A=B', value: 'x' }] }), -32602, /env variable name/);
    await expectRequestError(m.create({ sessionId, command: 'true', env: [{ name: 'A', value: 'x\0y' }] }), -32602, /env variable A/);
    await expectRequestError(m.create({ sessionId, command: '  ' }), -32602, /command/);
    await expectRequestError(m.create({ sessionId, command: 'echo', args: ['a\0b'] }), -32602, /args/);
    await expectRequestError(m.create({ sessionId, command: 'echo', outputByteLimit: -1 }), -32602, /outputByteLimit/);
    expect(m.size).toBe(0);
  });
});

describe('output cap', () => {
  it('keeps the last outputByteLimit bytes and flags truncation', async () => {
    const m = manager();
    const result = await run(m, { command: 'printf 0123456789abcdef', outputByteLimit: 10 });
    expect(result.output).toBe('6789abcdef');
    expect(result.truncated).toBe(true);
    const exact = await run(m, { command: 'printf 0123456789', outputByteLimit: 10 });
    expect(exact).toMatchObject({ output: '0123456789', truncated: false });
    const none = await run(m, { command: 'printf abc', outputByteLimit: 0 });
    expect(none).toMatchObject({ output: '', truncated: true });
  });

  it('cuts the front at a UTF-8 character boundary', async () => {
    const m = manager();
    // 'é' is 2 bytes: the last 5 bytes start inside a character, so only 2 characters (4 bytes) remain.
    const result = await run(m, { command: "printf 'ééééé'", outputByteLimit: 5 });
    expect(result).toMatchObject({ output: 'éé', truncated: true });
    const cjk = await run(m, { command: "printf 'a日本語'", outputByteLimit: 7 });
    expect(cjk).toMatchObject({ output: '本語', truncated: true });
  });

  it('uses defaultOutputByteLimit when the request has none', async () => {
    const m = manager({ defaultOutputByteLimit: 4 });
    expect(await run(m, { command: 'printf 123456' })).toMatchObject({ output: '3456', truncated: true });
  });

  it('OutputBuffer holds back an incomplete trailing character until the stream ends', () => {
    const buffer = new OutputBuffer(100);
    const bytes = Buffer.from('aé');
    buffer.append(bytes.subarray(0, 2)); // 'a' + first byte of 'é'
    expect(buffer.snapshot(false)).toEqual({ output: 'a', truncated: false });
    buffer.append(bytes.subarray(2));
    expect(buffer.snapshot(false)).toEqual({ output: 'aé', truncated: false });
    buffer.append(Buffer.from([0xe6])); // a lone lead byte at the very end
    expect(buffer.snapshot(false).output).toBe('aé');
    expect(buffer.snapshot(true).output).toBe('aé\ufffd');
    expect(completeLength(Buffer.from('日本'))).toBe(6);
    expect(completeLength(Buffer.from('日本').subarray(0, 5))).toBe(3);
  });

  it('OutputBuffer bounds what it keeps across many chunks', () => {
    const buffer = new OutputBuffer(8);
    for (let i = 0; i < 1000; i++) buffer.append(Buffer.from(`chunk${i % 10};`));
    expect(buffer.snapshot(true)).toEqual({ output: ';chunk9;', truncated: true });
  });
});

describe('kill, release, wall clock, cap, closeAll', () => {
  it('kill stops the process group, resolves a pending waitForExit and keeps the terminal readable', async () => {
    const m = manager();
    const { terminalId } = await m.create({ sessionId, command: 'echo running; sleep 300 & sleep 300; wait' });
    await outputWhen(m, terminalId, (o) => o.includes('running'));
    expect(markedProcesses().length).toBeGreaterThanOrEqual(2);
    const waiting = m.waitForExit({ sessionId, terminalId });
    const started = Date.now();
    expect(await m.kill({ sessionId, terminalId })).toEqual({});
    expect(await waiting).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(markedProcesses()).toEqual([]);
    expect(await m.output({ sessionId, terminalId })).toEqual({ output: 'running\n', truncated: false, exitStatus: { exitCode: null, signal: 'SIGTERM' } });
    expect(await m.waitForExit({ sessionId, terminalId })).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect(await m.kill({ sessionId, terminalId })).toEqual({}); // idempotent
  });

  it('kill escalates to SIGKILL when the command ignores SIGTERM', async () => {
    const m = manager();
    const { terminalId } = await m.create({ sessionId, command: "trap '' TERM; echo ready; sleep 300" });
    await outputWhen(m, terminalId, (o) => o.includes('ready'));
    await m.kill({ sessionId, terminalId });
    expect((await m.waitForExit({ sessionId, terminalId })).signal).toBe('SIGKILL');
    expect(markedProcesses()).toEqual([]);
  });

  it('kill also reaches a setsid descendant that left the group while the shell runs', async () => {
    const m = manager();
    const { terminalId } = await m.create({ sessionId, command: 'setsid sleep 300 & echo spawned; wait' });
    await outputWhen(m, terminalId, (o) => o.includes('spawned'));
    await new Promise((r) => setTimeout(r, 400)); // > one descendant poll (250 ms)
    await m.kill({ sessionId, terminalId });
    expect(markedProcesses()).toEqual([]);
  });

  it('release kills a running command, resolves pending waits and invalidates the id', async () => {
    const m = manager();
    const { terminalId } = await m.create({ sessionId, command: 'sleep 300' });
    const waiting = m.waitForExit({ sessionId, terminalId });
    expect(await m.release({ sessionId, terminalId })).toEqual({});
    expect((await waiting).exitCode).toBeNull();
    expect(markedProcesses()).toEqual([]);
    expect(m.size).toBe(0);
    await expectRequestError(m.output({ sessionId, terminalId }), -32602, /unknown terminal id/);
    await expectRequestError(m.release({ sessionId, terminalId }), -32602, /unknown terminal id/);
  });

  it('release of an exited command kills background leftovers holding its pipes', async () => {
    const m = manager();
    const { terminalId } = await m.create({ sessionId, command: 'sleep 300 & echo done' });
    expect(await m.waitForExit({ sessionId, terminalId })).toEqual({ exitCode: 0, signal: null });
    expect((await m.output({ sessionId, terminalId })).output).toBe('done\n');
    expect(markedProcesses().length).toBe(1); // the background sleep
    await m.release({ sessionId, terminalId });
    expect(markedProcesses()).toEqual([]);
  });

  it('the wall-clock limit kills the group and says so in the output', async () => {
    const m = manager({ wallClockMs: 300 });
    const started = Date.now();
    const result = await run(m, { command: 'echo begin; sleep 300' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.exit).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect(result.output).toBe('begin\n\n[terminal killed: wall-clock limit of 300 ms reached]\n');
    expect(markedProcesses()).toEqual([]);
  });

  it('a wall-clock limit beyond what a timer can hold (about 24.8 days) means that long, not 1 ms', async () => {
    const m = manager({ wallClockMs: 2 ** 31 });
    const { terminalId } = await m.create({ sessionId, command: 'sleep 0.3; echo finished' });
    expect(await m.waitForExit({ sessionId, terminalId })).toEqual({ exitCode: 0, signal: null });
    expect((await m.output({ sessionId, terminalId })).output).toBe('finished\n');
  });

  it('refuses unknown ids and ids of another session', async () => {
    const m = manager();
    const { terminalId } = await m.create({ sessionId, command: 'true' });
    await expectRequestError(m.output({ sessionId, terminalId: 'term-999' }), -32602, /unknown terminal id term-999/);
    await expectRequestError(m.waitForExit({ sessionId: 'other-session', terminalId }), -32602, /unknown terminal id/);
    await expectRequestError(m.kill({ sessionId: 'other-session', terminalId }), -32602, /unknown terminal id/);
    await m.waitForExit({ sessionId, terminalId });
  });

  it('caps concurrent terminals (created and not released)', async () => {
    const m = manager({ maxTerminals: 2 });
    const a = await m.create({ sessionId, command: 'sleep 300' });
    await m.create({ sessionId, command: 'sleep 300' });
    await expectRequestError(m.create({ sessionId, command: 'sleep 300' }), -32603, /too many terminals: 2/);
    // concurrent creates cannot overshoot the cap either
    await m.release({ sessionId, terminalId: a.terminalId });
    const racing = await Promise.allSettled([m.create({ sessionId, command: 'sleep 300' }), m.create({ sessionId, command: 'sleep 300' })]);
    expect(racing.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(m.size).toBe(2);
  });

  it('closeAll kills every terminal, resolves pending waits, leaves no process and the manager usable', async () => {
    const m = manager();
    const ids = await Promise.all([1, 2, 3].map(() => m.create({ sessionId, command: 'sleep 300' })));
    expect(markedProcesses().length).toBeGreaterThanOrEqual(3); // sh may fork sleep rather than exec it
    const waits = ids.map(({ terminalId }) => m.waitForExit({ sessionId, terminalId }));
    await m.closeAll();
    for (const exit of await Promise.all(waits)) expect(exit.exitCode).toBeNull();
    expect(markedProcesses()).toEqual([]);
    expect(m.size).toBe(0);
    await expectRequestError(m.output({ sessionId, terminalId: ids[0]!.terminalId }), -32602, /unknown terminal id/);
    expect((await run(m, { command: 'echo again' })).output).toBe('again\n');
  });

  it('closeAll during a create stops the terminal being started', async () => {
    const m = manager();
    const creating = m.create({ sessionId, command: 'sleep 300' });
    const closing = m.closeAll();
    await expectRequestError(creating, -32603, /closed while this one was starting/);
    await closing;
    expect(markedProcesses()).toEqual([]);
  });

  it('closeAll while a create checks its cwd stops that terminal too (the engine calls closeAll once, at exit)', async () => {
    const m = manager();
    const creating = m.create({ sessionId, command: 'sleep 300', cwd: join(work, 'sub') });
    const closing = m.closeAll();
    await expectRequestError(creating, -32603, /closed while this one was starting/);
    await closing;
    expect(m.size).toBe(0);
    expect(markedProcesses()).toEqual([]);
  });
});
