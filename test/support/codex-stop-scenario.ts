/**
 * Scenarios both real-binary Codex engine tests run: stop() while a sandboxed command runs
 * leaves no process behind (codex, its sandbox helper / bwrap, bash, the command), and the turn
 * ends `cancelled` before `exited`; codex dying by itself during a command leaves nothing either.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { AgentEngine } from '../../src/engines/core/engine.js';
import { execCommandCall } from '../mocks/openai-responses-mock.js';
import type { CodexEngineBench, LaunchedCodexEngine } from './codex-engine-bench.js';
import { processesUnder, waitUntilNone } from './processes.js';

/** `launched` must run with approvalPolicy 'never' (the command starts without a prompt); `label` prefixes the timing line. */
export async function stopDuringCommand<E extends AgentEngine & { stop(): Promise<void> }>(bench: CodexEngineBench<E>, launched: LaunchedCodexEngine<E>, label: string): Promise<void> {
  const { engine, log } = launched;
  const { mock, root } = bench;
  await log.waitFor('ready');
  mock.enqueue(execCommandCall('sleep 30; echo finished'));
  await engine.send({ localId: 'm1', text: 'sleep a while' });
  await log.waitFor('tool_call');
  // The command runs: codex plus its sandbox helper / bwrap / bash / sleep, all carrying our root.
  const deadline = Date.now() + 5_000;
  while (processesUnder(root).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const running = processesUnder(root);
  expect(running.length).toBeGreaterThanOrEqual(3);
  const t = performance.now();
  await engine.stop();
  const stopMs = Math.round(performance.now() - t);
  expect(log.of('turn_complete')).toEqual([expect.objectContaining({ status: 'cancelled' })]);
  expect(log.events.at(-1)).toMatchObject({ type: 'exited', reason: 'stopped' });
  expect(processesUnder(root)).toEqual([]);
  console.log(`[${label}] stop during a command: ${stopMs} ms (${running.length} processes before)`);
}

/**
 * The codex process dies on its own (SIGKILL of that one pid, as an OOM kill would) while an
 * unsandboxed command runs: the command is in a process group of its own and outlives codex, so
 * the engine must take it down itself. `launched` must run with approvalPolicy 'never' and
 * sandbox 'danger-full-access' (a bubblewrap sandbox would take the command with it).
 */
export async function codexDiesDuringCommand<E extends AgentEngine & { stop(): Promise<void>; readonly pid: number | undefined }>(
  bench: CodexEngineBench<E>,
  launched: LaunchedCodexEngine<E>,
): Promise<void> {
  const { engine, log } = launched;
  const { mock, root } = bench;
  await log.waitFor('ready');
  mock.enqueue(execCommandCall('sleep 30; echo finished'));
  await engine.send({ localId: 'm1', text: 'sleep a while' });
  await log.waitFor('tool_call');
  const isSleep = (pid: number): boolean => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0');
  const sleeping = (): number[] => processesUnder(root).filter((pid) => { try { return isSleep(pid); } catch { return false; } });
  const deadline = Date.now() + 5_000;
  while (sleeping().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(sleeping()).toHaveLength(1);
  // The supervisor collects descendants every 250 ms (a command that setsids and is orphaned
  // within one poll can escape: its documented limit); the crash comes after the next poll.
  await new Promise((r) => setTimeout(r, 400));
  process.kill(engine.pid!, 'SIGKILL');
  expect(await log.waitFor('exited')).toMatchObject({ signal: 'SIGKILL', reason: 'process exited' });
  // Without stop(): the engine reaps what codex left behind by itself.
  expect(await waitUntilNone(() => processesUnder(root), 8_000, 50)).toEqual([]);
  await engine.stop();
  expect(processesUnder(root)).toEqual([]);
}
