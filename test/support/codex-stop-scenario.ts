/**
 * A scenario both real-binary Codex engine tests run: stop() while a sandboxed command runs
 * leaves no process behind (codex, its sandbox helper / bwrap, bash, the command), and the turn
 * ends `cancelled` before `exited`.
 */
import { expect } from 'vitest';
import type { AgentEngine } from '../../src/engines/engine.js';
import { execCommandCall } from '../mocks/openai-responses-mock.js';
import type { CodexEngineBench, LaunchedCodexEngine } from './codex-engine-bench.js';
import { processesUnder } from './processes.js';

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
